#include "sim/util/input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace gpumux::input_file {
namespace {

std::string size_text(double bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[48];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  } else {
    std::snprintf(
        text, sizeof text,
        bytes == static_cast<double>(static_cast<std::int64_t>(bytes)) ? "%.0f %s" : "%.1f %s",
        bytes, kUnits[unit]);
  }
  return text;
}

}  // namespace

std::string format_limit(std::int64_t bytes) { return size_text(static_cast<double>(bytes)); }

void check(const std::string& path, std::int64_t limit, const char* what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return;  // the caller's open says why
  const auto type = info.st_mode & S_IFMT;
  const std::string kind(what);
  if (type == S_IFDIR) throw FileError("is a directory, not a " + kind);
  if (type == S_IFCHR || type == S_IFBLK) {
    throw FileError("is a device, not a " + kind + " (gpumux reads regular files and pipes)");
  }
  if (type == S_IFSOCK) throw FileError("is a socket, not a " + kind);
  if (type == S_IFREG && info.st_size > limit) {
    throw FileError(size_text(static_cast<double>(info.st_size)) + ": over the " +
                    format_limit(limit) + " limit for a " + kind);
  }
}

std::string read(const std::string& path, std::int64_t limit, const char* what) {
  check(path, limit, what);
  const std::string kind(what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError("cannot open " + kind + ": " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    if (static_cast<std::int64_t>(text.size()) + got > limit) {
      throw FileError("more than " + format_limit(limit) + " from a pipe: over the limit for a " +
                      kind);
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
  if (in.bad()) throw FileError("cannot read " + kind + ": " + std::strerror(errno));
  return text;
}

}  // namespace gpumux::input_file
