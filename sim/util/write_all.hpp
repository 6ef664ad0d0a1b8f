#pragma once
// write_all(): all of a string to a file descriptor (a pipe between a process and its fork),
// retrying interrupted and short writes. O(size).
#include <unistd.h>

#include <cerrno>
#include <string>

namespace gpumux {

/// Writes all of TEXT to FD; false when a write fails (the reader went away, ...).
inline bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace gpumux
