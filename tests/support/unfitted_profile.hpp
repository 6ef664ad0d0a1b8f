#pragma once
// A shipped profile without its fitted time-alone terms (kernel_fixed_cost, block_round_cost,
// host_per_request; docs/calibration.md) and without host copies (pcie_bandwidth): the
// first-principles roofline whose closed forms the catalog and LLM-card tests assert. The fitted
// terms have their own closed-form tests (test_calibrate.cpp). A copy, kept for the process.
#include <map>
#include <memory>
#include <string>

#include "models/config/profile_loader.hpp"

namespace gpumux {

inline const DeviceProfile& unfitted_profile(const std::string& name) {
  static std::map<std::string, std::unique_ptr<DeviceProfile>> copies;
  auto& copy = copies[name];
  if (!copy) {
    copy = std::make_unique<DeviceProfile>(load_device_profile(name));
    copy->kernel_fixed_cost = 0;
    copy->block_round_cost = 0;
    copy->host_per_request.clear();
    copy->pcie_bandwidth = 0;
  }
  return *copy;
}

}  // namespace gpumux
