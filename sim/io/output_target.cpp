#include "sim/io/output_target.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include <hdf5.h>

namespace gpumux {
namespace {

constexpr int kMaxSymlinks = 40;  // as the kernel's MAXSYMLINKS

// The registered temporary file: a fixed buffer, so the signal handler reads no heap memory.
char g_temp_path[4096];
volatile std::sig_atomic_t g_temp_registered = 0;

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

int errno_named(std::string_view name) {
  if (name == "ENOSPC") return ENOSPC;
  if (name == "EIO") return EIO;
  if (name == "EACCES") return EACCES;
  if (name == "EROFS") return EROFS;
  if (name == "EDQUOT") return EDQUOT;
  if (name == "EXDEV") return EXDEV;
  return 0;
}

/// The test faults of this process (set_output_test_faults).
std::string& output_test_faults() {
  static std::string spec;
  return spec;
}

/// The value of POINT:VALUE in the test faults, or "" when absent.
std::string fault_entry(std::string_view point) {
  std::string_view rest = output_test_faults();
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto colon = entry.find(':');
    if (colon != std::string_view::npos && entry.substr(0, colon) == point) {
      return std::string(entry.substr(colon + 1));
    }
  }
  return "";
}

/// HDF5's description of a failed system call ends "..., errno = 28, error message = 'No space
/// left on device', buf = ...": the system's message alone, else WHAT unchanged.
std::string system_cause(const std::string& what) {
  constexpr std::string_view kKey = "error message = '";
  const auto start = what.find(kKey);
  if (start == std::string::npos) return what;
  const auto begin = start + kKey.size();
  const auto end = what.find('\'', begin);
  if (end == std::string::npos) return what;
  return what.substr(begin, end - begin);
}

}  // namespace

std::string shown_path(const std::string& path) {
  constexpr std::size_t kShown = 200;
  if (path.size() <= kShown) return path;
  return "..." + path.substr(path.size() - (kShown - 3));
}

std::string temp_output_name(const std::string& target) {
  return fmt::format("{}.tmp.{}", target, ::getpid());
}

OutputTarget check_output_target(const std::string& path) {
  auto refuse = [&path](const std::string& why) {
    std::string message = path.empty() ? std::string("(empty path)") : shown_path(path);
    message += ": ";
    message += why;
    return OutputError(message);
  };
  if (path.empty()) throw refuse("no file name");
  OutputTarget target;
  std::string current = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      const int error = errno;
      if (error == ENOENT || error == ENOTDIR) break;  // a new name; its directory is checked below
      throw refuse(std::strerror(error));
    }
    // "is a directory" or "is a symlink to T, which is a directory".
    auto what = [&](const char* kind) {
      std::string text;
      if (current == path) {
        text = "is ";
      } else {
        text = "is a symlink to ";
        text += current;
        text += ", which is ";
      }
      text += kind;
      text += "; a result file replaces only a regular file";
      return text;
    };
    if (S_ISREG(st.st_mode)) {
      target.exists = true;
      break;
    }
    if (!S_ISLNK(st.st_mode)) throw refuse(what(kind_of(st.st_mode)));
    if (hops >= kMaxSymlinks) throw refuse(std::strerror(ELOOP));
    std::string link(4096, '\0');
    const ssize_t n = ::readlink(current.c_str(), link.data(), link.size());
    if (n < 0) throw refuse(std::strerror(errno));
    link.resize(static_cast<std::size_t>(n));
    if (link.empty()) throw refuse("an empty symlink");
    if (link.front() != '/') {
      std::string joined = parent_of(current);
      joined += '/';
      joined += link;
      link = std::move(joined);
    }
    current = std::move(link);
  }
  target.path = current;
  target.directory = parent_of(current);

  struct stat dir {};
  if (::stat(target.directory.c_str(), &dir) != 0) {
    const int error = errno;
    std::string why = "directory ";
    why += target.directory;
    if (error == ENOENT) {
      why += " does not exist";
    } else {
      why += ": ";
      why += std::strerror(error);
    }
    throw refuse(why);
  }
  if (!S_ISDIR(dir.st_mode)) {
    std::string why = target.directory;
    why += " is not a directory";
    throw refuse(why);
  }
  // Probe: can a file be created beside the target? (root bypasses permission bits, so
  // access(2) would not tell; a read-only mount or /proc only shows when creating.)
  const std::string probe = temp_output_name(target.path);
  int error = injected_output_fault("probe");
  if (error == 0) {
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
    } else if (errno != EEXIST) {
      error = errno;
    }
  }
  if (error != 0) {
    std::string why = "cannot create a file in ";
    why += target.directory;
    why += ": ";
    why += std::strerror(error);
    throw refuse(why);
  }
  return target;
}

AtomicOutput::AtomicOutput(const std::string& path)
    : path_(path), target_(check_output_target(path)), temp_(temp_output_name(target_.path)) {
  register_temp_output(temp_.c_str());
}

AtomicOutput::~AtomicOutput() {
  if (done_) return;
  ::unlink(temp_.c_str());
  register_temp_output(nullptr);
}

OutputError AtomicOutput::fail(const std::string& why) {
  if (!done_) {
    ::unlink(temp_.c_str());
    register_temp_output(nullptr);
    done_ = true;
  }
  std::string message = "cannot write ";
  message += shown_path(path_);
  message += ": ";
  message += why;
  return OutputError(message);
}

OutputError AtomicOutput::failure(const std::exception& e) { return fail(system_cause(e.what())); }

void AtomicOutput::commit() {
  if (done_) throw fail("already closed");
  if (const int error = injected_output_fault("write"); error != 0) {
    std::string why = std::strerror(error);
    why += " [GPUMUX_TEST_FAULT]";
    throw fail(why);
  }
  if (const double stall = injected_output_stall(); stall > 0) {
    // Sleeps the whole time even when signals interrupt it (a test signals during the write).
    struct timespec left {};
    left.tv_sec = static_cast<time_t>(stall);
    left.tv_nsec = static_cast<long>((stall - static_cast<double>(left.tv_sec)) * 1e9);
    while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  // fsync before the rename: after a crash the target is the old file or the complete new one.
  int error = injected_output_fault("fsync");
  if (error == 0) {
    const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) error = errno;
    if (fd >= 0) ::close(fd);
  }
  if (error != 0) {
    std::string why = "fsync failed: ";
    why += std::strerror(error);
    throw fail(why);
  }
  error = injected_output_fault("rename");
  if (error == 0 && std::rename(temp_.c_str(), target_.path.c_str()) != 0) error = errno;
  if (error != 0) {
    std::string why = "rename from ";
    why += temp_;
    why += " failed: ";
    why += std::strerror(error);
    throw fail(why);
  }
  done_ = true;
  register_temp_output(nullptr);
  // fsync the directory so the rename itself is durable (best effort: not every file system
  // supports it, and the file is already in place).
  const int dir = ::open(target_.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void replace_file_atomically(const std::string& path,
                             const std::function<void(const std::string& temp)>& write_temp) {
  AtomicOutput output(path);
  try {
    write_temp(output.temp());  // a failed write closes the file while unwinding
  } catch (const std::exception& e) {
    throw output.failure(e);
  }
  output.commit();
}

void register_temp_output(const char* path) {
  g_temp_registered = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (path == nullptr) return;
  const std::size_t length = std::strlen(path);
  if (length >= sizeof(g_temp_path)) return;  // longer than PATH_MAX: not registered
  std::memcpy(g_temp_path, path, length + 1);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g_temp_registered = 1;
}

void remove_temp_output_signal_safe() {
  if (g_temp_registered != 0) ::unlink(g_temp_path);
}

void skip_hdf5_cleanup_at_exit() { H5dont_atexit(); }

void set_output_test_faults(std::string spec) { output_test_faults() = std::move(spec); }

int injected_output_fault(const char* point) { return errno_named(fault_entry(point)); }

double injected_output_stall() {
  const std::string value = fault_entry("stall");
  if (value.empty()) return 0.0;
  return std::strtod(value.c_str(), nullptr);
}

}  // namespace gpumux
