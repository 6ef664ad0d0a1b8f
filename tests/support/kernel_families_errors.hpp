#pragma once
// A kernel-families.yaml text that must be refused: parse_kernel_families throws one InputError
// naming the file (k.yaml), the entry's key path and `why`.
#include <gtest/gtest.h>

#include <string>

#include "models/config/input_error.hpp"
#include "models/workload/workload_catalog.hpp"

namespace gpumux::testing {

inline void expect_kernel_families_refused(const std::string& text, const std::string& key,
                                           const std::string& why) {
  try {
    parse_kernel_families(text, "k.yaml");
    ADD_FAILURE() << "no error for " << why << " in " << key;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("k.yaml:"), std::string::npos) << what;
    EXPECT_NE(what.find(key), std::string::npos) << what;
    EXPECT_NE(what.find(why), std::string::npos) << what;
  }
}

}  // namespace gpumux::testing
