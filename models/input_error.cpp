#include "models/input_error.hpp"

#include <algorithm>

namespace gpumux {

std::string SourceLocation::describe() const {
  // Appended piecewise: `text += ":" + std::to_string(n)` trips GCC 12's -Wrestrict false
  // positive (bug 105329) in the inlined std::string operator+.
  std::string text = file;
  if (line > 0) {
    text += ':';
    text += std::to_string(line);
    if (column > 0) {
      text += ':';
      text += std::to_string(column);
    }
  }
  // A command-line flag as the source reads "--set key.path", as the user typed it.
  const bool flag = line == 0 && text.rfind("--", 0) == 0;
  if (!key_path.empty()) text += (text.empty() ? "" : flag ? " " : ": ") + key_path;
  return text;
}

// The message is always one line: a value quoted from a broken document (an unclosed quote
// swallowing the next lines) is folded onto it and cut short.
static std::string one_line(const std::string& text) {
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

static std::string with_location(const SourceLocation& where, const std::string& message) {
  const std::string prefix = where.describe();
  return one_line(prefix.empty() ? message : prefix + ": " + message);
}

InputError::InputError(const std::string& message) : std::runtime_error(one_line(message)) {}

InputError::InputError(const SourceLocation& where, const std::string& message)
    : std::runtime_error(with_location(where, message)), where_(where) {}

}  // namespace gpumux
