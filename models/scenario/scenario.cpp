#include "models/scenario/scenario.hpp"

namespace gpumux {

// The returned location keeps the requested key path even when the line and column come from an
// ancestor, so a message built from it names what is wrong ("tenants.1.memory"), not the block.
SourceLocation Scenario::locate(const std::string& key_path) const {
  std::string path = key_path;
  while (!path.empty()) {
    const auto it = locations.find(path);
    if (it != locations.end()) {
      SourceLocation where = it->second;
      where.key_path = key_path;
      return where;
    }
    const auto dot = path.rfind('.');
    if (dot == std::string::npos) break;
    path.erase(dot);
  }
  SourceLocation where;
  where.file = source_file;
  where.key_path = key_path;
  return where;
}

}  // namespace gpumux
