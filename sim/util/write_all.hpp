#pragma once
// write_all(): all of a string to a file descriptor (a pipe between a process and its fork),
// retrying interrupted and short writes. length_framed(): a message as its 8-byte length (host
// byte order: both ends are forks of one binary) then its text. O(size).
#include <unistd.h>

#include <cerrno>
#include <cstdint>
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

/// TEXT as one frame: its length (std::uint64_t, 8 bytes) then the text itself.
inline std::string length_framed(const std::string& text) {
  const std::uint64_t size = text.size();
  std::string frame(reinterpret_cast<const char*>(&size), sizeof size);
  frame += text;
  return frame;
}

}  // namespace gpumux
