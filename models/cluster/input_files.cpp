#include "models/cluster/input_files.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "sim/util/input_file.hpp"

namespace gpumux::cluster::detail {

std::string read_text_file(const std::string& path, const std::string& what,
                           const SourceLocation& referenced_from, std::int64_t limit) {
  SourceLocation where = referenced_from;
  if (where.file.empty()) where.file = path;
  const std::string shown = referenced_from.file.empty() ? "" : fmt::format(" {}", path);
  if (!std::ifstream(path, std::ios::binary)) {
    throw InputError(where, fmt::format("cannot open {}{}: {}", what, shown, std::strerror(errno)));
  }
  try {
    return input_file::read(path, limit, what.c_str());
  } catch (const input_file::FileError& e) {
    throw InputError(where, fmt::format("{}{}: {}", what, shown, e.what()));
  }
}

}  // namespace gpumux::cluster::detail
