// Reading the workload catalog's files (workload_catalog.hpp): an entry's keys, its architecture
// dimensions and defaults, the kernel-family parameters with their provenance, and the cache.
#include "models/config/workload_catalog.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>

#include "models/config/input_error.hpp"
#include "models/config/yaml_reader.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {

// Generated at build time by scripts/embed_profiles.cmake from calibration/workloads/*.yaml.
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_workloads();

namespace {

using namespace yaml;

constexpr std::string_view kFamiliesStem = "kernel-families";

const std::vector<std::string>& family_names() {
  static const std::vector<std::string> names = {"resnet", "encoder", "decoder"};
  return names;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = {"fp16", "bf16", "fp8", "int8", "tf32", "fp32"};
  return names;
}

// A provenance text: a non-empty scalar.
std::string provenance_of(Context& ctx, const Field& field) { return non_empty_text(ctx, field); }

// `{value: X, source: "..."}` or `{value: X, assumption: "..."}`; `convert` reads X.
template <typename Convert>
CatalogParameter parameter_of(Context& ctx, const MapReader& parent, const std::string& key,
                              Convert convert) {
  const MapReader map(ctx, parent.require(key), {"value", "source", "assumption"});
  const auto source = map.get("source");
  const auto assumption = map.get("assumption");
  if (static_cast<bool>(source) == static_cast<bool>(assumption)) {
    ctx.fail(map.self(), source ? "give either source or assumption, not both"
                                : "a value needs `source:` (where it was published or measured) "
                                  "or `assumption:` (why it was chosen)");
  }
  CatalogParameter p;
  p.assumed = static_cast<bool>(assumption);
  p.provenance = provenance_of(ctx, source ? *source : *assumption);
  const Field value = map.require("value");
  p.value = convert(value);
  if (!(p.value > 0)) ctx.fail(value, "must be greater than zero");
  return p;
}

std::vector<std::int64_t> dims_of(Context& ctx, const Field& field) {
  std::vector<std::int64_t> out;
  if (field.node.IsSequence()) {
    for (const Field& item : list_of(ctx, field, true)) out.push_back(integer_of(ctx, item, 1));
  } else {
    out.push_back(integer_of(ctx, field, 0));
  }
  return out;
}

}  // namespace

std::int64_t CatalogEntry::dim(const std::string& key) const {
  const auto it = dims.find(key);
  return it == dims.end() || it->second.empty() ? 0 : it->second.front();
}

CatalogEntry parse_catalog_entry(const std::string& yaml_text, const std::string& source_name) {
  std::map<std::string, SourceLocation> locations;
  Context ctx(source_name, locations);
  const YAML::Node root = parse(yaml_text, source_name, "invalid YAML: ");
  const MapReader map(
      ctx, Field{root, "", root.Mark()},
      {"display_name", "family", "source", "phases", "defaults", "architecture", "notes"});
  CatalogEntry e;
  e.display_name = non_empty_text(ctx, map.require("display_name"));
  const Field family = map.require("family");
  e.family = text_of(ctx, family);
  if (std::find(family_names().begin(), family_names().end(), e.family) == family_names().end()) {
    ctx.fail(family, "unknown family '" + e.family + "'" + hint(e.family, family_names()) +
                         "; use one of: " + join(family_names()));
  }
  e.source = provenance_of(ctx, map.require("source"));
  if (const auto notes = map.get("notes")) text_of(ctx, *notes);
  for (const Field& phase : list_of(ctx, map.require("phases"), true)) {
    const std::string name = text_of(ctx, phase);
    if (name != "inference" && name != "training") {
      ctx.fail(phase, "unknown phase '" + name + "'" + hint(name, {"inference", "training"}) +
                          "; use inference or training");
    }
    e.phases.push_back(name);
  }
  // The keys vary by family (catalog_model.hpp checks the ones it needs).
  const Field arch_field = map.require("architecture");
  if (!arch_field.node.IsMap() || arch_field.node.size() == 0) {
    ctx.fail(arch_field, "expected a mapping of architecture dimensions (layers: 12, ...)");
  }
  for (auto it = arch_field.node.begin(); it != arch_field.node.end(); ++it) {
    const std::string key = it->first.Scalar();
    const Field value{it->second, child_path("architecture", key), it->second.Mark()};
    e.dims[key] = dims_of(ctx, value);
  }
  if (const auto defaults = map.get("defaults")) {
    const MapReader d(ctx, *defaults, {"batch", "seq_len", "dtype"});
    if (const auto f = d.get("batch")) e.default_batch = int_of(ctx, *f, 1);
    if (const auto f = d.get("seq_len")) e.default_seq_len = int_of(ctx, *f, 1);
    if (const auto f = d.get("dtype")) {
      e.default_dtype = text_of(ctx, *f);
      if (std::find(dtype_names().begin(), dtype_names().end(), e.default_dtype) ==
          dtype_names().end()) {
        ctx.fail(*f, "unknown dtype '" + e.default_dtype + "'" +
                         hint(e.default_dtype, dtype_names()) +
                         "; use one of: " + join(dtype_names()));
      }
    }
  }
  e.source_path = source_name;
  return e;
}

KernelFamilies parse_kernel_families(const std::string& yaml_text, const std::string& source_name) {
  std::map<std::string, SourceLocation> locations;
  Context ctx(source_name, locations);
  const YAML::Node root = parse(yaml_text, source_name, "invalid YAML: ");
  const MapReader map(ctx, Field{root, "", root.Mark()}, {"gemm", "elementwise", "collective"});
  const auto count = [&](const Field& f) { return static_cast<double>(integer_of(ctx, f, 1)); };
  const auto bytes = [&](const Field& f) { return static_cast<double>(size_of(ctx, f)); };
  const auto bandwidth = [&](const Field& f) {
    return with_unit(ctx, f, units::parse_bandwidth_bytes_per_s);
  };
  KernelFamilies k;
  const MapReader gemm(ctx, map.require("gemm"),
                       {"tile_m", "tile_n", "threads", "registers", "shared_memory", "efficiency"});
  k.gemm_tile_m = parameter_of(ctx, gemm, "tile_m", count);
  k.gemm_tile_n = parameter_of(ctx, gemm, "tile_n", count);
  k.gemm_threads = parameter_of(ctx, gemm, "threads", count);
  k.gemm_registers = parameter_of(ctx, gemm, "registers", count);
  k.gemm_shared_memory = parameter_of(ctx, gemm, "shared_memory", bytes);
  k.gemm_efficiency = parameter_of(ctx, gemm, "efficiency",
                                   [&](const Field& f) { return fraction_of(ctx, f, 0, true, 1); });
  const MapReader elementwise(ctx, map.require("elementwise"),
                              {"threads", "items_per_thread", "registers"});
  k.elementwise_threads = parameter_of(ctx, elementwise, "threads", count);
  k.elementwise_items = parameter_of(ctx, elementwise, "items_per_thread", count);
  k.elementwise_registers = parameter_of(ctx, elementwise, "registers", count);
  const MapReader collective(ctx, map.require("collective"),
                             {"bus_bandwidth", "blocks", "threads"});
  k.collective_bus_bandwidth = parameter_of(ctx, collective, "bus_bandwidth", bandwidth);
  k.collective_blocks = parameter_of(ctx, collective, "blocks", count);
  k.collective_threads = parameter_of(ctx, collective, "threads", count);
  k.source_path = source_name;
  return k;
}

std::vector<std::string> catalog_model_names() {
  std::vector<std::string> names;
  for (const auto& [stem, text] : embedded_workloads()) {
    if (stem != kFamiliesStem) names.emplace_back(stem);
  }
  std::sort(names.begin(), names.end());
  return names;
}

const CatalogEntry& load_catalog_entry(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<CatalogEntry>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto found = cache.find(name); found != cache.end()) return *found->second;
  const auto& embedded = embedded_workloads();
  const auto it = std::find_if(embedded.begin(), embedded.end(), [&](const auto& entry) {
    return entry.first == name && entry.first != kFamiliesStem;
  });
  if (it == embedded.end()) {
    const std::vector<std::string> names = catalog_model_names();
    throw InputError("unknown workload model '" + name + "'" + hint(name, names) +
                     "; known: " + join(names, ", ") + " (docs/workloads.md)");
  }
  const std::string stem(it->first);
  CatalogEntry entry =
      parse_catalog_entry(std::string(it->second), "calibration/workloads/" + stem + ".yaml");
  entry.name = stem;
  entry.source_path = "embedded:" + stem;
  auto [inserted, ok] = cache.emplace(name, std::make_unique<CatalogEntry>(std::move(entry)));
  (void)ok;
  return *inserted->second;
}

const KernelFamilies& load_kernel_families() {
  static const KernelFamilies families = [] {
    const auto& embedded = embedded_workloads();
    const auto it = std::find_if(embedded.begin(), embedded.end(),
                                 [](const auto& entry) { return entry.first == kFamiliesStem; });
    if (it == embedded.end()) {
      throw InputError("the binary holds no calibration/workloads/kernel-families.yaml");
    }
    KernelFamilies k = parse_kernel_families(std::string(it->second),
                                             "calibration/workloads/kernel-families.yaml");
    k.source_path = "embedded:kernel-families";
    return k;
  }();
  return families;
}

}  // namespace gpumux
