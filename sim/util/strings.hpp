#pragma once
// Small string helpers shared by every layer (one copy each). Cost: O(length).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumux {

/// TEXT without leading and trailing spaces and tabs.
std::string trim(std::string_view text);

/// TEXT without leading and trailing whitespace of every kind (isspace: also \r, \n), e.g. the
/// \r a CRLF file leaves on each line.
std::string_view strip_whitespace(std::string_view text);

/// ITEMS separated by SEPARATOR ("a, b, c"); "" for none.
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

/// TEXT cut at every SEPARATOR ("a,,b" -> "a", "", "b"; "" -> one empty item). No quoting.
std::vector<std::string> split(std::string_view text, char separator);

/// FNV-1a 64-bit hash of bytes (stable across platforms and runs).
std::uint64_t fnv1a64(std::string_view bytes);

}  // namespace gpumux
