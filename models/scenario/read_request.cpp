// Reads a workload's `request:` block, the kernels one request launches: listed kernels
// (`kernels: [...]`), a recorded kernel trace (`kernel_trace:`) or a catalog model
// (`workload: {model: ...}`). Part of the scenario loader (loader_parts.hpp).
#include <cctype>
#include <filesystem>
#include <optional>
#include <string>

#include "models/workload/workload_catalog.hpp"
#include "models/gpu/host_cpu.hpp"
#include "models/scenario/kernel_trace.hpp"
#include "models/scenario/loader_parts.hpp"
#include "models/scenario/trace_reader.hpp"
#include "sim/util/units.hpp"

namespace gpumux::scenario_detail {

using namespace yaml;
namespace fs = std::filesystem;

namespace {

KernelSpec kernel_of(Context& ctx, const Field& field, std::size_t index, KernelOrigins& origin) {
  const MapReader map(ctx, field,
                      {"name", "duration", "sm_fraction", "memory_bound", "busy_share", "repeat",
                       "per_token", "collective", "per_sequence", "per_context_token", "waves",
                       "block_time", "working_set", "blocks", "blocks_per_sm", "block"});
  const auto given = [&](const char* key) {
    return map.get(key) ? ParamOrigin::user : ParamOrigin::fallback;
  };
  origin.duration = ParamOrigin::user;
  origin.sm_fraction = given("sm_fraction");
  origin.memory_bound = given("memory_bound");
  origin.busy_share = given("busy_share");
  origin.waves = map.get("waves") || map.get("block_time") || map.get("blocks")
                     ? ParamOrigin::user
                     : ParamOrigin::fallback;
  origin.working_set = given("working_set");
  origin.repeat = given("repeat");
  KernelSpec k;
  k.name = "kernel" + std::to_string(index);
  if (const auto name = map.get("name")) k.name = non_empty_text(ctx, *name);
  k.duration = distribution_of(ctx, map.require("duration"));
  if (const auto f = map.get("sm_fraction")) k.sm_fraction = fraction_of(ctx, *f, 0, true, 1);
  if (const auto f = map.get("memory_bound")) k.memory_bound = fraction_of(ctx, *f, 0, false, 1);
  if (const auto f = map.get("busy_share")) {
    // Overlapped phases (contention law 2): the solo time is the longer phase, so the larger of
    // busy_share and memory_bound is 1 (1e-9: the printed digits of a computed share).
    k.busy_share = fraction_of(ctx, *f, 0, false, 1);
    if (std::abs(std::max(k.busy_share, k.memory_bound) - 1.0) > 1e-9) {
      const auto m = map.get("memory_bound");
      ctx.fail(*f, "busy_share " + text_of(ctx, *f) + " with memory_bound " +
                       (m ? text_of(ctx, *m) : std::string("0 (not given)")) +
                       ": overlapped phases need one of them to be 1 (the solo time is the "
                       "longer phase)");
    }
  }
  if (const auto f = map.get("repeat")) {
    const std::string text = f->node.IsScalar() ? f->node.Scalar() : "";
    if (text.find("token") != std::string::npos) {
      k.repeat_per_token = token_kind_of(ctx, *f, "token count to repeat per");
    } else {
      k.repeat = int_of(ctx, *f, 1);
      if (k.repeat > kMaxRepeat) {
        ctx.fail(*f, "at most " + std::to_string(kMaxRepeat) + " launches per request, got " +
                         text_of(ctx, *f));
      }
    }
  }
  if (const auto f = map.get("per_token")) {
    k.duration_per_token = token_kind_of(ctx, *f, "token count the duration is per");
  }
  if (const auto f = map.get("collective")) k.collective = bool_of(ctx, *f);
  if (const auto f = map.get("per_sequence")) k.per_sequence = duration_of(ctx, *f);
  if (const auto f = map.get("per_context_token")) {
    // Fractional nanoseconds matter here (tens of ps per cached token).
    k.per_context_token = fine_duration_ns(ctx, *f);
  }
  const auto waves = map.get("waves");
  const auto block_time = map.get("block_time");
  if (waves && block_time) ctx.fail(*block_time, "give either waves or block_time, not both");
  if (waves) {
    k.waves = number_of(ctx, *waves);
    if (!(k.waves >= 1) || k.waves > 1e9) {
      ctx.fail(*waves, "must be a number of waves >= 1, got " + text_of(ctx, *waves));
    }
  }
  if (block_time) {
    const Nanos block = positive_duration_of(ctx, *block_time);
    k.waves = std::max(1.0, k.duration.mean() / static_cast<double>(block));
  }
  if (const auto f = map.get("working_set")) k.working_set = size_of(ctx, *f);
  if (const auto f = map.get("blocks")) k.blocks = int_of(ctx, *f, 1);
  if (const auto f = map.get("blocks_per_sm")) {
    if (k.blocks == 0) ctx.fail(*f, "blocks_per_sm needs blocks (the grid size)");
    k.blocks_per_sm = int_of(ctx, *f, 1);
  }
  if (const auto f = map.get("block")) {
    // The per-block footprint (contention law 1c).
    if (k.blocks == 0) ctx.fail(*f, "block needs blocks (the grid size)");
    const MapReader fp(ctx, *f, {"threads", "registers", "shared_memory"});
    k.block.threads = int_of(ctx, fp.require("threads"), 1);
    if (k.block.threads > 1024) {
      ctx.fail(*fp.get("threads"),
               "at most 1024 threads per block (CUDA), got " + text_of(ctx, *fp.get("threads")));
    }
    if (const auto r = fp.get("registers")) {
      k.block.registers = int_of(ctx, *r, 0);
      if (k.block.registers > 255) {
        ctx.fail(*r, "at most 255 registers per thread (CUDA), got " + text_of(ctx, *r));
      }
    }
    if (const auto m = fp.get("shared_memory")) k.block.shared_memory = size_of(ctx, *m);
    k.derive_blocks_per_sm = !map.get("blocks_per_sm");
  }
  return k;
}

}  // namespace

// `request: {kernel_trace: PATH, format: nsys|torch|csv, recorded_on: MODEL,
//            select: {stream: N, device: N, window: [T0, T1]}, ncu: PATH}` (docs/traces.md).
// The trace is read by resolve_scenario(), which knows the tenant's GPU model.
static KernelTraceSpec kernel_trace_of(Context& ctx, const MapReader& request, const Field& trace) {
  KernelTraceSpec k;
  if (const auto kernels = request.get("kernels")) {
    ctx.fail(*kernels, "give kernels or kernel_trace, not both");
  }
  const auto existing_file = [&](const Field& f, const char* what) {
    const fs::path path = ctx.resolve_path(f, non_empty_text(ctx, f));
    std::error_code error;
    if (!fs::is_regular_file(path, error)) {
      ctx.fail(f, std::string(what) +
                      (fs::exists(path, error) ? " is not a regular file: " : " not found: ") +
                      path.string());
    }
    return path.string();
  };
  k.path = existing_file(trace, "kernel trace");
  k.where = ctx.at(trace.path, trace.mark);
  const auto format = request.get("format");
  if (!format) {
    ctx.fail(trace,
             "kernel_trace needs format: nsys (Nsight Systems SQLite export), torch "
             "(PyTorch profiler / Kineto JSON) or csv");
  }
  const std::string name = text_of(ctx, *format);
  try {
    k.format = parse_kernel_trace_format(name);
  } catch (const std::invalid_argument& e) {
    ctx.fail(*format, e.what() + hint(name, {"nsys", "torch", "csv"}));
  }
  if (const auto f = request.get("recorded_on")) k.recorded_on = non_empty_text(ctx, *f);
  if (const auto f = request.get("ncu")) k.ncu_path = existing_file(*f, "ncu metrics file");
  if (const auto f = request.get("select")) {
    const MapReader select(ctx, *f, {"stream", "window", "device"});
    if (const auto stream = select.get("stream")) k.stream = int_of(ctx, *stream, 0);
    if (const auto device = select.get("device")) k.device = int_of(ctx, *device, 0);
    if (const auto window = select.get("window")) {
      const std::vector<Field> ends = list_of(ctx, *window, true);
      if (ends.size() != 2) ctx.fail(*window, "expected [start, end], e.g. [0ms, 25ms]");
      k.window_start = duration_of(ctx, ends[0]);
      k.window_end = duration_of(ctx, ends[1]);
      if (*k.window_end <= *k.window_start) ctx.fail(ends[1], "must be after the window's start");
    }
  }
  return k;
}

// `workload: {model: NAME, batch: N, seq_len: L, dtype: D, phase: P, steps: K, bus_bandwidth: B,
// runtime: R, cuda_graph: BOOL}` (docs/workloads.md): the kernels are built by resolve_scenario()
// from the catalog on the tenant's GPU model; the name is checked here.
// `host: {per_request: D, input_bytes: S, output_bytes: S, link_bandwidth: B, per_op: D,
// front_end_latency: D, front_end_bandwidth: B}` (host_time.hpp): the user's measured host
// terms of a catalog request; at least one.
// `cpu_speed: S` (models/gpu/host_cpu.hpp): a named host or a relative speed in [0.05, 20].
void host_cpu_speed_of(Context& ctx, const Field& field, HostOverrides& h) {
  const std::string text = field.node.IsScalar() ? field.node.Scalar() : std::string();
  if (!text.empty() && std::isalpha(static_cast<unsigned char>(text[0]))) {
    const NamedHostCpu* host = named_host_cpu(text);
    if (host == nullptr) {
      ctx.fail(field, "unknown host CPU '" + text + "'; use one of: " + named_host_cpu_list() +
                          ", or a speed relative to the DGX A100's host such as 1.3");
    }
    h.cpu_speed = host->speed;
    h.cpu_name = host->name;
    return;
  }
  const double speed = number_of(ctx, field);
  if (!(speed >= kMinHostCpuSpeed && speed <= kMaxHostCpuSpeed)) {
    ctx.fail(field,
             "must be a single-thread speed relative to the DGX A100's host between 0.05 "
             "and 20 (e.g. 1.3), or a named host (" +
                 named_host_cpu_list() + "), got " + text_of(ctx, field));
  }
  h.cpu_speed = speed;
  h.cpu_name.clear();
}

static HostOverrides host_overrides_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"per_request", "input_bytes", "output_bytes", "link_bandwidth", "per_op",
                       "front_end_latency", "front_end_bandwidth", "cpu_speed"});
  HostOverrides h;
  if (const auto f = map.get("cpu_speed")) host_cpu_speed_of(ctx, *f, h);
  if (const auto f = map.get("per_request")) h.per_request = duration_of(ctx, *f);
  if (const auto f = map.get("input_bytes")) h.input_bytes = static_cast<double>(size_of(ctx, *f));
  if (const auto f = map.get("output_bytes")) {
    h.output_bytes = static_cast<double>(size_of(ctx, *f));
  }
  if (const auto f = map.get("link_bandwidth")) {
    h.link_bandwidth = with_unit(ctx, *f, units::parse_bandwidth_bytes_per_s);
    // A floor, as bus_bandwidth's: a copy at 1e-9 B/s leaves 64-bit nanoseconds.
    if (!(*h.link_bandwidth >= 1e6)) {
      ctx.fail(*f, "must be at least 1MB/s, got " + text_of(ctx, *f));
    }
  }
  if (const auto f = map.get("per_op")) h.per_op = duration_of(ctx, *f);
  if (const auto f = map.get("front_end_latency")) h.front_end_latency = duration_of(ctx, *f);
  if (const auto f = map.get("front_end_bandwidth")) {
    h.front_end_bandwidth = with_unit(ctx, *f, units::parse_bandwidth_bytes_per_s);
    if (!(*h.front_end_bandwidth >= 1e6)) {
      ctx.fail(*f, "must be at least 1MB/s, got " + text_of(ctx, *f));
    }
  }
  if (!h.any()) {
    ctx.fail(field,
             "give at least one of per_request, input_bytes, output_bytes, link_bandwidth, "
             "per_op, front_end_latency, front_end_bandwidth, cpu_speed");
  }
  return h;
}

CatalogRequestSpec catalog_request_of(Context& ctx, const MapReader& map, const Field& model) {
  CatalogRequestSpec c;
  c.model = non_empty_text(ctx, model);
  c.where = ctx.at(model.path, model.mark);
  try {
    (void)load_catalog_entry(c.model);
  } catch (const InputError& e) {
    ctx.fail(model, e.what());
  }
  if (const auto f = map.get("batch")) c.batch = int_of(ctx, *f, 1);
  if (c.batch > 1'000'000) ctx.fail(*map.get("batch"), "at most 1000000 samples per batch");
  if (const auto f = map.get("seq_len")) {
    if (f->node.IsScalar()) {
      c.seq_len = int_of(ctx, *f, 1);
    } else {
      // A distribution of lengths (docs/workloads.md): every draw at least 1 token.
      c.seq_len_distribution = token_count_of(ctx, *f);
      if (c.seq_len_distribution.kind == DurationDistribution::Kind::fixed) {
        c.seq_len = static_cast<int>(std::max<std::int64_t>(1, c.seq_len_distribution.value));
      } else if (c.seq_len_distribution.value < 1 &&
                 c.seq_len_distribution.kind != DurationDistribution::Kind::lognormal &&
                 c.seq_len_distribution.kind != DurationDistribution::Kind::exponential) {
        ctx.fail(*f, "every sequence length it can draw must be >= 1 token");
      }
    }
  }
  if (const auto f = map.get("attention_seq_len")) {
    // The length the fused attention kernel is built for (catalog_model.hpp, "Attention grid").
    // `bucket`: the variable-length plugin's kernel for each request's own length.
    const std::string text = text_of(ctx, *f);
    if (text == "bucket") {
      c.attention_bucket = true;
    } else {
      if (text.empty() || text.find_first_not_of("+-0123456789") != std::string::npos) {
        ctx.fail(*f, "attention_seq_len is a length in tokens (>= 1) or bucket, got " + text);
      }
      c.attention_seq_len = int_of(ctx, *f, 1);
      if (c.attention_seq_len > 1'000'000) ctx.fail(*f, "at most 1000000 tokens");
    }
  }
  if (const auto f = map.get("runtime_kernel_fixed_cost")) {
    // The runtime's device time per kernel (runtime_fixed_cost.hpp, F_runtime), replacing
    // kernel-families.yaml's for this tenant.
    c.runtime_kernel_fixed_cost = duration_of(ctx, *f);
    if (*c.runtime_kernel_fixed_cost > 1'000'000'000) {
      ctx.fail(*f, "at most 1s per kernel, got " + text_of(ctx, *f));
    }
  }
  if (const auto f = map.get("dtype")) {
    c.dtype = choice_of<std::string>(ctx, *f,
                                     {{"fp16", "fp16"},
                                      {"bf16", "bf16"},
                                      {"fp8", "fp8"},
                                      {"int8", "int8"},
                                      {"tf32", "tf32"},
                                      {"fp32", "fp32"},
                                      {"float16", "fp16"},
                                      {"bfloat16", "bf16"},
                                      {"float32", "fp32"}},
                                     {"fp16", "bf16", "fp8", "int8", "tf32", "fp32"}, "dtype");
  }
  if (const auto f = map.get("phase")) {
    c.phase =
        choice_of<std::string>(ctx, *f, {{"inference", "inference"}, {"training", "training"}},
                               {"inference", "training"}, "phase");
  }
  if (const auto f = map.get("steps")) c.steps = int_of(ctx, *f, 1);
  if (c.steps > 10'000) ctx.fail(*map.get("steps"), "at most 10000 steps per request");
  if (const auto f = map.get("bus_bandwidth")) {
    c.bus_bandwidth = with_unit(ctx, *f, units::parse_bandwidth_bytes_per_s);
    // A floor, not just > 0: at 1e-9 B/s the all-reduce leaves 64-bit nanoseconds.
    if (!(c.bus_bandwidth >= 1e6)) ctx.fail(*f, "must be at least 1MB/s, got " + text_of(ctx, *f));
  }
  if (const auto f = map.get("runtime")) {
    const KernelFamilies& families = load_kernel_families();
    c.runtime = non_empty_text(ctx, *f);
    if (families.runtime(c.runtime) == nullptr) {
      ctx.fail(*f, "unknown runtime '" + c.runtime + "'" +
                       hint(c.runtime, families.runtime_names()) +
                       "; use one of: " + join(families.runtime_names()));
    }
    c.runtime_from_user = true;
  }
  if (const auto f = map.get("memory_format")) {
    c.memory_format =
        choice_of<std::string>(ctx, *f,
                               {{"channels_last", "channels_last"},
                                {"nhwc", "channels_last"},
                                {"contiguous", "contiguous"},
                                {"nchw", "contiguous"}},
                               {"channels_last", "contiguous", "nhwc", "nchw"}, "memory_format");
  }
  if (const auto f = map.get("gradient_checkpointing")) c.gradient_checkpointing = bool_of(ctx, *f);
  if (const auto f = map.get("host")) c.host = host_overrides_of(ctx, *f);
  // A host term of an inference request (serving, harness) refused on another phase.
  const auto require_inference = [&](const Field& f, const std::string& what) {
    const std::string phase =
        c.phase.empty() ? load_catalog_entry(c.model).phases.front() : c.phase;
    if (phase != "inference") ctx.fail(f, what + "; this tenant's phase is " + phase);
  };
  if (const auto f = map.get("io_dtype")) {
    // The element type of the request's tensors as the client sends them (host_time.hpp, B_in
    // and B_out): a storage type, so tf32 (a compute mode, stored as fp32) is refused.
    c.io_dtype =
        choice_of<std::string>(ctx, *f,
                               {{"fp32", "fp32"},
                                {"fp16", "fp16"},
                                {"bf16", "bf16"},
                                {"fp8", "fp8"},
                                {"int8", "int8"},
                                {"uint8", "uint8"},
                                {"float32", "fp32"},
                                {"float16", "fp16"},
                                {"bfloat16", "bf16"}},
                               {"fp32", "fp16", "bf16", "fp8", "int8", "uint8"}, "io_dtype");
    require_inference(*f, "io_dtype is the type of an inference request's tensors");
  }
  if (const auto f = map.get("serving")) {
    // The front end between the client and the runtime (host_time.hpp, T_fe).
    const KernelFamilies& families = load_kernel_families();
    const std::string name = non_empty_text(ctx, *f);
    if (name != "none") {
      if (families.serving_front_end(name) == nullptr) {
        std::vector<std::string> names = families.serving_names();
        names.emplace_back("none");
        ctx.fail(*f, "unknown serving front end '" + name + "'" + hint(name, names) +
                         "; use one of: " + join(names));
      }
      require_inference(*f, "a serving front end serves inference requests");
      c.serving = name;
    }
  }
  if (const auto f = map.get("harness")) {
    // The benchmark harness that issues and times the requests (host_time.hpp, T_h): its host
    // time per request is the GPU profile's harness_per_request of that name, which the
    // catalog's assembly checks once the tenant's GPU is known.
    const std::string name = non_empty_text(ctx, *f);
    if (name != "none") {
      const KernelFamilies& families = load_kernel_families();
      if (families.runtime(name) != nullptr) {
        ctx.fail(*f, "'" + name +
                         "' is a runtime: give it as workload.runtime; harness names the benchmark "
                         "harness around it (e.g. mlperf-loadgen, or none)");
      }
      require_inference(*f, "a benchmark harness times inference requests");
      c.harness = name;
    }
  }
  if (const auto f = map.get("gemm_library")) {
    // A library that replaces the runtime's GEMMs (catalog_model.hpp, "GEMM library").
    const KernelFamilies& families = load_kernel_families();
    const std::string name = non_empty_text(ctx, *f);
    if (families.gemm_library(name) == nullptr) {
      ctx.fail(*f, "unknown GEMM library '" + name + "'" +
                       hint(name, families.gemm_library_names()) +
                       "; use one of: " + join(families.gemm_library_names()));
    }
    c.gemm_library = name;
  }
  if (const auto f = map.get("conv_library")) {
    // How convolutions run (catalog_model.hpp, "Native convolution"): cudnn, one implicit GEMM
    // over the batch; native, PyTorch without cuDNN (im2col + GEMM per sample).
    c.conv_library = choice_of<std::string>(ctx, *f, {{"cudnn", "cudnn"}, {"native", "native"}},
                                            {"cudnn", "native"}, "convolution library");
  }
  if (const auto f = map.get("gemm_workspace")) {
    // false: the GEMMs get no workspace, so none splits K (catalog_model.hpp, "GEMM").
    c.gemm_workspace = bool_of(ctx, *f);
    if (!c.gemm_workspace && !c.gemm_library.empty()) {
      ctx.fail(*f,
               "gemm_workspace: false describes the runtime's own cuBLASLt calls; the GEMM "
               "library '" +
                   c.gemm_library + "' splits K by its own rule");
    }
  }
  if (c.serving.empty()) {
    for (const char* key : {"front_end_latency", "front_end_bandwidth"}) {
      if (const auto host = map.get("host")) {
        const MapReader h(ctx, *host,
                          {"per_request", "input_bytes", "output_bytes", "link_bandwidth", "per_op",
                           "front_end_latency", "front_end_bandwidth", "cpu_speed"});
        if (const auto f = h.get(key)) {
          ctx.fail(*f, std::string(key) +
                           " is a term of a serving front end: give workload.serving too "
                           "(docs/workloads.md, \"Serving front end\")");
        }
      }
    }
  }
  return c;
}

// `request: {kernels: [...] | kernel_trace: ..., host_gap, cuda_graph}`.
void read_request(Context& ctx, const MapReader& map, WorkloadSpec& w) {
  const MapReader request(ctx, map.require("request"),
                          {"kernels", "host_gap", "cuda_graph", "kernel_trace", "format",
                           "recorded_on", "select", "ncu"});
  if (const auto trace = request.get("kernel_trace")) {
    w.kernel_trace = kernel_trace_of(ctx, request, *trace);
  } else {
    for (const char* key : {"format", "recorded_on", "select", "ncu"}) {
      if (const auto f = request.get(key)) {
        ctx.fail(*f, std::string("'") + key + "' belongs to a kernel_trace: request");
      }
    }
    std::size_t index = 0;
    for (const Field& kernel : list_of(ctx, request.require("kernels"), true)) {
      w.kernel_origins.emplace_back();
      w.kernels.push_back(kernel_of(ctx, kernel, index++, w.kernel_origins.back()));
    }
  }
  if (const auto gap = request.get("host_gap")) {
    w.host_gap = duration_of(ctx, *gap);
    w.host_gap_origin = ParamOrigin::user;
  }
  if (const auto graph = request.get("cuda_graph")) {
    w.cuda_graph = bool_of(ctx, *graph);
    w.cuda_graph_origin = ParamOrigin::user;
  }
}

}  // namespace gpumux::scenario_detail
