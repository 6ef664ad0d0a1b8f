#include "models/config/input_error.hpp"

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

static std::string with_location(const SourceLocation& where, const std::string& message) {
  const std::string prefix = where.describe();
  return prefix.empty() ? message : prefix + ": " + message;
}

InputError::InputError(const std::string& message) : UserError(message) {}

InputError::InputError(const SourceLocation& where, const std::string& message)
    : UserError(with_location(where, message)), where_(where) {}

}  // namespace gpumux
