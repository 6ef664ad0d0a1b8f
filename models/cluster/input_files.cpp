#include "models/cluster/input_files.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpumux::cluster::detail {

std::string read_text_file(const std::string& path, const std::string& what,
                           const SourceLocation& referenced_from) {
  SourceLocation where = referenced_from;
  if (where.file.empty()) where.file = path;
  const std::string shown = referenced_from.file.empty() ? "" : fmt::format(" {}", path);
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw InputError(where, fmt::format("cannot open {}{}: it is a directory", what, shown));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(where, fmt::format("cannot open {}{}: {}", what, shown, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw InputError(where, fmt::format("cannot read {}{}: {}", what, shown, std::strerror(errno)));
  }
  return text.str();
}

}  // namespace gpumux::cluster::detail
