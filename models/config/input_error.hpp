#pragma once
// InputError: the one exception type for bad user input (scenario, trace, profile, flags).
// The CLI maps it to exit code 2 and prints what() as a single line:
//   FILE:LINE:COLUMN: KEY.PATH: message
// Any part that is unknown is left out (e.g. no line for a command-line flag).
// A UserError (sim/util/error.hpp): the message is one line.
#include <string>

#include "sim/util/error.hpp"

namespace gpumux {

/// Where in a text input a value came from. line/column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key_path;  ///< dotted path into the document, e.g. "gpus.0.sharing.timeslice"

  /// "file:line:column: key.path" (parts that are unknown are omitted).
  std::string describe() const;
};

class InputError : public UserError {
 public:
  InputError(const SourceLocation& where, const std::string& message);
  explicit InputError(const std::string& message);
  const SourceLocation& where() const { return where_; }

 private:
  SourceLocation where_;
};

}  // namespace gpumux
