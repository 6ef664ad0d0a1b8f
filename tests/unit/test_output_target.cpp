// Where result files may be written (check_output_target) and the atomic replace with its
// temporary file (replace_file_atomically): refused kinds, symlinks, faults, no temp left.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/io/output_target.hpp"
#include "tests/support/scratch_folder.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

class OutputTargetTest : public ScratchFolderTest {
 protected:
  OutputTargetTest() : ScratchFolderTest("gpumux_output_target_") {}
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  /// The OutputError message of check_output_target(P), or "" when it passed.
  static std::string refusal(const std::string& p) {
    try {
      check_output_target(p);
      return "";
    } catch (const OutputError& e) {
      return e.what();
    }
  }
  static std::string contents(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void write_text(const std::string& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
};

TEST_F(OutputTargetTest, NewNameAndRegularFileAreAccepted) {
  const OutputTarget fresh = check_output_target(path("new.h5"));
  EXPECT_EQ(fresh.path, path("new.h5"));
  EXPECT_EQ(fresh.directory, dir_.string());
  EXPECT_FALSE(fresh.exists);
  write_text(path("old.h5"), "x");
  EXPECT_TRUE(check_output_target(path("old.h5")).exists);
  EXPECT_EQ(listing(), std::vector<std::string>{"old.h5"});  // the probe file is gone
}

TEST_F(OutputTargetTest, RelativeNameLivesInTheCurrentDirectory) {
  EXPECT_EQ(check_output_target("gpumux-relative-probe.h5").directory, ".");
}

TEST_F(OutputTargetTest, RefusedKindsNameThePathAndWhy) {
  fs::create_directory(path("dir.h5"));
  ASSERT_EQ(::mkfifo(path("fifo.h5").c_str(), 0644), 0);
  const std::string socket_path = path("sock.h5");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof(address.sun_path));
  std::copy(socket_path.begin(), socket_path.end(), address.sun_path);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  fs::create_symlink("/dev/null", path("null.h5"));

  EXPECT_EQ(refusal(path("dir.h5")),
            path("dir.h5") + ": is a directory; a result file replaces only a regular file");
  EXPECT_EQ(refusal(path("fifo.h5")),
            path("fifo.h5") +
                ": is a FIFO (named pipe); a result file replaces only a regular "
                "file");
  EXPECT_NE(refusal(socket_path).find(": is a socket;"), std::string::npos);
  EXPECT_EQ(refusal(path("null.h5")),
            path("null.h5") +
                ": is a symlink to /dev/null, which is a character device; a "
                "result file replaces only a regular file");
  EXPECT_NE(refusal("/dev/null").find("character device"), std::string::npos);
  ::close(fd);
}

TEST_F(OutputTargetTest, SymlinksAreFollowedRelativeToTheirDirectory) {
  fs::create_directory(path("sub"));
  write_text(path("sub/real.h5"), "x");
  fs::create_symlink("real.h5", path("sub/link.h5"));
  fs::create_symlink("sub/link.h5", path("top.h5"));
  const OutputTarget target = check_output_target(path("top.h5"));
  EXPECT_EQ(target.path, path("sub") + "/real.h5");
  EXPECT_EQ(target.directory, path("sub"));
  EXPECT_TRUE(target.exists);

  fs::create_symlink("loop-b.h5", path("loop-a.h5"));
  fs::create_symlink("loop-a.h5", path("loop-b.h5"));
  EXPECT_NE(refusal(path("loop-a.h5")).find("Too many levels of symbolic links"),
            std::string::npos);
}

TEST_F(OutputTargetTest, MissingOrBadDirectory) {
  EXPECT_EQ(refusal(path("no/such/out.h5")),
            path("no/such/out.h5") + ": directory " + path("no/such") + " does not exist");
  write_text(path("plain"), "x");
  EXPECT_EQ(refusal(path("plain/out.h5")),
            path("plain/out.h5") + ": " + path("plain") + " is not a directory");
  EXPECT_NE(refusal("/proc/gpumux-out.h5").find("cannot create a file in /proc"),
            std::string::npos);
  EXPECT_EQ(refusal(""), "(empty path): no file name");
}

TEST_F(OutputTargetTest, InjectedProbeFailure) {
  set_output_test_faults("probe:EACCES");
  EXPECT_EQ(refusal(path("out.h5")),
            path("out.h5") + ": cannot create a file in " + dir_.string() + ": Permission denied");
  EXPECT_TRUE(listing().empty());
}

TEST_F(OutputTargetTest, ReplacesAtomicallyThroughATempBesideTheTarget) {
  write_text(path("out.h5"), "old");
  std::string seen_temp;
  replace_file_atomically(path("out.h5"), [&](const std::string& temp) {
    seen_temp = temp;
    write_text(temp, "new");
    EXPECT_EQ(contents(path("out.h5")), "old");  // untouched until the rename
  });
  EXPECT_EQ(seen_temp, path("out.h5") + ".tmp." + std::to_string(::getpid()));
  EXPECT_EQ(contents(path("out.h5")), "new");
  EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"});
}

TEST_F(OutputTargetTest, ReplacingThroughASymlinkKeepsTheLink) {
  write_text(path("real.h5"), "old");
  fs::create_symlink("real.h5", path("out.h5"));
  replace_file_atomically(path("out.h5"), [&](const std::string& temp) {
    EXPECT_EQ(temp, path("real.h5") + ".tmp." + std::to_string(::getpid()));
    write_text(temp, "new");
  });
  EXPECT_TRUE(fs::is_symlink(path("out.h5")));
  EXPECT_EQ(contents(path("real.h5")), "new");
}

TEST_F(OutputTargetTest, EveryFailureKeepsThePreviousFileAndRemovesTheTemp) {
  write_text(path("out.h5"), "old");
  auto writer = [](const std::string& temp) { write_text(temp, "new"); };
  for (const char* fault : {"write:ENOSPC", "fsync:EIO", "rename:EXDEV"}) {
    set_output_test_faults(fault);
    EXPECT_THROW(replace_file_atomically(path("out.h5"), writer), OutputError) << fault;
    EXPECT_EQ(contents(path("out.h5")), "old") << fault;
    EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"}) << fault;
  }
  set_output_test_faults("");
  // The writer itself fails after creating the temporary file (as HDF5 on a full disk).
  try {
    replace_file_atomically(path("out.h5"), [](const std::string& temp) {
      write_text(temp, "partial");
      throw std::runtime_error(
          "closing x: file write failed: errno = 28, error message = 'No space left on device', "
          "buf = 0x1");
    });
    FAIL() << "expected OutputError";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write " + path("out.h5") + ": No space left on device");
  }
  EXPECT_EQ(contents(path("out.h5")), "old");
  EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"});
}

TEST_F(OutputTargetTest, SignalHandlerRemovesTheRegisteredTemp) {
  std::string registered;
  EXPECT_THROW(replace_file_atomically(path("out.h5"),
                                       [&](const std::string& temp) {
                                         write_text(temp, "partial");
                                         registered = temp;
                                         // What the CLI's second-signal handler does.
                                         remove_temp_output_signal_safe();
                                         EXPECT_FALSE(fs::exists(temp));
                                         throw std::runtime_error("stopped");
                                       }),
               OutputError);
  EXPECT_FALSE(registered.empty());
  EXPECT_TRUE(listing().empty());
  // After a write the registration is cleared: a later signal removes nothing.
  replace_file_atomically(path("done.h5"), [](const std::string& t) { write_text(t, "x"); });
  write_text(registered, "someone else's file");
  remove_temp_output_signal_safe();
  EXPECT_TRUE(fs::exists(registered));
}

}  // namespace
}  // namespace gpumux
