// Reading the workload catalog's files (workload_catalog.hpp): an entry's keys, its architecture
// dimensions and defaults, the kernel-family parameters with their provenance, and the cache.
#include "models/workload/workload_catalog.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
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
  static const std::vector<std::string> names = {"resnet", "encoder", "decoder", "pointnet",
                                                 "encoder-decoder"};
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

// A runtime's time cost in seconds, `{value: X, <provenance>}`: exactly one of source, assumption
// or fitted (a fit names its data), X >= 0 (a cost, possibly none).
CatalogParameter time_cost_of(Context& ctx, const Field& field, const std::string& key) {
  const MapReader p(ctx, field, {"value", "source", "assumption", "fitted"});
  const auto source = p.get("source");
  const auto assumption = p.get("assumption");
  const auto fitted = p.get("fitted");
  const int given = static_cast<int>(static_cast<bool>(source)) +
                    static_cast<int>(static_cast<bool>(assumption)) +
                    static_cast<int>(static_cast<bool>(fitted));
  if (given != 1) ctx.fail(p.self(), "give exactly one of source, assumption or fitted");
  CatalogParameter out;
  out.assumed = static_cast<bool>(assumption);
  out.provenance = provenance_of(ctx, source ? *source : assumption ? *assumption : *fitted);
  out.value = static_cast<double>(duration_of(ctx, p.require("value"))) * 1e-9;
  if (out.value < 0) ctx.fail(p.self(), key + " must be >= 0");
  return out;
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

namespace {

// One GEMM tile `{m, n, k, stages, threads, registers, shared_memory}`.
GemmTile gemm_tile_of(Context& ctx, const Field& item) {
  const MapReader t(ctx, item, {"m", "n", "k", "stages", "threads", "registers", "shared_memory"});
  GemmTile tile;
  tile.m = int_of(ctx, t.require("m"), 1);
  tile.n = int_of(ctx, t.require("n"), 1);
  tile.k = int_of(ctx, t.require("k"), 1);
  tile.stages = int_of(ctx, t.require("stages"), 2);
  tile.threads = int_of(ctx, t.require("threads"), 1);
  tile.registers = int_of(ctx, t.require("registers"), 1);
  tile.shared_memory = size_of(ctx, t.require("shared_memory"));
  return tile;
}

// `{value: X, source | assumption}`: the value field X, unread, and the provenance (value 0).
std::pair<Field, CatalogParameter> value_parameter_of(Context& ctx, const MapReader& parent,
                                                      const std::string& key) {
  const MapReader map(ctx, parent.require(key), {"value", "source", "assumption"});
  const auto source = map.get("source");
  const auto assumption = map.get("assumption");
  if (static_cast<bool>(source) == static_cast<bool>(assumption)) {
    ctx.fail(map.self(), "give either source or assumption (exactly one)");
  }
  CatalogParameter p;
  p.assumed = static_cast<bool>(assumption);
  p.provenance = provenance_of(ctx, source ? *source : *assumption);
  return {map.require("value"), p};
}

// `{value: {m, n, ...}, source | assumption}`: one GEMM tile and its provenance (value 1).
std::pair<GemmTile, CatalogParameter> tile_parameter_of(Context& ctx, const MapReader& parent,
                                                        const std::string& key) {
  auto [value, p] = value_parameter_of(ctx, parent, key);
  p.value = 1;
  return {gemm_tile_of(ctx, value), p};
}

// `{value: [...], source | assumption}`: the list field and the provenance (value = list size).
std::pair<Field, CatalogParameter> list_parameter_of(Context& ctx, const MapReader& parent,
                                                     const std::string& key) {
  auto [value, p] = value_parameter_of(ctx, parent, key);
  p.value = static_cast<double>(list_of(ctx, value, false).size());
  return {value, p};
}

// `{value: CHOICE, source | assumption}` with CHOICE one of `choices`; returns its index.
std::size_t choice_index_of(Context& ctx, const MapReader& parent, const std::string& key,
                            const std::vector<std::string>& choices, std::string& provenance) {
  const MapReader map(ctx, parent.require(key), {"value", "source", "assumption"});
  const auto source = map.get("source");
  const auto assumption = map.get("assumption");
  if (static_cast<bool>(source) == static_cast<bool>(assumption)) {
    ctx.fail(map.self(), "give either source or assumption (exactly one)");
  }
  provenance = provenance_of(ctx, source ? *source : *assumption);
  const Field value = map.require("value");
  const std::string text = text_of(ctx, value);
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (text == choices[i]) return i;
  }
  std::string expected;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  ctx.fail(value, "expected " + expected + ", got '" + text + "'");
  return 0;
}

// `{value: CHOICE, source | assumption}` with CHOICE one of `a` (-> true) or `b` (-> false).
bool choice_parameter_of(Context& ctx, const MapReader& parent, const std::string& key,
                         const std::string& yes, const std::string& no, std::string& provenance) {
  return choice_index_of(ctx, parent, key, {yes, no}, provenance) == 0;
}

}  // namespace

const CatalogRuntime* KernelFamilies::runtime(const std::string& name) const {
  for (const CatalogRuntime& r : runtimes) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

const MemoryLatency& KernelFamilies::latency(const std::string& profile) const {
  const auto it = memory_latency.find(profile);
  return it != memory_latency.end() ? it->second : memory_latency.at("default");
}

std::vector<std::string> KernelFamilies::runtime_names() const {
  std::vector<std::string> out;
  for (const CatalogRuntime& r : runtimes) out.push_back(r.name);
  return out;
}

const CatalogServing* KernelFamilies::serving_front_end(const std::string& name) const {
  for (const CatalogServing& f : serving) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const GemmLibrary* KernelFamilies::gemm_library(const std::string& name) const {
  for (const GemmLibrary& lib : gemm_libraries) {
    if (lib.name == name) return &lib;
  }
  return nullptr;
}

std::vector<std::string> KernelFamilies::gemm_library_names() const {
  std::vector<std::string> out;
  for (const GemmLibrary& lib : gemm_libraries) out.push_back(lib.name);
  return out;
}

std::vector<std::string> KernelFamilies::serving_names() const {
  std::vector<std::string> out;
  for (const CatalogServing& f : serving) out.push_back(f.name);
  return out;
}

KernelFamilies parse_kernel_families(const std::string& yaml_text, const std::string& source_name) {
  std::map<std::string, SourceLocation> locations;
  Context ctx(source_name, locations);
  const YAML::Node root = parse(yaml_text, source_name, "invalid YAML: ");
  const MapReader map(ctx, Field{root, "", root.Mark()},
                      {"gemm", "attention", "elementwise", "collective", "memory_latency",
                       "runtimes", "serving", "gemm_libraries"});
  const auto count = [&](const Field& f) { return static_cast<double>(integer_of(ctx, f, 1)); };
  const auto number = [&](const Field& f) { return number_of(ctx, f); };
  const auto bytes = [&](const Field& f) { return static_cast<double>(size_of(ctx, f)); };
  const auto seconds = [&](const Field& f) {
    return static_cast<double>(duration_of(ctx, f)) * 1e-9;
  };
  const auto bandwidth = [&](const Field& f) {
    return with_unit(ctx, f, units::parse_bandwidth_bytes_per_s);
  };
  KernelFamilies k;
  const MapReader gemm(ctx, map.require("gemm"),
                       {"tiles", "split_k", "split_k_min_depth", "split_k_serial", "efficiency"});
  {
    auto [tiles, provenance] = list_parameter_of(ctx, gemm, "tiles");
    k.gemm_tiles_provenance = provenance;
    for (const Field& item : list_of(ctx, tiles, false))
      k.gemm_tiles.push_back(gemm_tile_of(ctx, item));
  }
  {
    auto [splits, provenance] = list_parameter_of(ctx, gemm, "split_k");
    k.gemm_split_k_provenance = provenance;
    for (const Field& item : list_of(ctx, splits, false)) {
      const int s = int_of(ctx, item, 1);
      if (!k.gemm_split_k.empty() && s <= k.gemm_split_k.back()) {
        ctx.fail(item, "split-K factors must ascend");
      }
      if (k.gemm_split_k.empty() && s != 1) ctx.fail(item, "the first split-K factor must be 1");
      k.gemm_split_k.push_back(s);
    }
  }
  k.gemm_split_k_min_depth = parameter_of(ctx, gemm, "split_k_min_depth", count);
  if (const auto serial = gemm.get("split_k_serial")) {
    // `split_k_serial: {value: true|false, source: ... | assumption: ...}`.
    const MapReader map(ctx, *serial, {"value", "source", "assumption"});
    const auto source = map.get("source");
    const auto assumption = map.get("assumption");
    if (static_cast<bool>(source) == static_cast<bool>(assumption)) {
      ctx.fail(map.self(), "give exactly one of source or assumption");
    }
    k.gemm_split_k_serial = bool_of(ctx, map.require("value"));
    k.gemm_split_k_serial_provenance.value = k.gemm_split_k_serial ? 1 : 0;
    k.gemm_split_k_serial_provenance.assumed = static_cast<bool>(assumption);
    k.gemm_split_k_serial_provenance.provenance =
        provenance_of(ctx, source ? *source : *assumption);
  }
  k.gemm_efficiency = parameter_of(ctx, gemm, "efficiency",
                                   [&](const Field& f) { return fraction_of(ctx, f, 0, true, 1); });
  const MapReader attention(ctx, map.require("attention"),
                            {"block_rows", "block_cols", "stages", "threads", "registers",
                             "shared_memory", "efficiency", "backward_flops"});
  k.attention_block_rows = parameter_of(ctx, attention, "block_rows", count);
  k.attention_block_cols = parameter_of(ctx, attention, "block_cols", count);
  k.attention_stages = parameter_of(ctx, attention, "stages", count);
  if (k.attention_stages.value < 2) {
    ctx.fail(attention.require("stages"), "a pipeline needs at least 2 stages");
  }
  k.attention_threads = parameter_of(ctx, attention, "threads", count);
  k.attention_registers = parameter_of(ctx, attention, "registers", count);
  k.attention_shared_memory = parameter_of(ctx, attention, "shared_memory", bytes);
  k.attention_efficiency = parameter_of(ctx, attention, "efficiency", [&](const Field& f) {
    return fraction_of(ctx, f, 0, true, 1);
  });
  k.attention_backward_flops = parameter_of(ctx, attention, "backward_flops", number);
  const MapReader elementwise(ctx, map.require("elementwise"),
                              {"threads", "items_per_thread", "registers"});
  k.elementwise_threads = parameter_of(ctx, elementwise, "threads", count);
  k.elementwise_items = parameter_of(ctx, elementwise, "items_per_thread", count);
  k.elementwise_registers = parameter_of(ctx, elementwise, "registers", count);
  const MapReader collective(ctx, map.require("collective"),
                             {"bus_bandwidth", "latency", "latency_per_hop", "blocks", "threads"});
  k.collective_bus_bandwidth = parameter_of(ctx, collective, "bus_bandwidth", bandwidth);
  k.collective_latency = parameter_of(ctx, collective, "latency", seconds);
  k.collective_latency_per_hop = parameter_of(ctx, collective, "latency_per_hop", seconds);
  k.collective_blocks = parameter_of(ctx, collective, "blocks", count);
  k.collective_threads = parameter_of(ctx, collective, "threads", count);
  const Field latencies = map.require("memory_latency");
  if (!latencies.node.IsMap() || latencies.node.size() == 0) {
    ctx.fail(latencies, "expected a mapping of device profiles (a100-80gb: {dram, l2}, ...)");
  }
  for (auto it = latencies.node.begin(); it != latencies.node.end(); ++it) {
    const std::string profile = it->first.Scalar();
    const Field field{it->second, child_path("memory_latency", profile), it->second.Mark()};
    const MapReader lm(ctx, field, {"dram", "l2"});
    MemoryLatency latency;
    latency.dram = parameter_of(ctx, lm, "dram", seconds);
    latency.l2 = parameter_of(ctx, lm, "l2", seconds);
    k.memory_latency[profile] = latency;
  }
  if (k.memory_latency.count("default") == 0) {
    ctx.fail(latencies, "needs a `default:` entry (profiles without a measurement)");
  }
  const Field runtimes = map.require("runtimes");
  if (!runtimes.node.IsMap() || runtimes.node.size() == 0) {
    ctx.fail(runtimes, "expected a mapping of runtimes (pytorch: {...}, ...)");
  }
  for (auto it = runtimes.node.begin(); it != runtimes.node.end(); ++it) {
    CatalogRuntime r;
    r.name = it->first.Scalar();
    const Field field{it->second, child_path("runtimes", r.name), it->second.Mark()};
    const MapReader rm(ctx, field,
                       {"host_per_op", "kernel_fixed_cost", "attention", "activation",
                        "residual_norm", "batchnorm", "half_precision", "elementwise_fusion",
                        "softmax", "attention_grid", "conv_residual", "qkv_projection",
                        "dense_bias", "attention_lengths", "qkv_bias", "pre_ln_residual_norm"});
    // host_per_op may be 0 (no framework work per operator).
    r.host_per_op = time_cost_of(ctx, rm.require("host_per_op"), "host_per_op");
    if (const auto fixed = rm.get("kernel_fixed_cost")) {
      // Device time per kernel beyond the profile's (may be 0).
      r.kernel_fixed_cost = time_cost_of(ctx, *fixed, "kernel_fixed_cost");
    }
    r.fused_attention =
        choice_parameter_of(ctx, rm, "attention", "fused", "unfused", r.attention_source);
    r.fused_activation =
        choice_parameter_of(ctx, rm, "activation", "fused", "separate", r.activation_source);
    r.fused_residual_norm =
        choice_parameter_of(ctx, rm, "residual_norm", "fused", "separate", r.residual_norm_source);
    r.folded_batchnorm =
        choice_parameter_of(ctx, rm, "batchnorm", "folded", "separate", r.batchnorm_source);
    r.autocast = choice_parameter_of(ctx, rm, "half_precision", "autocast", "converted",
                                     r.half_precision_source);
    if (rm.get("elementwise_fusion")) {
      r.fused_elementwise_chains = choice_parameter_of(ctx, rm, "elementwise_fusion", "chains",
                                                       "none", r.elementwise_fusion_source);
    }
    if (rm.get("softmax")) {
      r.softmax_one_kernel =
          choice_parameter_of(ctx, rm, "softmax", "one_kernel", "row_reductions", r.softmax_source);
    }
    if (rm.get("attention_grid")) {
      r.attention_per_head = choice_parameter_of(ctx, rm, "attention_grid", "per_head", "tiled",
                                                 r.attention_grid_source);
    }
    if (rm.get("conv_residual")) {
      r.fused_conv_residual = choice_parameter_of(ctx, rm, "conv_residual", "fused", "separate",
                                                  r.conv_residual_source);
    }
    if (rm.get("qkv_projection")) {
      const std::size_t qkv =
          choice_index_of(ctx, rm, "qkv_projection", {"fused", "separate", "separate_views"},
                          r.qkv_projection_source);
      r.separate_qkv_projections = qkv != 0;
      r.qkv_head_views = qkv == 2;
    }
    if (rm.get("dense_bias")) {
      const std::size_t bias = choice_index_of(
          ctx, rm, "dense_bias", {"fused", "separate", "broadcast"}, r.dense_bias_source);
      r.dense_bias_kernel = bias == 1;
      r.dense_bias_broadcast = bias == 2;
    }
    if (rm.get("attention_lengths")) {
      auto [lengths, p] = list_parameter_of(ctx, rm, "attention_lengths");
      r.attention_lengths_source = p.provenance;
      for (const Field& item : list_of(ctx, lengths, false)) {
        const std::int64_t n = integer_of(ctx, item, 1);
        if (!r.attention_lengths.empty() && n <= r.attention_lengths.back()) {
          ctx.fail(item, "attention lengths must be ascending");
        }
        r.attention_lengths.push_back(n);
      }
    }
    if (rm.get("qkv_bias")) {
      r.qkv_bias_kernel =
          choice_parameter_of(ctx, rm, "qkv_bias", "kernel", "fused", r.qkv_bias_source);
    }
    if (rm.get("pre_ln_residual_norm")) {
      r.fused_pre_ln_residual_norm = choice_parameter_of(ctx, rm, "pre_ln_residual_norm", "fused",
                                                         "separate", r.pre_ln_residual_norm_source);
    }
    k.runtimes.push_back(std::move(r));
  }
  if (const auto serving = map.get("serving")) {
    // `serving: {NAME: {latency: {value, fitted|source|assumption}, bandwidth: {...}}}`
    // (host_time.hpp, T_fe); bandwidth absent = the payload costs no front-end time.
    if (!serving->node.IsMap() || serving->node.size() == 0) {
      ctx.fail(*serving, "expected a mapping of front ends (triton-grpc: {latency, bandwidth})");
    }
    for (auto it = serving->node.begin(); it != serving->node.end(); ++it) {
      CatalogServing f;
      f.name = it->first.Scalar();
      if (f.name == "none") ctx.fail(*serving, "`none` is reserved (no front end)");
      const Field field{it->second, child_path("serving", f.name), it->second.Mark()};
      const MapReader fm(ctx, field, {"latency", "bandwidth"});
      const auto term = [&](const std::string& key, auto convert) {
        const MapReader p(ctx, fm.require(key), {"value", "source", "assumption", "fitted"});
        const auto source = p.get("source");
        const auto assumption = p.get("assumption");
        const auto fitted = p.get("fitted");
        if (static_cast<int>(static_cast<bool>(source)) +
                static_cast<int>(static_cast<bool>(assumption)) +
                static_cast<int>(static_cast<bool>(fitted)) !=
            1) {
          ctx.fail(p.self(), "give exactly one of source, assumption or fitted");
        }
        CatalogParameter c;
        c.assumed = static_cast<bool>(assumption);
        c.provenance = provenance_of(ctx, source ? *source : assumption ? *assumption : *fitted);
        const Field value = p.require("value");
        c.value = convert(value);
        if (!(c.value > 0)) ctx.fail(value, "must be greater than zero");
        return c;
      };
      f.latency = term("latency", seconds);
      if (fm.get("bandwidth")) f.bandwidth = term("bandwidth", bandwidth);
      k.serving.push_back(std::move(f));
    }
  }
  if (const auto libraries = map.get("gemm_libraries")) {
    // `gemm_libraries: {NAME: {tile, tile_fp32 (optional), split_below_tiles, split_depth}}`
    // (catalog_model.hpp, "GEMM library").
    if (!libraries->node.IsMap() || libraries->node.size() == 0) {
      ctx.fail(*libraries, "expected a mapping of GEMM libraries (tally-cutlass: {tile, ...})");
    }
    for (auto it = libraries->node.begin(); it != libraries->node.end(); ++it) {
      GemmLibrary lib;
      lib.name = it->first.Scalar();
      const Field field{it->second, child_path("gemm_libraries", lib.name), it->second.Mark()};
      const MapReader lm(ctx, field, {"tile", "tile_fp32", "split_below_tiles", "split_depth"});
      std::tie(lib.tile, lib.tile_provenance) = tile_parameter_of(ctx, lm, "tile");
      if (lm.get("tile_fp32")) {
        auto [tile, provenance] = tile_parameter_of(ctx, lm, "tile_fp32");
        lib.tile_fp32 = tile;
        lib.tile_fp32_provenance = provenance;
      }
      lib.split_below_tiles = parameter_of(ctx, lm, "split_below_tiles", count);
      lib.split_depth = parameter_of(ctx, lm, "split_depth", count);
      k.gemm_libraries.push_back(std::move(lib));
    }
  }
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
