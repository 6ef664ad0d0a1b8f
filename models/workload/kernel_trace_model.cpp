#include "models/workload/kernel_trace_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

#include "models/gpu/contention_law.hpp"
#include "sim/util/checked.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {

std::string ncu_key(const std::string& name) {
  std::string_view s = strip_whitespace(name);
  if (s.rfind("void ", 0) == 0) s.remove_prefix(5);
  const std::size_t stop = s.find_first_of("(<");
  if (stop != std::string_view::npos) s = s.substr(0, stop);
  const std::size_t scope = s.rfind("::");
  if (scope != std::string_view::npos) s.remove_prefix(scope + 2);
  return std::string(strip_whitespace(s));
}
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains_any(const std::string& text, std::initializer_list<const char*> needles) {
  for (const char* n : needles) {
    if (text.find(n) != std::string::npos) return true;
  }
  return false;
}

std::string join_ids(const std::vector<std::int64_t>& ids) {
  std::string out;
  for (const std::int64_t id : ids) {
    if (!out.empty()) out += ", ";
    out += std::to_string(id);
  }
  return out;
}

std::string milliseconds(Nanos ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) / 1e6);
  return text;
}

// Waves of the grid alone on the whole GPU with `sms` SMs (>= 1; 1 when unknown).
double waves_on(const TraceKernel& k, int bps, int sms) {
  if (!k.has_grid()) return 1.0;
  return grid_shape(k.blocks(), bps, sms).waves;
}

}  // namespace

const char* kernel_name_class(const std::string& name) {
  const std::string n = lower(name);
  // Matrix-vector products (decode GEMV) stream their weights: memory-bound although "gemv"
  // shares letters with gemm.
  if (contains_any(n, {"gemv", "gemvx", "splitkreduce"})) return "memory";
  if (contains_any(
          n, {"gemm",    "conv",      "cutlass",  "cublas",  "xmma",  "matmul",    "wgmma", "hmma",
              "mma_",    "implicit_", "winograd", "fmha",    "flash", "attention", "sm80_", "sm90_",
              "ampere_", "hopper_",   "volta_",   "turing_", "cudnn", "bmm"})) {
    return "compute";
  }
  if (contains_any(
          n, {"elementwise", "vectorized", "unrolled", "reduce", "norm",    "softmax", "copy",
              "memcpy",      "memset",     "fill",     "cat",    "index",   "gather",  "scatter",
              "embedding",   "transpose",  "permute",  "pool",   "dropout", "add",     "mul",
              "relu",        "gelu",       "silu",     "cast",   "where",   "sum",     "mean",
              "bias",        "rotary",     "cache",    "argmax", "topk",    "sort",    "scan",
              "upsample",    "pad"})) {
    return "memory";
  }
  return "other";
}

double default_memory_bound(const std::string& name) {
  const std::string_view c = kernel_name_class(name);
  if (c == "compute") return kComputeBoundMemoryShare;
  if (c == "memory") return kMemoryBoundMemoryShare;
  return kNeitherMemoryShare;
}

int blocks_per_sm(const TraceKernel& k, const SmLimits& limits) {
  if (!limits.known() || k.block[0] <= 0) return 0;
  const std::int64_t threads = k.threads_per_block();
  if (threads <= 0 || threads > limits.max_threads) return 0;
  // The occupancy rules live in the contention law (law 1c's fit with nothing else resident).
  return contention::blocks_fitting(limits, contention::SmUse{}, footprint_of(k));
}

BlockFootprint footprint_of(const TraceKernel& k) {
  BlockFootprint b;
  const std::int64_t threads = k.threads_per_block();
  b.threads = threads > 0 && threads <= (1 << 20) ? static_cast<int>(threads) : 0;
  b.registers = std::max(0, k.registers_per_thread);
  b.shared_memory = std::max<std::int64_t>(0, k.shared_memory);
  return b;
}

GridShape grid_shape(std::int64_t blocks, int bps, int sms) {
  GridShape g;
  if (sms <= 0 || blocks <= 0) return g;
  const double b = static_cast<double>(blocks);
  g.sm_fraction = std::min(1.0, b / sms);
  if (bps > 0) g.waves = std::max(1.0, b / (static_cast<double>(bps) * sms));
  return g;
}

void set_kernel_grid(KernelSpec& spec, std::int64_t blocks, int bps, int sms,
                     const BlockFootprint& footprint) {
  const GridShape grid = grid_shape(blocks, bps, sms);
  spec.sm_fraction = grid.sm_fraction;
  spec.waves = grid.waves;
  if (bps > 0 && blocks <= 2'000'000'000) {
    spec.blocks = static_cast<int>(blocks);
    spec.blocks_per_sm = bps;
    spec.block = footprint;
  }
}

ConvertedTrace convert_kernel_trace(const KernelTrace& trace, const KernelTraceSelect& select,
                                    const DeviceProfile& recorded, const DeviceProfile& target,
                                    const std::map<std::string, NcuMetrics>* ncu) {
  ConvertedTrace out;
  if (trace.kernels.empty()) {
    throw InputError(SourceLocation{trace.source, 0, 0, ""}, "no kernels in the trace");
  }
  std::vector<std::int64_t> devices;
  for (const TraceKernel& k : trace.kernels) {
    if (std::find(devices.begin(), devices.end(), k.device) == devices.end()) {
      devices.push_back(k.device);
    }
  }
  std::sort(devices.begin(), devices.end());
  if (!select.device && devices.size() > 1) {
    throw InputError(SourceLocation{trace.source, 0, 0, "select"},
                     "the trace holds kernels of " + std::to_string(devices.size()) +
                         " GPUs (device " + join_ids(devices) +
                         "): choose one with select: {device: N}");
  }
  const Nanos origin = trace.kernels.front().start;
  const Nanos t0 = origin + select.window_start.value_or(0);
  const Nanos t1 =
      select.window_end ? origin + *select.window_end : std::numeric_limits<Nanos>::max();
  std::vector<const TraceKernel*> chosen;
  for (const TraceKernel& k : trace.kernels) {
    if (select.device && k.device != *select.device) continue;
    if (select.stream && k.stream != *select.stream) continue;
    if (k.start < t0 || k.end > t1) continue;
    chosen.push_back(&k);
  }
  if (chosen.empty()) {
    std::vector<std::int64_t> streams;
    for (const TraceKernel& k : trace.kernels) {
      if (std::find(streams.begin(), streams.end(), k.stream) == streams.end()) {
        streams.push_back(k.stream);
      }
    }
    std::sort(streams.begin(), streams.end());
    std::string what = "no kernels in the selection";
    if (select.device) what += " (device " + std::to_string(*select.device) + ")";
    if (select.stream) what += " (stream " + std::to_string(*select.stream) + ")";
    if (select.window_start || select.window_end) {
      what += " (window [" + units::format_duration(select.window_start.value_or(0)) + ", " +
              (select.window_end ? units::format_duration(*select.window_end) : "end") + "])";
    }
    what += ": the trace has " + std::to_string(trace.kernels.size()) + " kernels on stream(s) " +
            join_ids(streams) + " of device(s) " + join_ids(devices) + " over " +
            milliseconds(trace.kernels.back().end - origin) + " after its first kernel";
    throw InputError(SourceLocation{trace.source, 0, 0, "select"}, what);
  }

  const bool same_gpu = recorded.name == target.name;
  if (!same_gpu && (recorded.boost_clock_mhz <= 0 || target.boost_clock_mhz <= 0)) {
    throw InputError(SourceLocation{trace.source, 0, 0, "recorded_on"},
                     "rescaling from " + recorded.name + " to " + target.name +
                         " needs boost_clock in both profiles; " +
                         (recorded.boost_clock_mhz <= 0 ? recorded.name : target.name) +
                         " has none");
  }
  const double clock_ratio = same_gpu ? 1.0 : recorded.boost_clock_mhz / target.boost_clock_mhz;
  const double bandwidth_ratio = same_gpu ? 1.0 : recorded.hbm_bandwidth / target.hbm_bandwidth;
  const Nanos launch_rec = recorded.launch_overhead;
  const Nanos launch_tgt = target.launch_overhead;

  // Lanes in order of first appearance; the previous kernel end per lane.
  std::map<std::int64_t, int> lane_of;
  std::vector<Nanos> lane_end;
  const Nanos request_origin = chosen.front()->start;
  Nanos span_end = request_origin;
  for (const TraceKernel* kp : chosen) {
    const TraceKernel& k = *kp;
    auto [it, fresh] = lane_of.emplace(k.stream, static_cast<int>(out.streams.size()));
    if (fresh) {
      out.streams.push_back(k.stream);
      lane_end.push_back(request_origin);
    }
    const int lane = it->second;
    KernelSpec spec;
    spec.name = k.name;
    spec.lane = lane;
    KernelOrigins origin;
    origin.duration = ParamOrigin::trace;
    // Boundedness.
    double m = -1;
    if (ncu) {
      auto found = ncu->find(k.name);
      if (found == ncu->end()) found = ncu->find(ncu_key(k.name));
      if (found != ncu->end()) {
        const double total = found->second.sm_pct + found->second.dram_pct;
        m = total > 0 ? found->second.dram_pct / total : kNeitherMemoryShare;
        origin.memory_bound = ParamOrigin::ncu;
        ++out.ncu_matched;
      }
    }
    if (m < 0 && k.memory_bound >= 0) {
      m = k.memory_bound;
      origin.memory_bound = ParamOrigin::trace;
    }
    if (m < 0) {
      m = default_memory_bound(k.name);
      ++out.class_defaults;
    }
    spec.memory_bound = m;
    // Grid shape on the recorded and the target GPU.
    const int bps_rec = blocks_per_sm(k, recorded.sm_limits);
    const int bps_tgt = blocks_per_sm(k, target.sm_limits);
    double compute_scale = 1.0;
    if (k.has_grid()) {
      set_kernel_grid(spec, k.blocks(), bps_tgt, target.sms, footprint_of(k));
      origin.sm_fraction = ParamOrigin::trace;
      if (bps_tgt > 0) origin.waves = ParamOrigin::trace;
      if (!same_gpu) {
        compute_scale = clock_ratio * spec.waves / waves_on(k, bps_rec, recorded.sms);
      }
    } else {
      double f = 1.0;
      if (k.sm_fraction > 0) {
        f = k.sm_fraction;
        origin.sm_fraction = ParamOrigin::trace;
      } else if (k.sm_usage > 0) {
        f = std::min(1.0, static_cast<double>(k.sm_usage) / recorded.sms);
        origin.sm_fraction = ParamOrigin::trace;
      }
      // A grid narrower than the GPU keeps its SM count on the target; a full-GPU one spreads.
      const double sms_needed = f * recorded.sms;
      spec.sm_fraction = std::clamp(sms_needed / target.sms, 1.0 / target.sms, 1.0);
      if (!same_gpu) {
        compute_scale = f >= 1.0 ? clock_ratio * recorded.sms / target.sms : clock_ratio;
      }
    }
    const double recorded_ns = static_cast<double>(k.duration());
    const double scale = same_gpu ? 1.0 : (1.0 - m) * compute_scale + m * bandwidth_ratio;
    spec.duration.kind = DurationDistribution::Kind::fixed;
    spec.duration.value = std::max<Nanos>(1, std::llround(recorded_ns * scale));
    // Timing: the gap after the previous kernel of the lane becomes host time.
    if (trace.timed) {
      const Nanos gap = std::max<Nanos>(0, k.start - lane_end[static_cast<std::size_t>(lane)]);
      if (fresh && k.start == request_origin) {
        // The request's first kernel: it pays a launch like any request start.
        spec.host_before = 0;
      } else if (gap >= launch_rec) {
        spec.host_before = gap - launch_rec;
      } else {
        spec.host_before = 0;
        spec.launch_overhead = std::min(gap, launch_tgt);
      }
    }
    lane_end[static_cast<std::size_t>(lane)] = k.end;
    span_end = std::max(span_end, k.end);
    out.recorded_busy += k.duration();
    out.kernels.push_back(std::move(spec));
    out.origins.push_back(origin);
  }
  out.recorded_span = span_end - request_origin;
  const Nanos select_end = span_end;
  for (const TraceCopy& c : trace.copies) {
    if (c.start >= request_origin && c.end <= select_end &&
        (!select.stream || c.stream == *select.stream)) {
      ++out.copies;
    }
  }
  out.peak_memory = trace.peak_memory;
  return out;
}

}  // namespace gpumux
