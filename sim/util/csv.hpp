#pragma once
// The one quoted-CSV field splitter (RFC 4180 quoting), used by the request-trace reader
// (models/scenario/trace_reader.cpp) and the kernel-trace CSV and ncu readers
// (models/scenario/kernel_trace_csv.cpp, kernel_trace_ncu.cpp). Cost: O(length).
#include <string>
#include <string_view>
#include <vector>

namespace gpumux {

/// One CSV line split into fields. Commas separate; double quotes enclose (a comma inside quotes
/// is text); "" inside quotes is one quote. Each field is trimmed of surrounding white space
/// (std::isspace) after unquoting. An empty line is one empty field; a trailing comma ends with
/// an empty field. Throws std::invalid_argument("unterminated quoted field") when a quote is
/// left open (callers add the file and line).
std::vector<std::string> split_csv_line(std::string_view line);

}  // namespace gpumux
