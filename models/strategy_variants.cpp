#include "models/strategy_variants.hpp"

#include <algorithm>
#include <map>

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

}  // namespace gpumux
