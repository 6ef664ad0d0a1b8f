#pragma once
// The LLM serving tests' helpers (tests/unit/test_llm_serving.cpp, test_llm_card_variants.cpp): a
// shipped model card by name, a kernel of a built list by name, a scenario text run.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/run/runner.hpp"
#include "models/workload/llm_card.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux::testing {

/// The shipped card NAME at tensor parallelism TP.
inline LlmCard card(const std::string& name, int tp = 1) {
  LlmCard c;
  load_llm_card(name, c);
  c.tp = tp;
  return c;
}

inline const KernelSpec& kernel_named(const std::vector<KernelSpec>& kernels,
                                      const std::string& name) {
  const auto it = std::find_if(kernels.begin(), kernels.end(),
                               [&](const KernelSpec& k) { return k.name == name; });
  EXPECT_NE(it, kernels.end()) << name;
  return *it;
}

/// Loads, resolves and simulates TEXT (named llm-test.yaml in errors).
inline RunResult run_text(const std::string& text) {
  return simulate(resolve_scenario(load_scenario_text(text, "llm-test.yaml")));
}

}  // namespace gpumux::testing
