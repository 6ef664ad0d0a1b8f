// Fuzz entry for gpumux's input readers (issue 13 item 5): the scenario loader (load, resolve,
// a short simulate) and every trace reader. The first byte of the input picks the target; the
// rest is the document. A UserError (InputError, RangeError, ...) is the expected answer to a
// bad input; anything else escaping, a crash, a sanitizer report, a hang or a memory blow-up is
// a finding.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with clang -fsanitize=fuzzer as the libFuzzer
// binary `fuzz_inputs` (GPUMUX_FUZZ=ON), and always as `fuzz_replay`, a plain main that runs every
// file of the directories or files it is given through the same function (ctest
// fuzz.corpus_replay over tests/fuzz/corpus/).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "sim/util/error.hpp"

#include "models/run/runner.hpp"
#include "models/scenario/kernel_trace.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/scenario/trace_reader.hpp"
#include "models/scenario/work_estimate.hpp"

namespace {

using namespace gpumux;

// A run is capped at this much simulated time and this much estimated work, so one case stays
// in milliseconds (the loader's own budget, work_estimate.hpp, allows minutes).
constexpr Nanos kMaxFuzzDuration = 50'000'000;  // 50 ms
constexpr double kMaxFuzzWork = 2e4;

void fuzz_scenario(const std::string& text) {
  // A directory that does not exist: relative trace paths in the document resolve under it
  // and fail as missing files (absolute paths are read as written).
  Scenario scenario = load_scenario_text(text, "/nonexistent-gpumux-fuzz/fuzz.yaml");
  if (scenario.duration > kMaxFuzzDuration) scenario.duration = kMaxFuzzDuration;
  if (scenario.warmup > scenario.duration) scenario.warmup = 0;
  scenario.allow_large = false;
  ResolvedScenario resolved = resolve_scenario(std::move(scenario));
  const WorkEstimate work = estimate_work(resolved.scenario, resolved.traces);
  if (!(work.requests <= kMaxFuzzWork && work.launches <= 50 * kMaxFuzzWork &&
        work.samples <= kMaxFuzzWork)) {
    return;
  }
  RunOptions options;
  options.record_requests = false;
  simulate(resolved, options);
}

std::string temp_file(const std::string& bytes, const char* suffix) {
  static const std::string dir = [] {
    char pattern[] = "/tmp/gpumux-fuzz-XXXXXX";
    const char* made = mkdtemp(pattern);
    return std::string(made ? made : "/tmp");
  }();
  const std::string path = dir + "/input" + suffix;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

void fuzz_one(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const unsigned selector = data[0] % 11;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  std::istringstream in(body);
  switch (selector) {
    case 0:
    case 1:
    case 2:
    case 3:
      fuzz_scenario(body);
      break;
    case 4:
      parse_trace(in, "fuzz.csv", TraceFormat::csv, 1.0);
      break;
    case 5:
      parse_trace(in, "fuzz.csv", TraceFormat::azure_llm, 0.5);
      break;
    case 6:
      parse_trace(in, "fuzz.jsonl", TraceFormat::mooncake, 1.0);
      break;
    case 7:
      parse_torch_trace(in, "fuzz.json");
      break;
    case 8:
      parse_csv_kernel_trace(in, "fuzz.csv");
      break;
    case 9:
      parse_ncu_metrics(in, "fuzz-ncu.csv");
      break;
    case 10:
      read_kernel_trace(temp_file(body, ".sqlite"), KernelTraceFormat::nsys);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    fuzz_one(data, size);
  } catch (const gpumux::UserError&) {
    // The documented answer to a bad input.
  }
  return 0;
}
