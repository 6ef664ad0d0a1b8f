#include "models/cluster/device_plugin_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "models/cluster/input_files.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux::cluster {
namespace {

using namespace yaml;

// source: api/config/v1/consts.go (ResourceNamePrefix) and replicas.go / resources.go of
// github.com/NVIDIA/k8s-device-plugin at commit 1b826acc.
constexpr const char* kResourcePrefix = "nvidia.com/";
constexpr const char* kSharedSuffix = ".shared";
constexpr const char* kMigResourcePrefix = "nvidia.com/mig-";
constexpr std::size_t kMaxResourceNameLength = 63;  // MaxResourceNameLength, consts.go

// The keys of `flags` (api/config/v1/flags.go, type Flags). Booleans are type-checked.
const std::vector<std::string> kFlagKeys = {
    "migStrategy",       "failOnInitError",         "mpsRoot",    "nvidiaDriverRoot",
    "nvidiaDevRoot",     "gdrcopyEnabled",          "gdsEnabled", "mofedEnabled",
    "useNodeFeatureAPI", "deviceDiscoveryStrategy", "plugin",     "gfd"};
const std::vector<std::string> kBooleanFlags = {"failOnInitError", "gdrcopyEnabled", "gdsEnabled",
                                                "mofedEnabled", "useNodeFeatureAPI"};

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// A DNS subdomain (RFC 1123) as Kubernetes checks the part after the prefix: lower-case
// letters, digits, '-' and '.', starting and ending with a letter or digit.
bool dns_subdomain(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  const auto alnum = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

// "gpu" -> "nvidia.com/gpu" (NewResourceName adds the prefix); checks the form.
std::string resource_name_of(Context& ctx, const Field& field) {
  std::string name = trim(non_empty_text(ctx, field));
  if (name.find('/') == std::string::npos) name = kResourcePrefix + name;
  if (!starts_with(name, kResourcePrefix)) {
    ctx.fail(field, fmt::format("resource '{}' is not an nvidia.com/ resource", name));
  }
  if (name.size() > kMaxResourceNameLength) {
    ctx.fail(field, fmt::format("fully-qualified resource name must be {} characters or less: {}",
                                kMaxResourceNameLength, name));
  }
  if (!dns_subdomain(name.substr(std::string(kResourcePrefix).size()))) {
    ctx.fail(field, fmt::format("incorrect format for resource name '{}' (lower-case letters, "
                                "digits, '-' and '.')",
                                name));
  }
  return name;
}

// `devices:` of a shared resource: "all" (-> empty), a count N (-> "0".."N-1", the first N
// devices, as internal/rm/device_map.go), or a list of GPU indices, MIG indices "GPU:MIG" or
// UUIDs (GPU-..., MIG-...).
std::vector<std::string> devices_of(Context& ctx, const Field& field) {
  std::vector<std::string> devices;
  if (field.node.IsScalar()) {
    const std::string text = text_of(ctx, field);
    if (text == "all") return devices;
    const auto count = parse_integer(text);
    if (!count) {
      ctx.fail(field, fmt::format("devices set as '{}' but the only valid string input is 'all' "
                                  "(or a count, or a list)",
                                  text));
    }
    if (*count <= 0 || *count > 1024) {
      ctx.fail(field,
               fmt::format("devices set as '{}' but a count of devices must be 1-1024", text));
    }
    for (long long i = 0; i < *count; ++i) devices.push_back(std::to_string(i));
    return devices;
  }
  for (const Field& item : list_of(ctx, field, false)) {
    const std::string ref = trim(text_of(ctx, item));
    const auto all_digits = [](const std::string& s) {
      return !s.empty() &&
             std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
    };
    const auto colon = ref.find(':');
    const bool gpu_index = all_digits(ref);
    const bool mig_index = colon != std::string::npos && all_digits(ref.substr(0, colon)) &&
                           all_digits(ref.substr(colon + 1));
    const bool uuid = (starts_with(ref, "GPU-") || starts_with(ref, "MIG-")) && ref.size() > 4;
    if (!gpu_index && !mig_index && !uuid) {
      ctx.fail(item, fmt::format("unsupported device '{}' in devices list (a GPU index, a MIG "
                                 "index GPU:MIG, or a GPU-/MIG- UUID)",
                                 ref));
    }
    devices.push_back(ref);
  }
  return devices;
}

struct ReplicatedResources {
  bool rename_by_default = false;
  std::optional<bool> fail_requests_greater_than_one;
  std::vector<SharedResource> resources;
};

ReplicatedResources replicated_of(Context& ctx, const Field& field, bool mps,
                                  MigStrategy mig_strategy) {
  const MapReader map(ctx, field, {"renameByDefault", "failRequestsGreaterThanOne", "resources"});
  ReplicatedResources out;
  if (const auto f = map.get("renameByDefault")) out.rename_by_default = bool_of(ctx, *f);
  if (const auto f = map.get("failRequestsGreaterThanOne")) {
    out.fail_requests_greater_than_one = bool_of(ctx, *f);
  }
  const Field resources = map.require("resources");
  for (const Field& item : list_of(ctx, resources, true)) {
    const MapReader entry(ctx, item, {"name", "rename", "devices", "replicas"});
    SharedResource r;
    const Field name = entry.require("name");
    r.name = resource_name_of(ctx, name);
    const bool mig = starts_with(r.name, kMigResourcePrefix);
    if (r.name != "nvidia.com/gpu" && !mig) {
      ctx.fail(name, fmt::format("resource '{}' cannot be shared: the plugin shares nvidia.com/gpu "
                                 "and the nvidia.com/mig-PROFILE resources of migStrategy mixed",
                                 r.name));
    }
    if (mig && mps) {
      ctx.fail(name, fmt::format("sharing using MPS is not supported for MIG devices ('{}'); MPS "
                                 "shares nvidia.com/gpu only",
                                 r.name));
    }
    if (mig && mig_strategy != MigStrategy::mixed) {
      ctx.fail(name, fmt::format("'{}' is advertised only with flags.migStrategy: mixed (with "
                                 "single, MIG devices are nvidia.com/gpu)",
                                 r.name));
    }
    for (const SharedResource& other : out.resources) {
      if (other.name == r.name) ctx.fail(name, fmt::format("resource '{}' listed twice", r.name));
    }
    const Field replicas = entry.require("replicas");
    const std::int64_t count = integer_of(ctx, replicas, 0);
    if (count < 2) {
      ctx.fail(replicas, fmt::format("number of replicas must be >= 2, got {}", count));
    }
    if (count > 1024) {
      ctx.fail(replicas, fmt::format("at most 1024 replicas per device, got {}", count));
    }
    r.replicas = static_cast<int>(count);
    if (const auto f = entry.get("devices")) {
      r.devices = devices_of(ctx, *f);
      r.devices_where = ctx.at(f->path, f->mark);
    }
    if (const auto f = entry.get("rename")) {
      r.advertised_name = resource_name_of(ctx, *f);
    } else {
      r.advertised_name = out.rename_by_default ? r.name + kSharedSuffix : r.name;
    }
    out.resources.push_back(std::move(r));
  }
  return out;
}

}  // namespace

GpuSharingConfig read_device_plugin_config(Context& ctx, const Field& document) {
  GpuSharingConfig config;
  config.where = ctx.at(document.path, document.mark);
  config.source = fmt::format("device-plugin config {}", ctx.file());
  if (document.node.IsNull()) return config;  // an empty config: the plugin's defaults
  const MapReader top(ctx, document, {"version", "flags", "resources", "sharing", "imex"});
  if (const auto f = top.get("version")) {
    const std::string version = text_of(ctx, *f);
    if (version != "v1" && !version.empty()) {
      ctx.fail(*f, fmt::format("unknown version: {} (the device plugin reads v1)", version));
    }
  }
  if (const auto f = top.get("flags")) {
    const MapReader flags(ctx, *f, kFlagKeys);
    if (const auto m = flags.get("migStrategy")) {
      config.mig_strategy = choice_of<MigStrategy>(ctx, *m,
                                                   {{"none", MigStrategy::none},
                                                    {"single", MigStrategy::single},
                                                    {"mixed", MigStrategy::mixed}},
                                                   {"none", "single", "mixed"}, "migStrategy");
    }
    for (const std::string& key : kBooleanFlags) {
      if (const auto b = flags.get(key)) bool_of(ctx, *b);
    }
  }
  if (const auto f = top.get("sharing")) {
    const MapReader sharing(ctx, *f, {"timeSlicing", "mps"});
    const auto time_slicing = sharing.get("timeSlicing");
    const auto mps = sharing.get("mps");
    if (time_slicing && mps && !time_slicing->node.IsNull() && !mps->node.IsNull()) {
      ctx.fail(*mps,
               "time-slicing and MPS are mutually exclusive (the device plugin README); "
               "keep one of sharing.timeSlicing and sharing.mps");
    }
    const bool is_mps = mps && !mps->node.IsNull();
    const bool is_time_slicing = time_slicing && !time_slicing->node.IsNull();
    if (is_mps || is_time_slicing) {
      const Field chosen = is_mps ? *mps : *time_slicing;
      ReplicatedResources replicated = replicated_of(ctx, chosen, is_mps, config.mig_strategy);
      config.sharing = is_mps ? SharingKind::mps : SharingKind::time_slicing;
      config.rename_by_default = replicated.rename_by_default;
      // MPS defaults failRequestsGreaterThanOne to true (api/config/v1/config.go, parseConfig).
      config.fail_requests_greater_than_one =
          replicated.fail_requests_greater_than_one.value_or(is_mps);
      config.shared = std::move(replicated.resources);
      const Strategy* strategy = find_strategy(is_mps ? "mps" : "time-slicing");
      config.device_sharing = SharingSpec(*strategy);
      const auto gpu =
          std::find_if(config.shared.begin(), config.shared.end(),
                       [](const SharedResource& r) { return r.name == "nvidia.com/gpu"; });
      config.device_sharing.replicas =
          gpu != config.shared.end() ? gpu->replicas : config.shared.front().replicas;
    }
  }
  return config;
}

GpuSharingConfig parse_device_plugin_config(const std::string& yaml_text,
                                            const std::string& source_name) {
  const YAML::Node root = yaml::parse(yaml_text, source_name);
  std::map<std::string, SourceLocation> locations;
  Context ctx(source_name, locations);
  return read_device_plugin_config(ctx, Field{root, "", root.Mark()});
}

GpuSharingConfig load_device_plugin_config(const std::string& path) {
  return parse_device_plugin_config(
      detail::read_text_file(path, "device-plugin config", {}, detail::kMaxGpuConfigBytes), path);
}

}  // namespace gpumux::cluster
