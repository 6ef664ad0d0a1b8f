#include "sim/io/output_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gpumux {
namespace {

namespace fs = std::filesystem;

OutputError refused(const std::string& path, const std::string& why) {
  std::string message = path.empty() ? std::string("(empty path)") : shown_path(path);
  message += ": ";
  message += why;
  return OutputError(message);
}

const char* kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a directory";
}

// The first entry under DIR that OWNED refuses ("" when all are owned, or on a listing error,
// which the caller reports). Folders are passed with a trailing '/'.
std::string foreign_entry(const std::string& dir, const OwnedEntry& owned, std::error_code& error) {
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    std::string relative = fs::relative(it->path(), dir, error).generic_string();
    if (error) return "";
    const bool folder = it->symlink_status(error).type() == fs::file_type::directory;
    if (error) return "";
    if (folder) relative += '/';
    if (!owned(relative)) return relative;
  }
  return "";
}

void remove_tree(const std::string& path) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

// The temporary folder being filled: a fixed buffer, so a signal handler reads no heap memory.
char g_temp_folder[4096];
volatile std::sig_atomic_t g_temp_folder_registered = 0;

void register_temp_folder(const char* path) {
  g_temp_folder_registered = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (path == nullptr) return;
  const std::size_t length = std::strlen(path);
  if (length >= sizeof(g_temp_folder)) return;  // longer than PATH_MAX: not registered
  std::memcpy(g_temp_folder, path, length + 1);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g_temp_folder_registered = 1;
}

/// Unregisters the temporary folder when the write it belongs to ends, however it ends.
struct TempFolderRegistration {
  explicit TempFolderRegistration(const std::string& path) { register_temp_folder(path.c_str()); }
  ~TempFolderRegistration() { register_temp_folder(nullptr); }
  TempFolderRegistration(const TempFolderRegistration&) = delete;
  TempFolderRegistration& operator=(const TempFolderRegistration&) = delete;
};

constexpr int kMaxSignalSafeDepth = 16;  // a plan's folder is two levels deep (DIR/pods/FILE)

/// Removes NAME under the folder PARENT (a file, or a folder and all it holds) with system
/// calls only (open, getdents64, unlinkat, close: async-signal-safe, no heap, no locks).
/// Returns whether NAME is gone.
bool remove_at_signal_safe(int parent, const char* name, int depth) {
  if (::unlinkat(parent, name, 0) == 0) return true;
  if ((errno != EISDIR && errno != EPERM) || depth >= kMaxSignalSafeDepth) return false;
  const int dir = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return false;
  alignas(8) char entries[4096];
  // Read from the start again after each pass, until a pass finds nothing left to remove.
  for (bool removed = true; removed;) {
    removed = false;
    ::lseek(dir, 0, SEEK_SET);
    for (;;) {
      const long n = ::syscall(SYS_getdents64, dir, entries, sizeof entries);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        const auto* entry = reinterpret_cast<const struct dirent64*>(entries + at);
        at += entry->d_reclen;
        const char* child = entry->d_name;
        if (child[0] == '.' && (child[1] == '\0' || (child[1] == '.' && child[2] == '\0'))) {
          continue;
        }
        removed = remove_at_signal_safe(dir, child, depth + 1) || removed;
      }
    }
  }
  ::close(dir);
  return ::unlinkat(parent, name, AT_REMOVEDIR) == 0;
}

}  // namespace

OutputDirectory check_output_directory(const std::string& path, const OwnedEntry& owned) {
  std::string name = path;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  if (name.empty()) throw refused(path, "no folder name");
  const auto slash = name.find_last_of('/');
  const std::string last = slash == std::string::npos ? name : name.substr(slash + 1);
  if (name == "/" || last == "." || last == "..") {
    throw refused(path, "name a folder to write (it is replaced whole), not . , .. or /");
  }
  OutputDirectory target;
  target.path = name;
  struct stat st {};
  if (::lstat(name.c_str(), &st) != 0) {
    const int error = errno;
    if (error != ENOENT) throw refused(path, std::strerror(error));
  } else {
    if (S_ISLNK(st.st_mode)) {
      char real[PATH_MAX];
      if (::realpath(name.c_str(), real) == nullptr) {
        throw refused(path,
                      std::string("a symlink that cannot be followed: ") + std::strerror(errno));
      }
      target.path = real;
      if (::stat(real, &st) != 0) throw refused(path, std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      std::string why = "is ";
      why += kind_of(st.st_mode);
      why += "; -o DIR writes a folder (a new name, or a folder it wrote before)";
      throw refused(path, why);
    }
    target.exists = true;
    std::error_code error;
    const std::string foreign = foreign_entry(target.path, owned, error);
    if (error) throw refused(path, "cannot list it: " + error.message());
    if (!foreign.empty()) {
      throw refused(path, "holds " + foreign +
                              ", which gpumux did not write; the folder is replaced whole, so "
                              "name a new folder or empty this one");
    }
  }
  const auto parent_slash = target.path.find_last_of('/');
  target.parent = parent_slash == std::string::npos ? "."
                  : parent_slash == 0               ? "/"
                                                    : target.path.substr(0, parent_slash);
  struct stat dir {};
  if (::stat(target.parent.c_str(), &dir) != 0) {
    const int error = errno;
    throw refused(path, "directory " + target.parent +
                            (error == ENOENT ? std::string(" does not exist")
                                             : std::string(": ") + std::strerror(error)));
  }
  if (!S_ISDIR(dir.st_mode)) throw refused(path, target.parent + " is not a directory");
  // Probe: can the temporary folder be created beside the target (permissions, read-only
  // mounts, a name too long once ".tmp.PID" is added)?
  const std::string probe = temp_output_name(target.path);
  int error = injected_output_fault("probe");
  if (error == 0) {
    if (::mkdir(probe.c_str(), 0777) == 0) {
      ::rmdir(probe.c_str());
    } else if (errno != EEXIST) {
      error = errno;
    }
  }
  if (error != 0) {
    throw refused(path, "cannot create a folder in " + target.parent + ": " + std::strerror(error));
  }
  return target;
}

void replace_directory_atomically(const std::string& path, const OwnedEntry& owned,
                                  const std::function<void(const std::string& temp)>& write) {
  const OutputDirectory target = check_output_directory(path, owned);
  const std::string temp = temp_output_name(target.path);
  remove_tree(temp);  // a folder left by a killed process with this PID
  auto fail = [&](const std::string& why) {
    remove_tree(temp);
    return OutputError("cannot write " + shown_path(path) + ": " + why);
  };
  if (::mkdir(temp.c_str(), 0777) != 0) throw fail(std::strerror(errno));
  const TempFolderRegistration registered(temp);  // a second signal removes it (see the header)
  try {
    write(temp);
  } catch (const OutputError& e) {
    remove_tree(temp);
    // Name the folder the user gave, not the temporary one its files were written in.
    std::string message = e.what();
    for (auto at = message.find(temp); at != std::string::npos;
         at = message.find(temp, at + target.path.size())) {
      message.replace(at, temp.size(), target.path);
    }
    throw OutputError(message);
  } catch (const std::exception& e) {
    throw fail(e.what());
  }
  if (const int injected = injected_output_fault("rename"); injected != 0) {
    throw fail(std::string(std::strerror(injected)) + " [GPUMUX_TEST_FAULT]");
  }
  bool exists = target.exists;
  if (!exists) {
    if (std::rename(temp.c_str(), target.path.c_str()) == 0) {
      // in place
    } else if (errno == ENOTEMPTY || errno == EEXIST) {
      // Another process (a concurrent plan) created the folder since the check: replace it as an
      // earlier plan's folder, whole, if it holds only what this write owns (the last wins).
      try {
        exists = check_output_directory(path, owned).exists;
      } catch (const std::exception&) {
        remove_tree(temp);
        throw;
      }
      if (!exists) throw fail("rename from " + temp + " failed: " + std::strerror(ENOTEMPTY));
    } else {
      throw fail("rename from " + temp + " failed: " + std::strerror(errno));
    }
  }
  if (!exists) {
    // renamed into place above
  } else if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.path.c_str(), RENAME_EXCHANGE) ==
             0) {
    remove_tree(temp);  // the old folder, now under the temporary name
  } else {
    // No atomic exchange here (EINVAL on file systems without it): move the old folder aside,
    // the new one in, and the old one back if that fails.
    const std::string old = target.path + ".old." + std::to_string(::getpid());
    remove_tree(old);
    if (std::rename(target.path.c_str(), old.c_str()) != 0) {
      throw fail("moving the old folder aside failed: " + std::string(std::strerror(errno)));
    }
    if (std::rename(temp.c_str(), target.path.c_str()) != 0) {
      const int rename_error = errno;
      std::rename(old.c_str(), target.path.c_str());
      throw fail("rename from " + temp + " failed: " + std::strerror(rename_error));
    }
    remove_tree(old);
  }
  const int dir = ::open(target.parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void remove_temp_output_directory_signal_safe() {
  if (g_temp_folder_registered != 0) {
    [[maybe_unused]] const bool gone = remove_at_signal_safe(AT_FDCWD, g_temp_folder, 0);
  }
}

}  // namespace gpumux
