#include "sim/util/csv.hpp"

#include "sim/util/strings.hpp"

#include <cctype>
#include <stdexcept>

namespace gpumux {

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back(strip_whitespace(field));
      field.clear();
    } else {
      field += c;
    }
  }
  if (quoted) throw std::invalid_argument("unterminated quoted field");
  fields.emplace_back(strip_whitespace(field));
  return fields;
}

}  // namespace gpumux
