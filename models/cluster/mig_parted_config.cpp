#include "models/cluster/mig_parted_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include "models/cluster/input_files.hpp"
#include "models/gpu/mig_layout.hpp"

namespace gpumux::cluster {
namespace {

using namespace yaml;

// The most instances of one profile on one GPU (7 compute slices: MIG User Guide, "Supported MIG
// Profiles").
constexpr int kMaxInstancesPerProfile = 7;
// The most GPUs a node can have in a mig-parted `devices:` list.
constexpr int kMaxDeviceIndex = 1023;

// The form of a MIG profile name: "1g.10gb", "1c.2g.20gb" (compute instance), "1g.10gb+me",
// "1g.24gb-me", "2g.48gb+me.all", "4g.96gb+gfx".
bool valid_profile_form(const std::string& name) {
  static const std::regex form(R"(^([0-9]+c\.)?[0-9]+g\.[0-9]+gb([+-][a-z]+(\.[a-z]+)*)?$)");
  return std::regex_match(name, form);
}

// A device-filter item: a PCI ID as mig-parted's config-default.yaml writes it, "0x" and 1 to 8
// hex digits (device ID then vendor ID: 0x20B210DE is an A100-SXM4-80GB). It is compared as
// text with the IDs gpumux knows (mig_parted_device_ids), so any other form ("zz", a decimal
// 12) could never match: refused, not silently ignored (a fuzz finding of
// tests/cli/test_fuzz_traces_and_options.py).
std::string device_filter_of(Context& ctx, const Field& item) {
  const std::string text = trim(non_empty_text(ctx, item));
  const bool hex = text.size() > 2 && text.size() <= 10 && text[0] == '0' &&
                   (text[1] == 'x' || text[1] == 'X') &&
                   std::all_of(text.begin() + 2, text.end(),
                               [](unsigned char c) { return std::isxdigit(c) != 0; });
  if (!hex) {
    ctx.fail(item,
             "expected a PCI device ID such as 0x20B210DE (0x and up to 8 hex digits), "
             "got '" +
                 text + "'");
  }
  return text;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

MigPartedEntry entry_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field, {"device-filter", "devices", "mig-enabled", "mig-devices"});
  MigPartedEntry e;
  e.where = ctx.at(field.path, field.mark);
  e.mig_devices_where = e.where;
  if (const auto f = map.get("device-filter")) {
    if (f->node.IsSequence()) {
      for (const Field& item : list_of(ctx, *f, false)) {
        e.device_filter.push_back(device_filter_of(ctx, item));
      }
    } else {
      e.device_filter.push_back(device_filter_of(ctx, *f));
    }
  }
  const Field devices = map.require("devices");
  if (devices.node.IsSequence()) {
    e.all_devices = false;
    for (const Field& item : list_of(ctx, devices, false)) {
      const int index = int_of(ctx, item, 0);
      if (index > kMaxDeviceIndex) {
        ctx.fail(item, fmt::format("device index {} is beyond {}", index, kMaxDeviceIndex));
      }
      if (std::find(e.devices.begin(), e.devices.end(), index) != e.devices.end()) {
        ctx.fail(item, fmt::format("device {} listed twice", index));
      }
      e.devices.push_back(index);
    }
  } else {
    const std::string text = text_of(ctx, devices);
    if (text != "all") {
      ctx.fail(devices,
               fmt::format("invalid string input for 'devices': {} (use all or a list of GPU "
                           "indices)",
                           text));
    }
  }
  e.mig_enabled = bool_of(ctx, map.require("mig-enabled"));
  if (const auto f = map.get("mig-devices")) {
    e.mig_devices_where = ctx.at(f->path, f->mark);
    ctx.record(*f);
    if (!f->node.IsNull() && !f->node.IsMap()) {
      ctx.fail(*f,
               fmt::format("expected a mapping of MIG profile to count, got {}", kind_of(f->node)));
    }
    bool any = false;
    for (auto it = f->node.begin(); f->node.IsMap() && it != f->node.end(); ++it) {
      const std::string profile = it->first.Scalar();
      const Field key{it->first, child_path(f->path, profile), it->first.Mark()};
      const Field value{it->second, key.path,
                        it->second.Mark().line >= 0 ? it->second.Mark() : key.mark};
      if (!valid_profile_form(profile)) {
        ctx.fail(key, fmt::format("invalid format for '{}': a MIG profile is written like 1g.10gb "
                                  "or 1g.10gb+me",
                                  profile));
      }
      for (const auto& [seen, count] : e.mig_devices) {
        if (seen == profile) ctx.fail(key, fmt::format("profile '{}' listed twice", profile));
      }
      const int count = int_of(ctx, value, 0);
      if (count > kMaxInstancesPerProfile) {
        ctx.fail(value, fmt::format("at most {} instances of a profile per GPU, got {}",
                                    kMaxInstancesPerProfile, count));
      }
      any = any || count > 0;
      e.mig_devices.emplace_back(profile, count);
    }
    if (!e.mig_devices.empty() && !any) ctx.fail(*f, "all counts for all MigProfiles are 0");
    if (!e.mig_enabled && !e.mig_devices.empty()) {
      ctx.fail(*f, "MIG devices included when 'mig-enabled' is false");
    }
  } else if (e.mig_enabled) {
    ctx.fail(Field{field.node, child_path(field.path, "mig-devices"), field.mark},
             "missing required field 'mig-devices' when 'mig-enabled' is true");
  }
  return e;
}

}  // namespace

MigPartedFile read_mig_parted_config(Context& ctx, const Field& document) {
  if (document.node.IsNull()) {
    ctx.fail(document, "empty mig-parted config (expected version: v1 and mig-configs)");
  }
  const MapReader top(ctx, document, {"version", "mig-configs"});
  const Field version = top.require("version");
  if (text_of(ctx, version) != "v1") {
    ctx.fail(version,
             fmt::format("unknown version: {} (mig-parted reads v1)", text_of(ctx, version)));
  }
  MigPartedFile file;
  file.source = ctx.file();
  const Field configs = top.require("mig-configs");
  if (!configs.node.IsMap()) {
    ctx.fail(configs,
             fmt::format("expected a mapping of config names, got {}", kind_of(configs.node)));
  }
  for (auto it = configs.node.begin(); it != configs.node.end(); ++it) {
    const std::string name = it->first.Scalar();
    const Field key{it->first, child_path(configs.path, name), it->first.Mark()};
    if (file.configs.count(name) != 0) {
      ctx.fail(key, fmt::format("duplicate config name '{}'", name));
    }
    const Field value{it->second, key.path,
                      it->second.Mark().line >= 0 ? it->second.Mark() : key.mark};
    std::vector<MigPartedEntry> entries;
    const std::vector<Field> items = list_of(ctx, value, false);
    if (items.empty()) {
      ctx.fail(value, fmt::format("at least one entry in '{}' is required", name));
    }
    for (const Field& item : items) entries.push_back(entry_of(ctx, item));
    file.configs.emplace(name, std::move(entries));
  }
  if (file.configs.empty()) ctx.fail(configs, "at least one entry in 'mig-configs' is required");
  return file;
}

MigPartedFile parse_mig_parted_config(const std::string& yaml_text,
                                      const std::string& source_name) {
  const YAML::Node root = yaml::parse(yaml_text, source_name);
  std::map<std::string, SourceLocation> locations;
  Context ctx(source_name, locations);
  return read_mig_parted_config(ctx, Field{root, "", root.Mark()});
}

MigPartedFile load_mig_parted_config(const std::string& path) {
  return parse_mig_parted_config(
      detail::read_text_file(path, "mig-parted config", {}, detail::kMaxGpuConfigBytes), path);
}

std::vector<std::string> mig_parted_device_ids(const std::string& profile_name) {
  // source: deployments/systemd/config-default.yaml of github.com/NVIDIA/mig-parted (bd7160f4),
  // the device-filter lists of all-1g.10gb, all-1g.12gb and all-7g.141gb and their comments.
  static const std::vector<std::string> kHopperAmpere80 = {
      "0x233010DE", "0x233110DE", "0x232210DE", "0x20B210DE",
      "0x20B510DE", "0x20F310DE", "0x20F510DE", "0x232410DE"};  // H100/H800/A100/A800 80GB
  static const std::map<std::string, std::vector<std::string>> kIds = {
      {"a100-80gb", kHopperAmpere80},
      {"a100-pcie-80gb", kHopperAmpere80},
      {"h100-sxm-80gb", kHopperAmpere80},
      {"h100-pcie-80gb", kHopperAmpere80},
      {"a100-sxm4-40gb", {"0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"}},
      {"a30-24gb", {"0x20B710DE"}},
      {"h100-nvl-94gb", {"0x232110DE", "0x233A10DE"}},
      {"h200-141gb", {"0x233510DE", "0x233B10DE"}}};
  const auto it = kIds.find(profile_name);
  return it == kIds.end() ? std::vector<std::string>{} : it->second;
}

void apply_mig_parted_config(const MigPartedFile& file, const std::string& name,
                             const SourceLocation& name_where, const DeviceProfile& gpu,
                             int gpus_per_node, GpuSharingConfig& out) {
  const auto config = file.configs.find(name);
  if (config == file.configs.end()) {
    std::vector<std::string> names;
    for (const auto& [known, entries] : file.configs) names.push_back(known);
    const std::size_t shown = std::min<std::size_t>(names.size(), 12);
    const std::string list =
        join(std::vector<std::string>(names.begin(), names.begin() + static_cast<long>(shown))) +
        (shown < names.size() ? fmt::format(", ... ({} in all)", names.size()) : "");
    throw InputError(name_where, fmt::format("no config named '{}' in mig-parted config {}{}; "
                                             "configs: {}",
                                             name, file.source, yaml::hint(name, names), list));
  }
  const std::vector<std::string> ids = mig_parted_device_ids(gpu.name);
  const auto applies = [&](const MigPartedEntry& e) {
    if (e.device_filter.empty()) return true;
    return std::any_of(e.device_filter.begin(), e.device_filter.end(), [&](const std::string& f) {
      return std::any_of(ids.begin(), ids.end(),
                         [&](const std::string& id) { return upper(id) == upper(trim(f)); });
    });
  };
  std::map<int, std::vector<std::string>> layouts;
  std::map<int, SourceLocation> owner;
  bool any_entry = false;
  for (const MigPartedEntry& e : config->second) {
    if (!applies(e)) continue;
    any_entry = true;
    std::vector<std::string> layout;
    for (const auto& [profile, count] : e.mig_devices) layout.insert(layout.end(), count, profile);
    if (e.mig_enabled) {
      if (gpu.mig_profiles.empty()) {
        throw InputError(e.where, fmt::format("config '{}' enables MIG but {} does not support MIG",
                                              name, gpu.name));
      }
      if (layout.empty()) {
        throw InputError(e.mig_devices_where,
                         fmt::format("config '{}' enables MIG with no instance: the GPU would "
                                     "offer no resource; list mig-devices",
                                     name));
      }
      const MigFitResult fit = fit_mig_layout(gpu, layout);
      if (!fit.fits) {
        throw InputError(e.mig_devices_where, fmt::format("config '{}' does not fit {}: {}", name,
                                                          gpu.name, fit.reason));
      }
    }
    std::vector<int> indices = e.devices;
    if (e.all_devices) {
      indices.clear();
      for (int i = 0; i < gpus_per_node; ++i) indices.push_back(i);
    }
    for (const int index : indices) {
      if (index >= gpus_per_node) {
        throw InputError(e.where, fmt::format("config '{}' names device {} but the pool's nodes "
                                              "have {} GPUs (indices 0-{})",
                                              name, index, gpus_per_node, gpus_per_node - 1));
      }
      if (owner.count(index) != 0) {
        throw InputError(e.where, fmt::format("config '{}' configures device {} twice (also at "
                                              "line {})",
                                              name, index, owner[index].line));
      }
      owner[index] = e.where;
      layouts[index] = layout;
    }
  }
  if (!any_entry) {
    throw InputError(
        name_where,
        fmt::format("config '{}' has no entry for {} (every entry has a device-filter "
                    "of another GPU{})",
                    name, gpu.name,
                    ids.empty() ? "; gpumux knows no PCI device id of this model" : ""));
  }
  out.mig_devices.clear();
  out.mig_devices_by_index.clear();
  // A GPU no entry names keeps MIG off (mig-parted leaves it as it is).
  for (int i = 0; i < gpus_per_node; ++i) layouts.emplace(i, std::vector<std::string>{});
  const bool uniform = std::all_of(layouts.begin(), layouts.end(),
                                   [&](const auto& entry) { return entry.second == layouts[0]; });
  if (uniform) {
    out.mig_devices = layouts[0];
  } else {
    out.mig_devices_by_index = layouts;
  }
  out.source = fmt::format("mig-parted config {} ({})", name, file.source);
}

}  // namespace gpumux::cluster
