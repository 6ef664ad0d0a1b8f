#include "models/scenario/strategy_variants.hpp"

#include <algorithm>
#include <map>

#include "models/strategies/registry.hpp"

namespace gpumux {
namespace {

const SourceLocation kStrategiesFlag{"--strategies", 0, 0, ""};

// The strategy whose whole-GPU compare variant is called `name` (time-slicing, mps, exclusive,
// dedicated, ...), or nullptr.
const Strategy* whole_gpu_variant(const std::string& name) {
  for (const Strategy* strategy : strategies()) {
    const std::vector<std::string> names = strategy->compare().whole_gpu;
    if (std::find(names.begin(), names.end(), name) != names.end()) return strategy;
  }
  return nullptr;
}

bool is_dedicated(const std::string& name) {
  const Strategy* strategy = whole_gpu_variant(name);
  return strategy != nullptr && strategy->compare().dedicated;
}

// The strategy NAME of `mig+NAME`.
const Strategy& inner_strategy(const std::string& text, const std::string& variant) {
  const Strategy* strategy = find_strategy(text);
  if (strategy != nullptr && strategy->compare().inside_mig) return *strategy;
  std::vector<std::string> names;
  for (const Strategy* each : strategies()) {
    if (each->compare().inside_mig) names.emplace_back(each->name());
  }
  std::string offered;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) offered += i + 1 == names.size() ? " or " : ", ";
    offered += names[i];
  }
  throw InputError(kStrategiesFlag, "unknown sharing mode '" + text + "' in strategy '" + variant +
                                        "' (use " + offered + ")");
}

std::string gpu_of(const std::string& device) {
  const auto slash = device.find('/');
  return slash == std::string::npos ? device : device.substr(0, slash);
}

// Copies one `sharing:` key from `from` to `to`: `replicas`, or a key of `to`'s strategy (from
// the block of that strategy `from` holds: its own, or the one kept aside). A key of another
// strategy does not apply to `to`: ignored. False for a key no strategy owns.
bool copy_sharing_key(const std::string& key, const SharingSpec& from, SharingSpec& to) {
  if (key == "replicas") {
    to.replicas = from.replicas;
    return true;
  }
  const Strategy& target = to.strategy();
  const std::vector<std::string> keys = target.keys();
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
    if (const StrategyParams* source = from.block_for(target)) {
      return target.copy_key(key, *source, to.params());
    }
    return true;
  }
  for (const Strategy* other : strategies()) {
    const std::vector<std::string> owned = other->keys();
    if (std::find(owned.begin(), owned.end(), key) != owned.end()) return true;
  }
  return false;
}

// `--set` overrides are applied to the file before the variant is built, so a strategy that
// rebuilds a GPU's `sharing:` (mps, time-slicing, dedicated, mig+MODE) would drop them. This
// re-applies every `gpus.N.sharing.KEY` the overrides wrote (the loader records their location
// as "--set") to the variant's GPUs that come from `gpus.N`. A `mode` that differs from the
// strategy's, or a key it cannot carry over, is refused: one InputError naming the key.
void keep_sharing_overrides(const Scenario& original, Scenario& variant,
                            const std::string& strategy) {
  // The dedicated baseline gives each tenant a new, unshared GPU: sharing keys do not apply.
  if (is_dedicated(strategy)) return;
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
        if (&to.sharing.strategy() != &from->sharing.strategy()) {
          throw InputError(where, std::string("strategy '") + strategy + "' shares " + to.name +
                                      " by " + to.sharing.mode_name() + ", not " +
                                      from->sharing.mode_name() +
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

// One name per compare variant, whatever its spelling: a whole-GPU variant by its strategy
// ("dedicated" and "exclusive" -> "exclusive"), `mig+MODE` by the strategy MODE spells
// ("mig+time_slicing" -> "mig+time-slicing"); any other text as it is (unknown names are
// refused when the variant is built). O(strategies x spellings).
std::string canonical_variant(const std::string& name) {
  if (const Strategy* whole = whole_gpu_variant(name)) return whole->name();
  const std::string mig_prefix = "mig+";
  if (name.rfind(mig_prefix, 0) == 0) {
    if (const Strategy* inner = find_strategy(name.substr(mig_prefix.size()))) {
      return mig_prefix + inner->name();
    }
  }
  return name;
}

}  // namespace

std::vector<std::string> parse_strategy_list(const std::string& text) {
  std::vector<std::string> out;
  std::vector<std::string> canonical;  // the strategy each of `out` names, as canonical_variant
  std::string current;
  auto flush = [&] {
    const auto b = current.find_first_not_of(' ');
    const auto e = current.find_last_not_of(' ');
    if (b != std::string::npos) {
      std::string name = current.substr(b, e - b + 1);
      // A strategy listed twice would run twice and write two groups of the same name; two
      // spellings of one strategy (exclusive and dedicated, mig+time-slicing and
      // mig+time_slicing) would run it twice under two names.
      const std::string same = canonical_variant(name);
      const auto earlier = std::find(canonical.begin(), canonical.end(), same);
      if (earlier != canonical.end()) {
        const std::string& first = out[static_cast<std::size_t>(earlier - canonical.begin())];
        throw InputError(kStrategiesFlag,
                         (first == name ? "'" + name + "' listed twice"
                                        : "'" + first + "' and '" + name + "' are one strategy") +
                             " (each strategy runs once; got '" + text + "')");
      }
      canonical.push_back(same);
      out.push_back(std::move(name));
    }
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
    throw InputError(kStrategiesFlag, "no strategy given");
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
  const Strategy* whole = whole_gpu_variant(strategy);
  if (whole != nullptr && !whole->compare().dedicated) {
    for (GpuSpec& gpu : s.gpus) {
      const bool had_mig = !gpu.mig.empty() || !gpu.mig_layout_name.empty();
      gpu.mig.clear();
      gpu.mig_layout_name.clear();
      // The same device `--set gpus.N.sharing.mode=MODE` builds from the file (loader.cpp,
      // drop_replicas_of_another_mode): the same mode keeps its block and `replicas`; another
      // mode gets its own keys where the file wrote them aside, and no `replicas`, whose
      // meaning depends on the mode (time-slicing: slots; mps: an equal thread and memory
      // share). A MIG GPU becomes one whole device here, so its per-instance replicas go too.
      if (&gpu.sharing.strategy() != whole) {
        SharingSpec spec(*whole);
        if (const StrategyParams* aside = gpu.sharing.block_for(*whole)) {
          for (const std::string& key : whole->keys()) whole->copy_key(key, *aside, spec.params());
        }
        gpu.sharing = std::move(spec);
      } else if (had_mig) {
        gpu.sharing.replicas = 0;
      }
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
  if (whole != nullptr) {  // the dedicated baseline
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
        gpu.sharing = SharingSpec(*whole);
        gpu.count = 1;
        s.gpus.push_back(gpu);
        t.devices.push_back(gpu.name);
      }
      t.device = t.devices.front();
    }
    return s;
  }
  const Partition& mig = mig_partition();
  if (strategy.rfind(mig.name, 0) == 0) {
    for (const GpuSpec& gpu : s.gpus) {
      if (gpu.mig.empty() && gpu.mig_layout_name.empty()) {
        throw InputError(s.locate(gpu.where.key_path),
                         "strategy '" + strategy + "' needs a `mig:` layout on " + gpu.name);
      }
    }
    if (strategy == mig.name) return s;
    const std::string prefix = mig.hybrid_prefix;
    if (strategy.rfind(prefix, 0) == 0) {
      const Strategy& inner = inner_strategy(strategy.substr(prefix.size()), strategy);
      for (GpuSpec& gpu : s.gpus) {
        if (&gpu.sharing.strategy() != &inner) gpu.sharing = SharingSpec(inner);
      }
      return s;
    }
  }
  std::string known;
  for (const std::string& name : compare_strategy_names(false)) {
    known += known.empty() ? "" : ", ";
    known += name;
  }
  throw InputError(kStrategiesFlag, "unknown strategy '" + strategy + "' (use " + known + ")");
}

}  // namespace

}  // namespace gpumux
