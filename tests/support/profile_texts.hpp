#pragma once
// The device-profile tests' fixtures (tests/unit/test_profiles*.cpp): the shipped profiles, a
// minimal profile text (kBase) and a MIG section (kMig) to edit, and the check that a text is
// rejected with every expected piece in its one-line error.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"

namespace gpumux::testing {

constexpr std::int64_t kMiB = 1024LL * 1024;
constexpr double kGiB = 1024.0 * 1024 * 1024;

inline const std::vector<std::string> kProfiles = {
    "a100-80gb",      "a100-pcie-80gb", "a100-sxm4-40gb", "a10g-24gb", "a30-24gb", "h100-nvl-94gb",
    "h100-pcie-80gb", "h100-sxm-80gb",  "h200-141gb",     "l4-24gb",   "l40s-48gb"};
// The GPUs without MIG (GA102 and Ada parts): time-slicing and MPS only.
inline const std::set<std::string> kWithoutMig = {"a10g-24gb", "l4-24gb", "l40s-48gb"};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// 1-based line of the first line containing `needle`, 0 if none.
inline int line_of(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find(needle) != std::string::npos) return number;
  }
  return 0;
}

// A valid profile without MIG; tests replace one line to break it.
inline const std::string kBase = R"(display_name: Test GPU
sms: {value: 8, assumption: "test"}
memory: {value: 16GiB, assumption: "test"}
hbm_bandwidth: {value: 1TB/s, assumption: "test"}
l2_cache: {value: 4MiB, assumption: "test"}
launch_overhead: {value: 2us, assumption: "test"}
timeslice: {value: 1024us, assumption: "test"}
context_switch: {value: 10us, assumption: "test"}
preemption_latency: {value: 10us, assumption: "test"}
cache_refill: {value: 4us, assumption: "test"}
mps_max_clients: {value: 48, assumption: "test"}
l2_bandwidth: {value: 4TB/s, assumption: "test"}
graph_launch_overhead: {value: 1us, assumption: "test"}
)";

inline std::string replace_line(const std::string& text, const std::string& key,
                                const std::string& replacement) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    out += (line.rfind(key + ":", 0) == 0 ? replacement : line) + "\n";
  }
  return out;
}

inline const std::string kMig = R"(mig:
  memory_slices: {value: 8, assumption: "test"}
  compute_slices: {value: 7, assumption: "test"}
  profiles:
    - name: 1g.2gb
      sms: 1
      memory: {value: 2GiB, assumption: "test"}
      memory_slices: 1
      compute_slices: 1
      max_count: 7
      placements: [0, 1, 2, 3, 4, 5, 6]
)";

// Expects parse_device_profile(text) to throw an InputError whose message contains every piece.
inline void expect_rejected(const std::string& text, const std::vector<std::string>& pieces) {
  try {
    parse_device_profile(text, "test.yaml");
    FAIL() << "accepted:\n" << text;
  } catch (const InputError& e) {
    for (const std::string& piece : pieces) {
      EXPECT_NE(std::string(e.what()).find(piece), std::string::npos)
          << "message: " << e.what() << "\nmissing: " << piece;
    }
  }
}

}  // namespace gpumux::testing
