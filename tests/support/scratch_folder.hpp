#pragma once
// A GoogleTest fixture with a fresh folder per test, under the system's temporary folder and
// named after the test (PREFIX + pid + test name), removed afterwards; the output writers' test
// faults (set_output_test_faults) are cleared before and after each test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>

#include "sim/io/output_target.hpp"

namespace gpumux {

class ScratchFolderTest : public ::testing::Test {
 protected:
  explicit ScratchFolderTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    set_output_test_faults("");
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    set_output_test_faults("");
    std::filesystem::remove_all(dir_);
  }
  /// NAME inside the test's folder.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace gpumux
