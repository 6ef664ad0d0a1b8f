#include "models/scenario/emit.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/scenario/trace_reader.hpp"
#include "models/strategies/strategy.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

// fmt's "{}" is the shortest text that reads back as the same double, so a reload is exact.
std::string number(double value) { return fmt::format("{}", value); }

void duration_key(YAML::Emitter& out, const char* key, Nanos value) {
  out << YAML::Key << key << YAML::Value << units::format_duration(value);
}

void optional_duration(YAML::Emitter& out, const char* key, const std::optional<Nanos>& value) {
  if (value) duration_key(out, key, *value);
}

// An empirical distribution's `weights:` key: each point's probability.
void emit_weights(YAML::Emitter& out, const DurationDistribution& d) {
  out << YAML::Key << "weights" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  double below = 0;
  for (const double c : d.cumulative) {
    out << number(c - below);
    below = c;
  }
  out << YAML::EndSeq;
}

void emit_distribution(YAML::Emitter& out, const DurationDistribution& d) {
  using Kind = DurationDistribution::Kind;
  switch (d.kind) {
    case Kind::fixed:
      out << units::format_duration(d.value);
      return;
    case Kind::exponential:
      out << YAML::Flow << YAML::BeginMap;
      duration_key(out, "exponential", d.value);
      out << YAML::EndMap;
      return;
    case Kind::lognormal:
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "lognormal" << YAML::Value << YAML::Flow
          << YAML::BeginMap;
      duration_key(out, "median", d.value);
      out << YAML::Key << "sigma" << YAML::Value << number(d.sigma) << YAML::EndMap << YAML::EndMap;
      return;
    case Kind::uniform:
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "uniform" << YAML::Value << YAML::Flow
          << YAML::BeginMap;
      duration_key(out, "min", d.value);
      duration_key(out, "max", d.upper);
      out << YAML::EndMap << YAML::EndMap;
      return;
    case Kind::empirical:
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "empirical" << YAML::Value;
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "values" << YAML::Value << YAML::Flow
          << YAML::BeginSeq;
      for (const Nanos v : d.points) out << units::format_duration(v);
      out << YAML::EndSeq;
      emit_weights(out, d);
      out << YAML::EndMap << YAML::EndMap;
      return;
  }
}

// Only the strategy's own keys (models/strategies/): an exclusive or MPS GPU lists no
// time-slicing parameters.
void emit_sharing(YAML::Emitter& out, const SharingSpec& s) {
  out << YAML::BeginMap;
  out << YAML::Key << "mode" << YAML::Value << s.mode_name();
  if (s.replicas > 0) out << YAML::Key << "replicas" << YAML::Value << s.replicas;
  s.strategy().emit(out, s.params());
  out << YAML::EndMap;
}

void emit_gpu(YAML::Emitter& out, const GpuSpec& g) {
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << g.name;
  out << YAML::Key << "model" << YAML::Value << g.model;
  out << YAML::Key << "count" << YAML::Value << 1;
  if (!g.mig.empty()) {
    out << YAML::Key << "mig" << YAML::Value << YAML::Flow << g.mig;
  } else if (!g.mig_layout_name.empty()) {
    out << YAML::Key << "mig" << YAML::Value << g.mig_layout_name;
  }
  out << YAML::Key << "sharing" << YAML::Value;
  emit_sharing(out, g.sharing);
  out << YAML::Key << "cost_per_hour" << YAML::Value << number(g.cost_per_hour);
  if (g.power.off) {
    out << YAML::Key << "power" << YAML::Value << "none";
  } else if (g.power.any()) {
    // Units as the reader takes them: W, pJ/B (J/B x 1e12), the exponent a plain number.
    const auto term = [&](const char* key, const std::optional<double>& value, double scale,
                          const char* unit) {
      if (value) out << YAML::Key << key << YAML::Value << number(*value * scale) + unit;
    };
    out << YAML::Key << "power" << YAML::Value << YAML::Flow << YAML::BeginMap;
    term("tdp", g.power.tdp_w, 1.0, "W");
    term("idle", g.power.idle_w, 1.0, "W");
    term("sm_dynamic", g.power.sm_dynamic_w, 1.0, "W");
    term("hbm_energy", g.power.hbm_picojoules_per_byte, 1.0, "pJ/B");
    term("clock_exponent", g.power.clock_exponent, 1.0, "");
    term("tensor_energy", g.power.tensor_picojoules_per_flop, 1.0, "pJ/FLOP");
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_arrivals(YAML::Emitter& out, const ArrivalSpec& a) {
  out << YAML::Flow << YAML::BeginMap << YAML::Key << "process" << YAML::Value;
  switch (a.process) {
    case ArrivalProcess::poisson:
    case ArrivalProcess::constant:
      out << (a.process == ArrivalProcess::poisson ? "poisson" : "constant");
      out << YAML::Key << "rate" << YAML::Value << number(a.rate_per_s) + "/s";
      break;
    case ArrivalProcess::closed:
      out << "closed" << YAML::Key << "concurrency" << YAML::Value << a.concurrency;
      if (a.think_dist.kind == DurationDistribution::Kind::fixed) {
        duration_key(out, "think", a.think);
      } else {
        out << YAML::Key << "think" << YAML::Value;
        emit_distribution(out, a.think_dist);
      }
      if (a.session_cells > 0) {
        out << YAML::Key << "sessions" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
            << "cells" << YAML::Value << a.session_cells << YAML::Key << "away" << YAML::Value;
        emit_distribution(out, a.away);
        out << YAML::EndMap;
      }
      break;
    case ArrivalProcess::trace:
      out << "trace" << YAML::Key << "file" << YAML::Value << a.trace_file;
      out << YAML::Key << "format" << YAML::Value << trace_format_name(a.trace_format);
      out << YAML::Key << "time_scale" << YAML::Value << number(a.time_scale);
      break;
  }
  out << YAML::EndMap;
}

void emit_token_count(YAML::Emitter& out, const DurationDistribution& d) {
  switch (d.kind) {
    case DurationDistribution::Kind::fixed:
      out << d.value;
      return;
    case DurationDistribution::Kind::exponential:
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "exponential" << YAML::Value << d.value
          << YAML::EndMap;
      return;
    case DurationDistribution::Kind::lognormal:
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "lognormal" << YAML::Value
          << YAML::BeginMap << YAML::Key << "median" << YAML::Value << d.value << YAML::Key
          << "sigma" << YAML::Value << number(d.sigma) << YAML::EndMap << YAML::EndMap;
      return;
    case DurationDistribution::Kind::uniform:
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "uniform" << YAML::Value << YAML::BeginMap
          << YAML::Key << "min" << YAML::Value << d.value << YAML::Key << "max" << YAML::Value
          << d.upper << YAML::EndMap << YAML::EndMap;
      return;
    case DurationDistribution::Kind::empirical:
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "empirical" << YAML::Value;
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "values" << YAML::Value << YAML::Flow
          << d.points;
      emit_weights(out, d);
      out << YAML::EndMap << YAML::EndMap;
      return;
  }
}

void emit_kernel(YAML::Emitter& out, const KernelSpec& k) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << k.name;
  out << YAML::Key << "duration" << YAML::Value;
  emit_distribution(out, k.duration);
  out << YAML::Key << "sm_fraction" << YAML::Value << number(k.sm_fraction);
  out << YAML::Key << "memory_bound" << YAML::Value << number(k.memory_bound);
  if (k.busy_share >= 0) out << YAML::Key << "busy_share" << YAML::Value << number(k.busy_share);
  auto token_name = [](TokenCount c) {
    return c == TokenCount::input    ? "input_tokens"
           : c == TokenCount::output ? "output_tokens"
                                     : "batch_tokens";
  };
  if (k.repeat_per_token != TokenCount::none) {
    out << YAML::Key << "repeat" << YAML::Value << token_name(k.repeat_per_token);
  } else {
    out << YAML::Key << "repeat" << YAML::Value << k.repeat;
  }
  if (k.duration_per_token != TokenCount::none) {
    out << YAML::Key << "per_token" << YAML::Value << token_name(k.duration_per_token);
  }
  if (k.collective) out << YAML::Key << "collective" << YAML::Value << true;
  if (k.per_sequence > 0) {
    out << YAML::Key << "per_sequence" << YAML::Value << units::format_duration(k.per_sequence);
  }
  if (k.per_context_token > 0) {
    out << YAML::Key << "per_context_token" << YAML::Value
        << number(k.per_context_token * 1e3) + "ps";
  }
  if (k.waves != 1.0) out << YAML::Key << "waves" << YAML::Value << number(k.waves);
  if (k.working_set > 0) {
    out << YAML::Key << "working_set" << YAML::Value << units::format_size(k.working_set);
  }
  if (k.blocks > 0) {
    out << YAML::Key << "blocks" << YAML::Value << k.blocks;
    if (!k.derive_blocks_per_sm) {
      out << YAML::Key << "blocks_per_sm" << YAML::Value << k.blocks_per_sm;
    }
  }
  if (k.block.known()) {
    out << YAML::Key << "block" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "threads" << YAML::Value << k.block.threads;
    if (k.block.registers > 0) out << YAML::Key << "registers" << YAML::Value << k.block.registers;
    if (k.block.shared_memory > 0) {
      out << YAML::Key << "shared_memory" << YAML::Value
          << units::format_size(k.block.shared_memory);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_slo_quantiles(YAML::Emitter& out, const SloQuantiles& q) {
  optional_duration(out, "p50", q.p50);
  optional_duration(out, "p90", q.p90);
  optional_duration(out, "p99", q.p99);
  optional_duration(out, "p999", q.p999);
}

void emit_tenant(YAML::Emitter& out, const TenantSpec& t) {
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << t.name;
  if (t.devices.size() > 1) {
    out << YAML::Key << "device" << YAML::Value << YAML::Flow << t.devices;
  } else {
    out << YAML::Key << "device" << YAML::Value << t.device;
  }
  out << YAML::Key << "replicas" << YAML::Value << 1;
  out << YAML::Key << "memory" << YAML::Value << units::format_size(t.memory);
  out << YAML::Key << "gpus" << YAML::Value << t.gpus;
  out << YAML::Key << "workload" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "arrivals" << YAML::Value;
  emit_arrivals(out, t.workload.arrivals);
  if (const auto& card = t.workload.llm) {
    // The card regenerates the kernels and memory_per_token on resolve.
    out << YAML::Key << "llm" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (!card->model.empty()) {
      out << YAML::Key << "model" << YAML::Value << card->model;
    } else {
      out << YAML::Key << "layers" << YAML::Value << card->layers;
      out << YAML::Key << "hidden" << YAML::Value << card->hidden;
      out << YAML::Key << "heads" << YAML::Value << card->heads;
      out << YAML::Key << "kv_heads" << YAML::Value << card->kv_heads;
      if (card->head_dim > 0) out << YAML::Key << "head_dim" << YAML::Value << card->head_dim;
      out << YAML::Key << "ffn" << YAML::Value << card->ffn;
      out << YAML::Key << "vocabulary" << YAML::Value << card->vocabulary;
      out << YAML::Key << "gated_ffn" << YAML::Value << card->gated_ffn;
      if (card->experts > 0) {
        out << YAML::Key << "experts" << YAML::Value << card->experts;
        out << YAML::Key << "experts_per_token" << YAML::Value << card->experts_per_token;
        out << YAML::Key << "expert_ffn" << YAML::Value << card->expert_ffn;
        if (card->shared_experts > 0) {
          out << YAML::Key << "shared_experts" << YAML::Value << card->shared_experts;
        }
      }
      if (card->sliding_window > 0) {
        out << YAML::Key << "sliding_window" << YAML::Value << card->sliding_window;
      }
    }
    out << YAML::Key << "dtype" << YAML::Value << card->dtype;
    out << YAML::Key << "tp" << YAML::Value << card->tp;
    out << YAML::Key << "gemm_efficiency" << YAML::Value << number(card->gemm_efficiency);
    out << YAML::Key << "attention_efficiency" << YAML::Value << number(card->attention_efficiency);
    out << YAML::Key << "memory_efficiency" << YAML::Value << number(card->memory_efficiency);
    if (card->interconnect > 0) {
      out << YAML::Key << "interconnect" << YAML::Value
          << number(card->interconnect / 1e9) + "GB/s";
    }
    if (card->activation_reserve > 0) {
      out << YAML::Key << "activation_reserve" << YAML::Value
          << units::format_size(card->activation_reserve);
    }
    if (card->cuda_graph) out << YAML::Key << "cuda_graph" << YAML::Value << true;
    if (card->host_per_op_named) {
      out << YAML::Key << "host_per_op" << YAML::Value << "vllm-v0";
    } else if (card->host_per_op >= 0) {
      out << YAML::Key << "host_per_op" << YAML::Value << number(card->host_per_op * 1e6) + "us";
    }
    out << YAML::EndMap;
  }
  if (t.workload.llm) {
    // no request: block (the card above is the request); the user's host CPU, as read.
    if (t.workload.host_cpu_origin == ParamOrigin::user) {
      out << YAML::Key << "host" << YAML::Value << YAML::BeginMap << YAML::Key << "cpu_speed"
          << YAML::Value
          << (t.workload.host_cpu.empty() ? number(t.workload.host_cpu_speed) : t.workload.host_cpu)
          << YAML::EndMap;
    }
  } else if (const auto& c = t.workload.catalog) {
    // Kernels from the workload catalog: the request reproduces them (docs/workloads.md).
    out << YAML::Key << "model" << YAML::Value << c->model;
    if (c->batch > 0) out << YAML::Key << "batch" << YAML::Value << c->batch;
    if (c->seq_len_distribution.kind != DurationDistribution::Kind::fixed) {
      out << YAML::Key << "seq_len" << YAML::Value;
      emit_token_count(out, c->seq_len_distribution);
    } else if (c->seq_len > 0) {
      out << YAML::Key << "seq_len" << YAML::Value << c->seq_len;
    }
    if (!c->dtype.empty()) out << YAML::Key << "dtype" << YAML::Value << c->dtype;
    if (!c->phase.empty()) out << YAML::Key << "phase" << YAML::Value << c->phase;
    if (c->steps != 1) out << YAML::Key << "steps" << YAML::Value << c->steps;
    if (c->bus_bandwidth > 0) {
      out << YAML::Key << "bus_bandwidth" << YAML::Value << number(c->bus_bandwidth) + "B/s";
    }
    if (c->runtime_from_user) out << YAML::Key << "runtime" << YAML::Value << c->runtime;
    if (!c->memory_format.empty()) {
      out << YAML::Key << "memory_format" << YAML::Value << c->memory_format;
    }
    if (c->gradient_checkpointing) {
      out << YAML::Key << "gradient_checkpointing" << YAML::Value << true;
    }
    if (!c->io_dtype.empty()) out << YAML::Key << "io_dtype" << YAML::Value << c->io_dtype;
    if (c->host.any()) {
      // The user's host terms (host_time.hpp), exactly as read: bytes and B/s unrounded.
      out << YAML::Key << "host" << YAML::Value << YAML::BeginMap;
      optional_duration(out, "per_request", c->host.per_request);
      if (c->host.input_bytes) {
        out << YAML::Key << "input_bytes" << YAML::Value << number(*c->host.input_bytes) + "B";
      }
      if (c->host.output_bytes) {
        out << YAML::Key << "output_bytes" << YAML::Value << number(*c->host.output_bytes) + "B";
      }
      if (c->host.link_bandwidth) {
        out << YAML::Key << "link_bandwidth" << YAML::Value
            << number(*c->host.link_bandwidth) + "B/s";
      }
      optional_duration(out, "per_op", c->host.per_op);
      optional_duration(out, "front_end_latency", c->host.front_end_latency);
      if (c->host.front_end_bandwidth) {
        out << YAML::Key << "front_end_bandwidth" << YAML::Value
            << number(*c->host.front_end_bandwidth) + "B/s";
      }
      if (c->host.cpu_speed) {
        out << YAML::Key << "cpu_speed" << YAML::Value
            << (c->host.cpu_name.empty() ? number(*c->host.cpu_speed) : c->host.cpu_name);
      }
      out << YAML::EndMap;
    }
    if (!c->serving.empty()) out << YAML::Key << "serving" << YAML::Value << c->serving;
    if (!c->harness.empty()) out << YAML::Key << "harness" << YAML::Value << c->harness;
    if (!c->gemm_library.empty()) {
      out << YAML::Key << "gemm_library" << YAML::Value << c->gemm_library;
    }
    if (!c->conv_library.empty()) {
      out << YAML::Key << "conv_library" << YAML::Value << c->conv_library;
    }
    if (!c->gemm_workspace) out << YAML::Key << "gemm_workspace" << YAML::Value << false;
    if (c->attention_seq_len > 0) {
      out << YAML::Key << "attention_seq_len" << YAML::Value << c->attention_seq_len;
    } else if (c->attention_bucket) {
      out << YAML::Key << "attention_seq_len" << YAML::Value << "bucket";
    }
    optional_duration(out, "runtime_kernel_fixed_cost", c->runtime_kernel_fixed_cost);
    if (t.workload.cuda_graph) out << YAML::Key << "cuda_graph" << YAML::Value << true;
  } else {
    out << YAML::Key << "request" << YAML::Value << YAML::BeginMap;
    if (const auto& trace = t.workload.kernel_trace) {
      // Kernels from a recorded trace: the trace reference reproduces them (docs/traces.md).
      out << YAML::Key << "kernel_trace" << YAML::Value << trace->path;
      const char* formats[] = {"nsys", "torch", "csv"};
      out << YAML::Key << "format" << YAML::Value << formats[static_cast<int>(trace->format)];
      if (!trace->recorded_on.empty()) {
        out << YAML::Key << "recorded_on" << YAML::Value << trace->recorded_on;
      }
      if (trace->stream || trace->device || trace->window_start) {
        out << YAML::Key << "select" << YAML::Value << YAML::Flow << YAML::BeginMap;
        if (trace->stream) out << YAML::Key << "stream" << YAML::Value << *trace->stream;
        if (trace->device) out << YAML::Key << "device" << YAML::Value << *trace->device;
        if (trace->window_start && trace->window_end) {
          out << YAML::Key << "window" << YAML::Value << YAML::Flow << YAML::BeginSeq
              << units::format_duration(*trace->window_start)
              << units::format_duration(*trace->window_end) << YAML::EndSeq;
        }
        out << YAML::EndMap;
      }
      if (!trace->ncu_path.empty()) out << YAML::Key << "ncu" << YAML::Value << trace->ncu_path;
    } else {
      out << YAML::Key << "kernels" << YAML::Value << YAML::BeginSeq;
      for (const KernelSpec& k : t.workload.kernels) emit_kernel(out, k);
      out << YAML::EndSeq;
    }
    duration_key(out, "host_gap", t.workload.host_gap);
    if (t.workload.cuda_graph) out << YAML::Key << "cuda_graph" << YAML::Value << true;
    out << YAML::EndMap;
  }
  if (t.workload.priority != 0) {
    out << YAML::Key << "priority" << YAML::Value << t.workload.priority;
  }
  out << YAML::Key << "max_in_flight" << YAML::Value << t.workload.max_in_flight;
  out << YAML::Key << "memory_per_request" << YAML::Value
      << units::format_size(t.workload.memory_per_request);
  if (t.workload.max_batch > 0) {
    const WorkloadSpec& w = t.workload;
    out << YAML::Key << "batching" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
        << "max_batch" << YAML::Value << w.max_batch;
    if (w.scheduler != BatchScheduler::orca) {
      const char* names[] = {"orca", "vllm", "sarathi"};
      out << YAML::Key << "scheduler" << YAML::Value << names[static_cast<int>(w.scheduler)];
      out << YAML::Key << "kv_block" << YAML::Value << w.kv_block;
    }
    if (w.scheduler == BatchScheduler::sarathi) {
      out << YAML::Key << "chunk_size" << YAML::Value << w.chunk_size;
    }
    if (w.max_tokens_in_batch > 0) {
      out << YAML::Key << "max_tokens_in_batch" << YAML::Value << w.max_tokens_in_batch;
    }
    if (w.engine_cpu.origin == ParamOrigin::user) {
      out << YAML::Key << "engine_cpu" << YAML::Value;
      if (w.engine_cpu.name == "custom") {
        out << YAML::Flow << YAML::BeginMap;
        duration_key(out, "per_iteration", w.engine_cpu.per_iteration);
        duration_key(out, "per_sequence", w.engine_cpu.per_sequence);
        out << YAML::EndMap;
      } else {
        out << w.engine_cpu.name;
      }
    }
    out << YAML::EndMap;
  }
  if (t.workload.memory_per_token > 0 && !t.workload.llm) {
    out << YAML::Key << "memory_per_token" << YAML::Value
        << units::format_size(t.workload.memory_per_token);
  }
  if (t.workload.has_tokens) {
    out << YAML::Key << "tokens" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "input" << YAML::Value;
    emit_token_count(out, t.workload.input_tokens);
    out << YAML::Key << "output" << YAML::Value;
    emit_token_count(out, t.workload.output_tokens);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  // Plan constraints, written only when set (gpumux plan -o keeps them with the tenant).
  if (t.isolation.memory && t.isolation.fault) {
    out << YAML::Key << "isolation" << YAML::Value << YAML::Flow << YAML::BeginSeq << "memory"
        << "fault" << YAML::EndSeq;
  } else if (t.isolation.any()) {
    out << YAML::Key << "isolation" << YAML::Value << (t.isolation.memory ? "memory" : "fault");
  }
  if (t.best_effort) out << YAML::Key << "best_effort" << YAML::Value << true;
  if (t.active_from > 0 || t.active_until) {
    out << YAML::Key << "active" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (t.active_from > 0) {
      out << YAML::Key << "from" << YAML::Value << units::format_duration(t.active_from);
    }
    if (t.active_until) {
      out << YAML::Key << "until" << YAML::Value << units::format_duration(*t.active_until);
    }
    out << YAML::EndMap;
  }
  if (t.slo.any()) {
    out << YAML::Key << "slo" << YAML::Value << YAML::Flow << YAML::BeginMap;
    emit_slo_quantiles(out, t.slo);
    for (const auto& [key, q] : {std::pair<const char*, const SloQuantiles*>{"ttft", &t.slo.ttft},
                                 {"tpot", &t.slo.tpot}}) {
      if (!q->any()) continue;
      out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
      emit_slo_quantiles(out, *q);
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_fault(YAML::Emitter& out, const FaultSpec& f) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "tenant" << YAML::Value << f.tenant;
  duration_key(out, "at", f.at);
  out << YAML::Key << "kind" << YAML::Value << "fatal";
  optional_duration(out, "recovery", f.recovery);
  out << YAML::EndMap;
}

}  // namespace

std::string emit_scenario_yaml(const Scenario& scenario) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << scenario.name;
  out << YAML::Key << "description" << YAML::Value << scenario.description;
  out << YAML::Key << "seed" << YAML::Value << scenario.seed;
  duration_key(out, "duration", scenario.duration);
  duration_key(out, "warmup", scenario.warmup);
  if (scenario.allow_large) out << YAML::Key << "allow_large" << YAML::Value << true;
  if (!scenario.contention_law.empty()) {
    out << YAML::Key << "contention_law" << YAML::Value << scenario.contention_law;
  }
  out << YAML::Key << "gpus" << YAML::Value << YAML::BeginSeq;
  for (const GpuSpec& g : scenario.gpus) emit_gpu(out, g);
  out << YAML::EndSeq;
  out << YAML::Key << "tenants" << YAML::Value << YAML::BeginSeq;
  for (const TenantSpec& t : scenario.tenants) emit_tenant(out, t);
  out << YAML::EndSeq;
  if (!scenario.faults.empty()) {
    out << YAML::Key << "faults" << YAML::Value << YAML::BeginSeq;
    for (const FaultSpec& f : scenario.faults) emit_fault(out, f);
    out << YAML::EndSeq;
  }
  out << YAML::Key << "output" << YAML::Value << YAML::Flow << YAML::BeginMap;
  duration_key(out, "sample", scenario.output.sample);
  out << YAML::Key << "kernels" << YAML::Value << scenario.output.kernels;
  out << YAML::Key << "percentiles" << YAML::Value
      << percentile_method_name(scenario.output.percentiles);
  out << YAML::Key << "confidence" << YAML::Value << scenario.output.confidence;
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace gpumux
