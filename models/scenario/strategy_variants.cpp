#include "models/scenario/strategy_variants.hpp"

#include <algorithm>
#include <map>

#include "models/scenario/resolve.hpp"

namespace gpumux {
namespace {

SharingMode parse_mode(const std::string& text, const std::string& strategy) {
  if (text == "time-slicing") return SharingMode::time_slicing;
  if (text == "mps") return SharingMode::mps;
  if (text == "exclusive") return SharingMode::exclusive;
  throw InputError(SourceLocation{"--strategies", 0, 0, ""},
                   "unknown sharing mode '" + text + "' in strategy '" + strategy +
                       "' (use exclusive, time-slicing or mps)");
}

std::string gpu_of(const std::string& device) {
  const auto slash = device.find('/');
  return slash == std::string::npos ? device : device.substr(0, slash);
}

// Copies one `sharing:` key from `from` to `to`; false for a key this function does not know.
bool copy_sharing_key(const std::string& key, const SharingSpec& from, SharingSpec& to) {
  if (key == "replicas") to.replicas = from.replicas;
  else if (key == "timeslice") to.timeslice = from.timeslice;
  else if (key == "context_switch") to.context_switch = from.context_switch;
  else if (key == "preemption") to.preemption = from.preemption;
  else if (key == "preemption_latency") to.preemption_latency = from.preemption_latency;
  else if (key == "cache_refill") to.cache_refill = from.cache_refill;
  else if (key == "active_thread_percentage") to.active_thread_percentage = from.active_thread_percentage;
  else if (key == "pinned_memory_limit") to.pinned_memory_limit = from.pinned_memory_limit;
  else if (key == "max_clients") to.max_clients = from.max_clients;
  else if (key == "cuda_version") to.cuda_version = from.cuda_version;
  else return false;
  return true;
}

// `--set` overrides are applied to the file before the variant is built, so a strategy that
// rebuilds a GPU's `sharing:` (mps, time-slicing, dedicated, mig+MODE) would drop them. This
// re-applies every `gpus.N.sharing.KEY` the overrides wrote (the loader records their location
// as "--set") to the variant's GPUs that come from `gpus.N`. A `mode` that differs from the
// strategy's, or a key it cannot carry over, is refused: one InputError naming the key.
void keep_sharing_overrides(const Scenario& original, Scenario& variant,
                            const std::string& strategy) {
  // The dedicated baseline gives each tenant a new, unshared GPU: sharing keys do not apply.
  if (strategy == "exclusive" || strategy == "dedicated") return;
  for (const auto& [path, where] : original.locations) {
    if (where.file != "--set") continue;
    const std::string::size_type marker = path.find(".sharing.");
    if (path.rfind("gpus.", 0) != 0 || marker == std::string::npos) continue;
    const std::string gpu_path = path.substr(0, marker);  // "gpus.N" as written
    const std::string key = path.substr(marker + 9);
    if (key.find('.') != std::string::npos) continue;
    const GpuSpec* from = nullptr;
    for (const GpuSpec& g : original.gpus) {
      if (g.where.key_path == gpu_path) {
        from = &g;
        break;
      }
    }
    if (from == nullptr) continue;
    for (GpuSpec& to : variant.gpus) {
      if (to.where.key_path != gpu_path) continue;
      if (key == "mode") {
        if (to.sharing.mode != from->sharing.mode) {
          throw InputError(where, std::string("strategy '") + strategy + "' shares " + to.name +
                                      " by " + sharing_mode_name(to.sharing.mode) +
                                      ", not " + sharing_mode_name(from->sharing.mode) +
                                      "; name the mode in --strategies instead of --set");
        }
        continue;
      }
      if (!copy_sharing_key(key, from->sharing, to.sharing)) {
        throw InputError(where, "cannot carry this override over to strategy '" + strategy +
                                    "'; compare 'as-is' with it, or run it with `gpumux run`");
      }
    }
  }
}

Scenario build_variant(const Scenario& original, const std::string& strategy);

}  // namespace

std::vector<std::string> parse_strategy_list(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    const auto b = current.find_first_not_of(' ');
    const auto e = current.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(current.substr(b, e - b + 1));
    current.clear();
  };
  for (char c : text) {
    if (c == ',') {
      flush();
    } else {
      current += c;
    }
  }
  flush();
  if (out.empty()) {
    throw InputError(SourceLocation{"--strategies", 0, 0, ""}, "no strategy given");
  }
  return out;
}

Scenario apply_strategy(const Scenario& original, const std::string& strategy) {
  Scenario s = build_variant(original, strategy);
  keep_sharing_overrides(original, s, strategy);
  return s;
}

namespace {

Scenario build_variant(const Scenario& original, const std::string& strategy) {
  Scenario s = original;
  if (strategy == "as-is") return s;
  if (strategy == "time-slicing" || strategy == "mps") {
    const SharingMode mode = parse_mode(strategy, strategy);
    for (GpuSpec& gpu : s.gpus) {
      gpu.mig.clear();
      gpu.mig_layout_name.clear();
      const SharingSpec old = gpu.sharing;
      gpu.sharing = SharingSpec{};
      gpu.sharing.mode = mode;
      // Keep the explicitly tuned knobs of the same mode.
      if (old.mode == mode) gpu.sharing = old;
      gpu.sharing.replicas = 0;
    }
    for (TenantSpec& t : s.tenants) {
      std::vector<std::string> collapsed;
      for (const std::string& d : t.devices) {
        const std::string gpu = gpu_of(d);
        if (std::find(collapsed.begin(), collapsed.end(), gpu) == collapsed.end()) {
          collapsed.push_back(gpu);
        }
      }
      t.devices = collapsed;
      t.device = gpu_of(t.device);
    }
    return s;
  }
  if (strategy == "exclusive" || strategy == "dedicated") {
    std::map<std::string, const GpuSpec*> by_name;
    for (const GpuSpec& gpu : original.gpus) by_name[gpu.name] = &gpu;
    s.gpus.clear();
    for (TenantSpec& t : s.tenants) {
      const std::vector<std::string> old_devices =
          t.devices.empty() ? std::vector<std::string>{t.device} : t.devices;
      t.devices.clear();
      for (std::size_t i = 0; i < old_devices.size(); ++i) {
        GpuSpec gpu = *by_name.at(gpu_of(old_devices[i]));
        // Appended piecewise: "-" + std::to_string(i) trips GCC 12's -Wrestrict false
        // positive (bug 105329).
        gpu.name = "dedicated-" + t.name;
        if (old_devices.size() > 1) {
          gpu.name += '-';
          gpu.name += std::to_string(i);
        }
        gpu.mig.clear();
        gpu.mig_layout_name.clear();
        gpu.sharing = SharingSpec{};
        gpu.count = 1;
        s.gpus.push_back(gpu);
        t.devices.push_back(gpu.name);
      }
      t.device = t.devices.front();
    }
    return s;
  }
  if (strategy.rfind("mig", 0) == 0) {
    for (const GpuSpec& gpu : s.gpus) {
      if (gpu.mig.empty() && gpu.mig_layout_name.empty()) {
        throw InputError(s.locate(gpu.where.key_path),
                         "strategy '" + strategy + "' needs a `mig:` layout on " + gpu.name);
      }
    }
    if (strategy == "mig") return s;
    if (strategy.rfind("mig+", 0) == 0) {
      const SharingMode mode = parse_mode(strategy.substr(4), strategy);
      for (GpuSpec& gpu : s.gpus) {
        if (gpu.sharing.mode != mode) {
          gpu.sharing = SharingSpec{};
          gpu.sharing.mode = mode;
        }
      }
      return s;
    }
  }
  throw InputError(SourceLocation{"--strategies", 0, 0, ""},
                   "unknown strategy '" + strategy +
                       "' (use as-is, exclusive, time-slicing, mps, mig, mig+time-slicing, "
                       "mig+mps, mig+exclusive)");
}

}  // namespace

}  // namespace gpumux
