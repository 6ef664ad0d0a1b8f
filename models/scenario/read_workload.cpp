// Reads a tenant's `workload:` block: its arrivals, the value distributions they and the
// kernels draw from, the keys beside the request (priority, memory, tokens, batching) and the
// block itself. The request's kernels are read by read_request.cpp, an `llm:` card and
// `engine_cpu:` by read_llm.cpp.
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

}  // namespace

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

namespace {

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

}  // namespace

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
                       "io_dtype",
                       "serving",
                       "harness",
                       "gemm_library",
                       "conv_library",
                       "gemm_workspace",
                       "attention_seq_len",
                       "runtime_kernel_fixed_cost",
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
    for (const char* key : {"batch", "seq_len", "dtype", "phase", "steps", "bus_bandwidth",
                            "runtime", "cuda_graph", "memory_format", "gradient_checkpointing",
                            "io_dtype", "serving", "harness", "gemm_library", "conv_library",
                            "gemm_workspace", "attention_seq_len", "runtime_kernel_fixed_cost"}) {
      if (const auto f = map.get(key)) {
        ctx.fail(*f, std::string("'") + key +
                         "' belongs to a catalog workload (model: NAME); an llm: card takes "
                         "dtype and tp inside llm:");
      }
    }
    w.llm = llm_card_of(ctx, *llm);
    if (const auto f = map.get("host")) {
      // An llm: card's host terms are its dispatch and engine CPU: only the host's speed.
      const MapReader host(ctx, *f, {"cpu_speed"});
      HostOverrides h;
      host_cpu_speed_of(ctx, host.require("cpu_speed"), h);
      w.host_cpu = h.cpu_name;
      w.host_cpu_speed = *h.cpu_speed;
      w.host_cpu_origin = ParamOrigin::user;
      w.llm->host_cpu_speed = w.host_cpu_speed;
    }
  } else if (const auto model = map.get("model")) {
    if (const auto request = map.get("request")) {
      ctx.fail(*request, "give request or model (the workload catalog), not both");
    }
    w.catalog = catalog_request_of(ctx, map, *model);
    if (w.catalog->host.cpu_speed) {
      w.host_cpu = w.catalog->host.cpu_name;
      w.host_cpu_speed = *w.catalog->host.cpu_speed;
      w.host_cpu_origin = ParamOrigin::user;
    }
    if (const auto graph = map.get("cuda_graph")) {
      w.cuda_graph = bool_of(ctx, *graph);
      w.cuda_graph_origin = ParamOrigin::user;
    }
  } else {
    for (const char* key :
         {"batch", "seq_len", "dtype", "phase", "steps", "bus_bandwidth", "runtime", "cuda_graph",
          "memory_format", "gradient_checkpointing", "host", "io_dtype", "serving", "harness",
          "gemm_library", "conv_library", "gemm_workspace", "attention_seq_len",
          "runtime_kernel_fixed_cost"}) {
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