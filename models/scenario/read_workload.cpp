// Reads a tenant's `workload:` block: arrivals, the request's kernels, tokens, batching.
#include "models/scenario/loader_parts.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "models/workload/workload_catalog.hpp"
#include "models/scenario/kernel_trace.hpp"
#include "models/workload/llm_card.hpp"
#include "sim/util/units.hpp"
#include "models/scenario/trace_reader.hpp"

namespace gpumux::scenario_detail {

using namespace yaml;
namespace fs = std::filesystem;

namespace {

// A value that is fixed or drawn from a distribution: a scalar, or exactly one of {fixed: V},
// {exponential: MEAN}, {lognormal: {median: V, sigma: S}}, {uniform: {min: A, max: B}},
// {empirical: {values: [V...], weights: [W...]}} (weights > 0, default all 1; normalised).
// `value(field, positive)` parses one value (a duration, or a plain count); `forms` is the
// example text for the error message.
template <typename ParseValue>
DurationDistribution distribution_with(Context& ctx, const Field& field, ParseValue value,
                                       const char* forms) {
  DurationDistribution d;
  if (field.node.IsScalar()) {
    d.value = value(field, true);
    return d;
  }
  const MapReader map(ctx, field, {"fixed", "exponential", "lognormal", "uniform", "empirical"});
  if (!field.node.IsMap() || field.node.size() != 1) ctx.fail(field, forms);
  if (const auto fixed = map.get("fixed")) {
    d.value = value(*fixed, true);
  } else if (const auto exponential = map.get("exponential")) {
    d.kind = DurationDistribution::Kind::exponential;
    d.value = value(*exponential, true);
  } else if (const auto lognormal = map.get("lognormal")) {
    d.kind = DurationDistribution::Kind::lognormal;
    const MapReader params(ctx, *lognormal, {"median", "sigma"});
    d.value = value(params.require("median"), true);
    const Field sigma = params.require("sigma");
    d.sigma = number_of(ctx, sigma);
    if (d.sigma < 0) ctx.fail(sigma, "must be >= 0, got " + text_of(ctx, sigma));
    if (d.sigma > kMaxLognormalSigma) {
      ctx.fail(sigma, "at most 3 (the mean would be exp(sigma^2/2) = " +
                          std::to_string(static_cast<long long>(
                              std::min(1e18, std::exp(d.sigma * d.sigma / 2)))) +
                          "x the median, set by draws a run almost never makes), got " +
                          text_of(ctx, sigma));
    }
  } else if (const auto empirical = map.get("empirical")) {
    d.kind = DurationDistribution::Kind::empirical;
    const MapReader params(ctx, *empirical, {"values", "weights"});
    const std::vector<Field> values = list_of(ctx, params.require("values"), true);
    std::vector<double> weights(values.size(), 1.0);
    if (const auto w = params.get("weights")) {
      const std::vector<Field> written = list_of(ctx, *w, true);
      if (written.size() != values.size()) {
        ctx.fail(*w, "expected one weight per value (" + std::to_string(values.size()) + "), got " +
                         std::to_string(written.size()));
      }
      for (std::size_t i = 0; i < written.size(); ++i) {
        weights[i] = number_of(ctx, written[i]);
        if (!(weights[i] > 0) || !std::isfinite(weights[i])) {
          ctx.fail(written[i],
                   "a weight must be a finite number > 0, got " + text_of(ctx, written[i]));
        }
      }
    }
    double total = 0;
    for (const double w : weights) total += w;
    double running = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      d.points.push_back(value(values[i], true));
      running += weights[i];
      d.cumulative.push_back(i + 1 == values.size() ? 1.0 : running / total);
    }
    d.value = *std::min_element(d.points.begin(), d.points.end());
    d.upper = *std::max_element(d.points.begin(), d.points.end());
  } else {
    d.kind = DurationDistribution::Kind::uniform;
    const MapReader params(ctx, *map.get("uniform"), {"min", "max"});
    d.value = value(params.require("min"), false);
    const Field max = params.require("max");
    d.upper = value(max, true);
    if (d.upper < d.value) ctx.fail(max, "max must be >= min");
  }
  return d;
}

DurationDistribution distribution_of(Context& ctx, const Field& field) {
  return distribution_with(
      ctx, field,
      [&ctx](const Field& f, bool positive) {
        return positive ? positive_duration_of(ctx, f) : duration_of(ctx, f);
      },
      "expected a duration (2ms) or exactly one of {fixed: 2ms}, {exponential: 2ms}, "
      "{lognormal: {median: 2ms, sigma: 0.4}}, {uniform: {min: 1ms, max: 3ms}}, "
      "{empirical: {values: [1ms, 3ms], weights: [0.7, 0.3]}}");
}

// A token count: plain numbers, no units; a fixed count may be 0, a mean or median must be >= 1.
DurationDistribution token_count_of(Context& ctx, const Field& field) {
  const bool scalar = field.node.IsScalar();
  return distribution_with(
      ctx, field,
      [&ctx, scalar](const Field& f, bool positive) {
        const std::int64_t minimum = positive && !scalar ? 1 : 0;
        const double v = number_of(ctx, f);
        if (v > static_cast<double>(kMaxTokens)) {
          ctx.fail(f, "at most " + std::to_string(kMaxTokens) + " tokens per request, got " +
                          text_of(ctx, f));
        }
        if (!(v >= static_cast<double>(minimum))) {
          ctx.fail(f, "expected a token count >= " + std::to_string(minimum) + ", got " +
                          text_of(ctx, f));
        }
        return static_cast<std::int64_t>(std::llround(v));
      },
      "expected a count (512) or exactly one of {exponential: 500}, "
      "{lognormal: {median: 500, sigma: 1.0}}, {uniform: {min: 100, max: 900}}, "
      "{empirical: {values: [128, 384], weights: [0.6, 0.4]}}");
}

TokenCount token_kind_of(Context& ctx, const Field& field, const char* what) {
  return choice_of<TokenCount>(ctx, field,
                               {{"input", TokenCount::input},
                                {"input_tokens", TokenCount::input},
                                {"output", TokenCount::output},
                                {"output_tokens", TokenCount::output},
                                {"batch", TokenCount::batch},
                                {"batch_tokens", TokenCount::batch}},
                               {"input_tokens", "output_tokens", "batch_tokens"}, what);
}

// A non-negative duration in ns with sub-nanosecond resolution ("25ps", "0.4ns").
double fine_duration_ns(Context& ctx, const Field& field) {
  const double ns = with_unit(ctx, field, units::parse_fine_duration_ns);
  if (!(ns >= 0) || ns > 1e15) {
    ctx.fail(field, "expected a duration >= 0 such as 25ps or 0.4ns, got " + text_of(ctx, field));
  }
  return ns;
}

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

ArrivalSpec arrivals_of(Context& ctx, const Field& field) {
  ArrivalSpec a;
  // The keys allowed depend on the process, so read `process` before checking the others.
  if (!field.node.IsMap()) {
    ctx.record(field);
    ctx.fail(field, std::string("expected a mapping such as {process: poisson, rate: 50/s}, got ") +
                        kind_of(field.node));
  }
  std::optional<Field> process_field;
  for (auto it = field.node.begin(); it != field.node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "process") {
      process_field = Field{it->second, child_path(field.path, "process"),
                            it->second.IsNull() ? it->first.Mark() : it->second.Mark()};
    }
  }
  if (!process_field) {
    // Let a misspelt key ("proces") be reported as such, with its hint.
    const MapReader all(
        ctx, field,
        {"process", "rate", "concurrency", "think", "sessions", "file", "format", "time_scale"});
    ctx.fail({field.node, child_path(field.path, "process"), field.mark},
             "missing required key 'process' (poisson, constant, closed or trace)");
  }
  a.process =
      choice_of<ArrivalProcess>(ctx, *process_field,
                                {{"poisson", ArrivalProcess::poisson},
                                 {"constant", ArrivalProcess::constant},
                                 {"closed", ArrivalProcess::closed},
                                 {"trace", ArrivalProcess::trace}},
                                {"poisson", "constant", "closed", "trace"}, "arrival process");
  switch (a.process) {
    case ArrivalProcess::poisson:
    case ArrivalProcess::constant: {
      const MapReader map(ctx, field, {"process", "rate"});
      a.rate_per_s = rate_of(ctx, map.require("rate"));
      break;
    }
    case ArrivalProcess::closed: {
      const MapReader map(ctx, field, {"process", "concurrency", "think", "sessions"});
      a.concurrency = int_of(ctx, map.require("concurrency"), 1);
      if (const auto think = map.get("think")) {
        // A duration, or a distribution (a notebook user's think time between cells).
        if (think->node.IsScalar()) {
          a.think = duration_of(ctx, *think);
          a.think_dist.value = a.think;
        } else {
          a.think_dist = distribution_of(ctx, *think);
          a.think = std::llround(a.think_dist.mean());
        }
      }
      if (const auto sessions = map.get("sessions")) {
        // On/off use: after `cells` requests the client is away (docs/workloads.md, notebook).
        const MapReader s(ctx, *sessions, {"cells", "away"});
        a.session_cells = int_of(ctx, s.require("cells"), 1);
        a.away = distribution_of(ctx, s.require("away"));
      }
      break;
    }
    case ArrivalProcess::trace: {
      const MapReader map(ctx, field, {"process", "file", "format", "time_scale"});
      const Field file = map.require("file");
      const fs::path path = ctx.resolve_path(file, non_empty_text(ctx, file));
      std::error_code error;
      if (!fs::is_regular_file(path, error)) {
        ctx.fail(file, (fs::exists(path, error) ? "trace file is not a regular file: "
                                                : "trace file not found: ") +
                           path.string());
      }
      a.trace_file = path.string();
      if (const auto format = map.get("format")) {
        const std::string name = text_of(ctx, *format);
        try {
          a.trace_format = parse_trace_format(name);
        } catch (const std::invalid_argument& e) {
          ctx.fail(*format, e.what() + hint(name, {"csv", "azure-llm", "mooncake"}));
        }
      }
      if (const auto scale = map.get("time_scale")) {
        a.time_scale = number_of(ctx, *scale);
        if (!(a.time_scale > 0)) ctx.fail(*scale, "must be > 0, got " + text_of(ctx, *scale));
      }
      break;
    }
  }
  return a;
}

// `llm: {model: NAME | layers: ..., hidden: ..., ..., dtype: fp16, tp: 1, <assumptions>}`
// (models/workload/llm_card.hpp). A named card's architecture comes from the catalog here.
LlmCard llm_card_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"model",
                       "layers",
                       "hidden",
                       "heads",
                       "kv_heads",
                       "head_dim",
                       "ffn",
                       "vocabulary",
                       "gated_ffn",
                       "experts",
                       "experts_per_token",
                       "expert_ffn",
                       "shared_experts",
                       "sliding_window",
                       "dtype",
                       "tp",
                       "gemm_efficiency",
                       "attention_efficiency",
                       "memory_efficiency",
                       "interconnect",
                       "activation_reserve",
                       "cuda_graph",
                       "host_per_op"});
  LlmCard c;
  c.where = ctx.at(field.path, field.mark);
  const char* architecture[] = {
      "layers",     "hidden",         "heads",         "kv_heads", "head_dim",
      "ffn",        "vocabulary",     "gated_ffn",     "experts",  "experts_per_token",
      "expert_ffn", "shared_experts", "sliding_window"};
  if (const auto model = map.get("model")) {
    for (const char* key : architecture) {
      if (const auto f = map.get(key)) {
        ctx.fail(*f, std::string("give model or an inline card, not both ('") + key +
                         "' with model: " + text_of(ctx, *model) + ")");
      }
    }
    const SourceLocation saved = c.where;
    c.where = ctx.at(model->path, model->mark);
    load_llm_card(non_empty_text(ctx, *model), c);
    c.where = saved;
  } else {
    c.layers = int_of(ctx, map.require("layers"), 1);
    c.hidden = integer_of(ctx, map.require("hidden"), 1);
    const Field heads = map.require("heads");
    c.heads = int_of(ctx, heads, 1);
    if (const auto f = map.get("head_dim")) c.head_dim = integer_of(ctx, *f, 1);
    if (c.head_dim == 0 && c.hidden % c.heads != 0) {
      ctx.fail(heads, "hidden " + std::to_string(c.hidden) + " is not a multiple of heads " +
                          std::to_string(c.heads));
    }
    c.kv_heads = c.heads;
    if (const auto f = map.get("kv_heads")) {
      c.kv_heads = int_of(ctx, *f, 1);
      if (c.heads % c.kv_heads != 0) {
        ctx.fail(*f, "heads " + std::to_string(c.heads) + " is not a multiple of kv_heads " +
                         std::to_string(c.kv_heads));
      }
    }
    if (const auto f = map.get("experts")) {
      // A mixture of experts (llm_card.hpp): top-k of E experts of width expert_ffn.
      c.experts = int_of(ctx, *f, 1);
      const Field top = map.require("experts_per_token");
      c.experts_per_token = int_of(ctx, top, 1);
      if (c.experts_per_token > c.experts) {
        ctx.fail(top, "experts_per_token " + std::to_string(c.experts_per_token) +
                          " exceeds experts " + std::to_string(c.experts) +
                          " (each token picks its top k of the experts)");
      }
      c.expert_ffn = integer_of(ctx, map.require("expert_ffn"), 1);
      if (const auto s = map.get("shared_experts")) c.shared_experts = int_of(ctx, *s, 0);
    } else {
      for (const char* key : {"experts_per_token", "expert_ffn", "shared_experts"}) {
        if (const auto f = map.get(key)) {
          ctx.fail(*f, std::string(key) + " needs experts: E (a mixture of experts)");
        }
      }
    }
    if (c.experts == 0 || map.get("ffn")) c.ffn = integer_of(ctx, map.require("ffn"), 1);
    if (const auto f = map.get("sliding_window")) c.sliding_window = integer_of(ctx, *f, 1);
    c.vocabulary = integer_of(ctx, map.require("vocabulary"), 1);
    if (const auto f = map.get("gated_ffn")) c.gated_ffn = bool_of(ctx, *f);
    c.source = "inline";
  }
  if (const auto f = map.get("dtype")) {
    c.dtype = choice_of<std::string>(
        ctx, *f, {{"fp16", "fp16"}, {"bf16", "bf16"}, {"fp8", "fp8"}, {"int8", "int8"}},
        {"fp16", "bf16", "fp8", "int8"}, "dtype");
  }
  if (const auto f = map.get("tp")) c.tp = int_of(ctx, *f, 1);
  if (const auto f = map.get("gemm_efficiency")) {
    c.gemm_efficiency = fraction_of(ctx, *f, 0, true, 1);
  }
  if (const auto f = map.get("attention_efficiency")) {
    c.attention_efficiency = fraction_of(ctx, *f, 0, true, 1);
  }
  if (const auto f = map.get("memory_efficiency")) {
    c.memory_efficiency = fraction_of(ctx, *f, 0, true, 1);
  }
  if (const auto f = map.get("interconnect")) {
    c.interconnect = with_unit(ctx, *f, units::parse_bandwidth_bytes_per_s);
    if (!(c.interconnect > 0)) ctx.fail(*f, "must be > 0, e.g. 300GB/s");
  }
  if (const auto f = map.get("activation_reserve")) c.activation_reserve = size_of(ctx, *f);
  if (const auto f = map.get("cuda_graph")) c.cuda_graph = bool_of(ctx, *f);
  if (const auto f = map.get("host_per_op")) {
    c.host_per_op = static_cast<double>(duration_of(ctx, *f)) * 1e-9;
  }
  return c;
}

/// `engine_cpu:` — a named engine (models/workload/engine_cpu.hpp; its numbers are filled in at
/// resolve, where the tenant's tp is known) or `{per_iteration: D, per_sequence: D}`, each at
/// most 10 s (an engine's step is milliseconds; the bound keeps t_cpu far from overflow).
EngineCpu engine_cpu_of(Context& ctx, const Field& field) {
  EngineCpu e;
  e.origin = ParamOrigin::user;
  if (field.node.IsScalar()) {
    e.name = choice_of<std::string>(ctx, field, {{"vllm-v0", "vllm-v0"}, {"none", "none"}},
                                    {"vllm-v0", "none"}, "engine_cpu engine");
    return e;
  }
  const MapReader terms(ctx, field, {"per_iteration", "per_sequence"});
  e.name = "custom";
  constexpr Nanos kMost = Nanos{10} * 1'000'000'000;
  const auto bounded = [&](const char* key) -> Nanos {
    const auto f = terms.get(key);
    if (!f) return 0;
    const Nanos t = duration_of(ctx, *f);
    if (t > kMost)
      ctx.fail(*f,
               std::string(key) + " above 10s: an engine's CPU time per iteration is milliseconds");
    return t;
  };
  e.per_iteration = bounded("per_iteration");
  e.per_sequence = bounded("per_sequence");
  return e;
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

// `host: {per_request: D, input_bytes: S, output_bytes: S, link_bandwidth: B, per_op: D}`
// (host_time.hpp): the user's measured host terms of a catalog request; at least one.
static HostOverrides host_overrides_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"per_request", "input_bytes", "output_bytes", "link_bandwidth", "per_op"});
  HostOverrides h;
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
  if (!h.any()) {
    ctx.fail(field,
             "give at least one of per_request, input_bytes, output_bytes, link_bandwidth, "
             "per_op");
  }
  return h;
}

// `workload: {model: NAME, batch: N, seq_len: L, dtype: D, phase: P, steps: K, bus_bandwidth: B,
// runtime: R, cuda_graph: BOOL}` (docs/workloads.md): the kernels are built by resolve_scenario()
// from the catalog on the tenant's GPU model; the name is checked here.
static CatalogRequestSpec catalog_request_of(Context& ctx, const MapReader& map,
                                             const Field& model) {
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
  return c;
}

// `request: {kernels: [...] | kernel_trace: ..., host_gap, cuda_graph}`.
static void read_request(Context& ctx, const MapReader& map, WorkloadSpec& w) {
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

// The keys beside the request: priority, max_in_flight, memory, tokens, batching.
static WorkloadSpec workload_rest(Context& ctx, const Field& field, const MapReader& map,
                                  WorkloadSpec w) {
  if (const auto f = map.get("priority")) {
    const double p = number_of(ctx, *f);
    if (p != std::floor(p) || p < -100 || p > 100) {
      ctx.fail(*f, "must be an integer stream priority (lower is more urgent, as in CUDA), got " +
                       text_of(ctx, *f));
    }
    w.priority = static_cast<int>(p);
  }
  w.max_in_flight = w.arrivals.process == ArrivalProcess::closed ? w.arrivals.concurrency : 1;
  if (const auto f = map.get("max_in_flight")) w.max_in_flight = int_of(ctx, *f, 1);
  if (const auto f = map.get("memory_per_request")) {
    w.memory_per_request = size_of(ctx, *f);
    w.memory_per_request_origin = ParamOrigin::user;
  }
  if (const auto f = map.get("memory_per_token")) w.memory_per_token = size_of(ctx, *f);
  if (const auto f = map.get("batching")) {
    const MapReader batching(
        ctx, *f,
        {"max_batch", "scheduler", "chunk_size", "max_tokens_in_batch", "kv_block", "engine_cpu"});
    w.max_batch = int_of(ctx, batching.require("max_batch"), 1);
    if (const auto s = batching.get("scheduler")) {
      w.scheduler = choice_of<BatchScheduler>(ctx, *s,
                                              {{"orca", BatchScheduler::orca},
                                               {"vllm", BatchScheduler::vllm},
                                               {"sarathi", BatchScheduler::sarathi}},
                                              {"orca", "vllm", "sarathi"}, "batch scheduler");
    }
    if (const auto c = batching.get("chunk_size")) {
      if (w.scheduler != BatchScheduler::sarathi) {
        ctx.fail(*c, "chunk_size belongs to scheduler: sarathi (chunked prefill)");
      }
      w.chunk_size = int_of(ctx, *c, 1);
    }
    if (const auto m = batching.get("max_tokens_in_batch")) {
      w.max_tokens_in_batch = int_of(ctx, *m, 1);
    }
    if (const auto b = batching.get("kv_block")) {
      if (w.scheduler == BatchScheduler::orca) {
        ctx.fail(*b,
                 "kv_block belongs to scheduler: vllm or sarathi (orca reserves a request's "
                 "whole KV memory at admission)");
      }
      w.kv_block = int_of(ctx, *b, 1);
    }
    if (const auto e = batching.get("engine_cpu")) w.engine_cpu = engine_cpu_of(ctx, *e);
  }
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    if (w.max_batch == 0 && w.kernels[i].duration_per_token == TokenCount::batch) {
      ctx.fail(field, "kernel " + w.kernels[i].name +
                          ": per_token: batch_tokens needs batching: {max_batch: N}");
    }
  }
  if (const auto f = map.get("tokens")) {
    const MapReader tokens(ctx, *f, {"input", "output"});
    w.has_tokens = true;
    if (const auto in = tokens.get("input")) w.input_tokens = token_count_of(ctx, *in);
    if (const auto out = tokens.get("output")) w.output_tokens = token_count_of(ctx, *out);
  }
  return w;
}

WorkloadSpec workload_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"arrivals",
                       "request",
                       "max_in_flight",
                       "memory_per_request",
                       "memory_per_token",
                       "tokens",
                       "batching",
                       "priority",
                       "model",
                       "batch",
                       "seq_len",
                       "dtype",
                       "phase",
                       "steps",
                       "bus_bandwidth",
                       "runtime",
                       "cuda_graph",
                       "memory_format",
                       "gradient_checkpointing",
                       "host",
                       "llm"},
                      {{"kernels", "workload.request"}, {"host_gap", "workload.request"}});
  WorkloadSpec w;
  w.arrivals = arrivals_of(ctx, map.require("arrivals"));
  if (const auto llm = map.get("llm")) {
    for (const char* key : {"request", "model"}) {
      if (const auto f = map.get(key)) {
        ctx.fail(*f, std::string("give ") + key +
                         " or llm, not both (an llm: card generates the kernels)");
      }
    }
    if (const auto f = map.get("memory_per_token")) {
      ctx.fail(*f, "memory_per_token comes from the llm: card (its KV-cache bytes per token)");
    }
    if (!map.get("batching")) {
      ctx.fail(*llm,
               "an llm: card needs batching: {max_batch: N} (a serving engine; max_batch: 1 "
               "serves one request at a time)");
    }
    for (const char* key :
         {"batch", "seq_len", "dtype", "phase", "steps", "bus_bandwidth", "runtime", "cuda_graph",
          "memory_format", "gradient_checkpointing", "host"}) {
      if (const auto f = map.get(key)) {
        ctx.fail(*f, std::string("'") + key +
                         "' belongs to a catalog workload (model: NAME); an llm: card takes "
                         "dtype and tp inside llm:");
      }
    }
    w.llm = llm_card_of(ctx, *llm);
  } else if (const auto model = map.get("model")) {
    if (const auto request = map.get("request")) {
      ctx.fail(*request, "give request or model (the workload catalog), not both");
    }
    w.catalog = catalog_request_of(ctx, map, *model);
    if (const auto graph = map.get("cuda_graph")) {
      w.cuda_graph = bool_of(ctx, *graph);
      w.cuda_graph_origin = ParamOrigin::user;
    }
  } else {
    for (const char* key :
         {"batch", "seq_len", "dtype", "phase", "steps", "bus_bandwidth", "runtime", "cuda_graph",
          "memory_format", "gradient_checkpointing", "host"}) {
      if (const auto f = map.get(key)) {
        ctx.fail(*f, std::string("'") + key + "' belongs to a catalog workload (model: NAME)" +
                         (std::string(key) == "cuda_graph" ? "; or write request.cuda_graph" : "") +
                         (std::string(key) == "host" ? "; or write request.host_gap" : ""));
      }
    }
    read_request(ctx, map, w);
  }
  return workload_rest(ctx, field, map, std::move(w));
}

}  // namespace gpumux::scenario_detail
