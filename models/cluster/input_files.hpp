#pragma once
// Internal to the cluster input readers: reading a whole text file, with the failure as an
// InputError naming the file (and the key that referenced it, when there is one).
#include <string>

#include "models/config/input_error.hpp"

namespace gpumux::cluster::detail {

/// The bytes of `path`. Throws InputError at `referenced_from` (or at the file itself when that
/// has no file) for a missing, unreadable or directory path; `what` names the kind of file
/// ("device-plugin config").
std::string read_text_file(const std::string& path, const std::string& what,
                           const SourceLocation& referenced_from = {});

}  // namespace gpumux::cluster::detail
