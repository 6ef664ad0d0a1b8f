#pragma once
// The scenario loader tests' fixtures (tests/unit/test_scenario_loader*.cpp,
// test_scenario_emit.cpp): the test data folder, the smallest valid scenario whose line numbers the
// error tests rely on, one-line edits of it, the error a text raises, and EXPECT_CONTAINS.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/scenario/loader.hpp"

namespace gpumux::testing {

inline const std::string kData = std::string(GPUMUX_SOURCE_DIR) + "/tests/data/";
inline const std::string kFull = kData + "scenarios/full.yaml";

// The smallest valid scenario; the error tests edit one line of it, so line numbers are fixed:
constexpr const char* kMinimal =
    "name: t\n"                                                  // 1
    "duration: 10s\n"                                            // 2
    "gpus:\n"                                                    // 3
    "  - name: gpu0\n"                                           // 4
    "    model: h100-sxm-80gb\n"                                 // 5
    "    sharing:\n"                                             // 6
    "      mode: time-slicing\n"                                 // 7
    "tenants:\n"                                                 // 8
    "  - name: chat\n"                                           // 9
    "    device: gpu0\n"                                         // 10
    "    replicas: 1\n"                                          // 11
    "    workload:\n"                                            // 12
    "      arrivals: {process: poisson, rate: 50/s}\n"           // 13
    "      request:\n"                                           // 14
    "        kernels:\n"                                         // 15
    "          - {name: k, duration: 2ms, sm_fraction: 0.5}\n";  // 16

// kMinimal with the first occurrence of `from` replaced by `to`.
inline std::string edited(const std::string& from, const std::string& to) {
  std::string text = kMinimal;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// The InputError message of loading YAML (with OVERRIDES), or "(no error)".
inline std::string error_of(const std::string& yaml, const std::vector<Override>& overrides = {}) {
  try {
    load_scenario_text(yaml, "bad.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace gpumux::testing

/// TEXT contains PART (reported with the whole text).
#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)
