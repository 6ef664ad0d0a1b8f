// Input files have stated size limits (issue 13, bounded work; sim/util/input_file.hpp): a
// regular file over the limit is refused before it is read, a pipe after limit + 1 bytes, a
// device (`model: /dev/zero`) or a directory before any byte; each with one line that names the
// limit or the kind of file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "sim/util/input_file.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpumux-input-file-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::string error_of(const std::string& path, std::int64_t limit) {
    try {
      input_file::read(path, limit, "test input");
    } catch (const input_file::FileError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(InputFile, ReadsAFileUpToTheLimitExactly) {
  const std::string path = write("ten.txt", "0123456789");
  EXPECT_EQ(input_file::read(path, 10, "test input"), "0123456789");
  EXPECT_EQ(error_of(path, 9), "10 bytes: over the 9 bytes limit for a test input");
}

TEST_F(InputFile, ALargeSparseFileIsRefusedBeforeReading) {
  // 3 GiB of holes: reading it would take seconds and 3 GiB of memory; the size alone refuses.
  const fs::path path = dir_ / "sparse.csv";
  std::ofstream(path).put('x');
  fs::resize_file(path, std::uintmax_t{3} << 30);
  EXPECT_EQ(error_of(path.string(), input_file::kMaxTraceBytes),
            "3 GiB: over the 2 GiB limit for a test input");
}

TEST_F(InputFile, DevicesAndDirectoriesAreRefusedBeforeAnyByteIsRead) {
  EXPECT_EQ(error_of("/dev/zero", input_file::kMaxScenarioBytes),
            "is a device, not a test input (gpumux reads regular files and pipes)");
  EXPECT_EQ(error_of(dir_.string(), 100), "is a directory, not a test input");
  EXPECT_EQ(error_of((dir_ / "missing").string(), 100),
            "cannot open test input: No such file or directory");
}

TEST_F(InputFile, AnEndlessPipeStopsAtTheLimit) {
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::signal(SIGPIPE, SIG_IGN);  // the writer's last write fails with EPIPE instead
  // The writer writes until the reader closes its end (EPIPE: the write fails, it stops).
  std::thread writer([&] {
    std::FILE* out = std::fopen(fifo.c_str(), "w");
    if (out == nullptr) return;
    const std::string block(4096, 'y');
    while (std::fwrite(block.data(), 1, block.size(), out) == block.size()) {
    }
    std::fclose(out);
  });
  EXPECT_EQ(error_of(fifo.string(), std::int64_t{1} << 20),
            "more than 1 MiB from a pipe: over the limit for a test input");
  writer.join();
}

TEST(InputFileLimits, AreStated) {
  EXPECT_EQ(input_file::format_limit(input_file::kMaxScenarioBytes), "16 MiB");
  EXPECT_EQ(input_file::format_limit(input_file::kMaxTraceBytes), "2 GiB");
  EXPECT_EQ(input_file::format_limit(input_file::kMaxSqliteBytes), "64 GiB");
}

}  // namespace
}  // namespace gpumux
