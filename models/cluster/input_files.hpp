#pragma once
// Internal to the cluster input readers: reading a whole text file within its size limit
// (sim/util/input_file.hpp: YAML configs 16 MiB, trace CSVs 2 GiB), with the failure as an
// InputError naming the file (and the key that referenced it, when there is one).
#include <cstdint>
#include <string>

#include "models/config/input_error.hpp"

namespace gpumux::cluster::detail {

/// The bytes of `path`, at most `limit`. Throws InputError at `referenced_from` (or at the file
/// itself when that has no file) for a missing or unreadable path, a directory, device or
/// socket, or a file over the limit; `what` names the kind of file ("device-plugin config").
std::string read_text_file(const std::string& path, const std::string& what,
                           const SourceLocation& referenced_from = {},
                           std::int64_t limit = std::int64_t{16} << 20);

}  // namespace gpumux::cluster::detail
