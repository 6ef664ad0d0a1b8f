// Kernel traces: the PyTorch profiler / Kineto Chrome-trace JSON (format torch;
// kernel_trace.hpp lists the events and args read): kernels, copies and memsets, and the peak
// of the [memory] events.
#include "models/scenario/kernel_trace_internal.hpp"
#include "sim/util/checked.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

namespace gpumux {
using namespace kernel_trace_detail;
namespace {

Nanos micros_to_ns(const nlohmann::json& value, const std::string& path, const std::string& key) {
  const auto ns = [&](double micros) {
    try {
      return checked::to_nanos(micros * 1000.0);
    } catch (const checked::RangeError& e) {
      fail_key(path, key, e.what());
    }
  };
  if (value.is_number()) return ns(value.get<double>());
  if (value.is_string()) {
    double micros = 0;
    try {
      micros = std::stod(value.get<std::string>());
    } catch (const std::exception&) {
      fail_key(path, key, "expected a number of microseconds");
    }
    return ns(micros);
  }
  fail_key(path, key, "expected a number of microseconds");
}

// CUDA's largest grid dimension (x: 2^31 - 1; y, z and block dimensions are smaller).
constexpr double kMaxDim = 2147483647.0;

// args.grid / args.block: up to three whole numbers in [0, 2^31 - 1]; anything else (a float
// such as 1e30, which get<int64_t> would convert with undefined behaviour) is a key error.
void dims(const nlohmann::json& args, const char* name, std::int64_t out[3],
          const std::string& path, const std::string& key) {
  const auto it = args.find(name);
  if (it == args.end() || !it->is_array()) return;
  for (std::size_t i = 0; i < 3 && i < it->size(); ++i) {
    const nlohmann::json& v = (*it)[i];
    if (!v.is_number()) continue;
    const double d = v.get<double>();
    if (!(d >= 0 && d <= kMaxDim && d == std::floor(d))) {
      fail_key(path, key + ".args." + name + "." + std::to_string(i),
               "expected a whole number in 0..2147483647, got " + v.dump());
    }
    out[i] = static_cast<std::int64_t>(d);
  }
}

double number_arg(const nlohmann::json& args, const char* name, double fallback) {
  const auto it = args.find(name);
  if (it == args.end() || !it->is_number()) return fallback;
  // Integer uses (bytes, stream, device) cast this: keep it inside int64 (checked.hpp's range).
  return std::clamp(it->get<double>(), -9e18, 9e18);
}

}  // namespace

KernelTrace parse_torch_trace(std::istream& in, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, 0, std::string("not a JSON file: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number beyond a double ("1e535"); was an internal error (a fuzz
    // finding, tests/fuzz/corpus/crash-torch-json-number-range).
    fail(path, 0, std::string("not a valid JSON file: ") + e.what());
  }
  const nlohmann::json* events = nullptr;
  if (doc.is_object()) {
    const auto it = doc.find("traceEvents");
    if (it != doc.end()) events = &*it;
  }
  if (!events) {
    fail_key(path, "traceEvents",
             "missing: not a PyTorch profiler (Kineto) trace; write one with "
             "prof.export_chrome_trace(PATH)");
  }
  if (!events->is_array()) fail_key(path, "traceEvents", "expected a list of events");
  KernelTrace trace;
  trace.source = path;
  trace.format = KernelTraceFormat::torch;
  std::optional<std::int64_t> peak_reserved, peak_allocated;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    if (!e.is_object()) continue;
    const std::string key = "traceEvents." + std::to_string(i);
    const std::string cat = lower(e.value("cat", std::string()));
    const std::string name = e.value("name", std::string());
    static const nlohmann::json kNoArgs = nlohmann::json::object();
    const auto args_it = e.find("args");
    const nlohmann::json& args = args_it != e.end() && args_it->is_object() ? *args_it : kNoArgs;
    if (name == "[memory]") {
      // Device Type 1 = CUDA (c10::DeviceType); CPU events are 0.
      if (number_arg(args, "Device Type", 1) != 1) continue;
      const double reserved = number_arg(args, "Total Reserved", -1);
      const double allocated = number_arg(args, "Total Allocated", -1);
      if (reserved >= 0) {
        peak_reserved =
            std::max<std::int64_t>(peak_reserved.value_or(0), static_cast<std::int64_t>(reserved));
      }
      if (allocated >= 0) {
        peak_allocated = std::max<std::int64_t>(peak_allocated.value_or(0),
                                                static_cast<std::int64_t>(allocated));
      }
      continue;
    }
    const bool kernel = cat == "kernel";
    const bool copy = cat == "gpu_memcpy" || cat == "gpu_memset";
    if (!kernel && !copy) continue;
    if (!e.contains("ts")) fail_key(path, key + ".ts", "missing");
    if (!e.contains("dur")) fail_key(path, key + ".dur", "missing");
    const Nanos start = micros_to_ns(e["ts"], path, key + ".ts");
    const Nanos dur = micros_to_ns(e["dur"], path, key + ".dur");
    if (dur < 0) fail_key(path, key + ".dur", "negative duration");
    const auto stream = static_cast<std::int64_t>(number_arg(args, "stream", 0));
    if (copy) {
      TraceCopy c;
      c.start = start;
      c.end = start + dur;
      c.bytes = static_cast<std::int64_t>(number_arg(args, "bytes", 0));
      c.stream = stream;
      c.kind = cat == "gpu_memset" ? "memset" : name;
      if (c.end > c.start) trace.copies.push_back(c);
      continue;
    }
    TraceKernel k;
    k.row = static_cast<int>(i);
    k.name = name.empty() ? "kernel" : name;
    k.start = start;
    k.end = start + std::max<Nanos>(1, dur);
    k.stream = stream;
    k.device = static_cast<std::int64_t>(number_arg(args, "device", 0));
    dims(args, "grid", k.grid, path, key);
    dims(args, "block", k.block, path, key);
    // Clamped before the conversion to int (a double beyond int is undefined behaviour); a
    // thread has at most 255 registers, so the clamp changes no real trace.
    k.registers_per_thread =
        static_cast<int>(std::clamp(number_arg(args, "registers per thread", 0), 0.0, 65536.0));
    k.shared_memory = static_cast<std::int64_t>(number_arg(args, "shared memory", 0));
    k.blocks_per_sm = number_arg(args, "blocks per SM", 0);
    trace.kernels.push_back(std::move(k));
  }
  if (peak_reserved) {
    trace.peak_memory = *peak_reserved;
  } else if (peak_allocated) {
    trace.peak_memory = *peak_allocated;
  }
  sort_by_start(trace);
  return trace;
}

}  // namespace gpumux
