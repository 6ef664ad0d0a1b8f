#pragma once
// UserError: the base of every error that is the user's to fix (bad input, a result file that
// cannot be written), as opposed to a bug. The front end (CLI, Python) reports what() as one line
// and exits 2 (Python: gpumux.ScenarioError). The message is folded onto one line and cut short
// (one_line). Subclasses: InputError (models/config/input_error.hpp, adds the file, line and key
// of the bad value), OutputError (sim/io/output_target.hpp).
#include <stdexcept>
#include <string>

namespace gpumux {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message);
};

/// The text on one line: newlines and tabs become single spaces, at most 400 characters then
/// "..." (a value quoted from a broken document, e.g. an unclosed quote swallowing the next
/// lines, must not flood the terminal).
std::string one_line(const std::string& text);

}  // namespace gpumux
