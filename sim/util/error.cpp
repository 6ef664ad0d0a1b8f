#include "sim/util/error.hpp"

#include <algorithm>

namespace gpumux {

std::string one_line(const std::string& text) {
  constexpr std::size_t kMaxLength = 400;
  std::string out;
  out.reserve(std::min(text.size(), kMaxLength + 3));
  for (const char c : text) {
    if (out.size() >= kMaxLength) {
      out += "...";
      break;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

UserError::UserError(const std::string& message) : std::runtime_error(one_line(message)) {}

}  // namespace gpumux
