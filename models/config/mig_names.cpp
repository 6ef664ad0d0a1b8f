#include "models/config/mig_names.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "models/config/input_error.hpp"
#include "sim/util/strings.hpp"

namespace gpumux {
namespace {

std::vector<std::string> layout_names(const DeviceProfile& gpu) {
  std::vector<std::string> names;
  for (const auto& [name, layout] : gpu.mig_layouts) names.push_back(name);
  return names;
}

// "3g.40gb" style: a digit run followed by "g." (used to tell a mistyped profile from a
// mistyped layout name).
bool looks_like_profile_name(const std::string& name) {
  std::size_t i = 0;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  return i > 0 && name.compare(i, 2, "g.") == 0;
}

}  // namespace

std::vector<std::string> expand_profile_count(const std::string& item) {
  const std::string text = trim(item);
  const auto colon = text.find(':');
  if (colon == std::string::npos) return {text};
  const std::string name = trim(text.substr(0, colon));
  const std::string count_text = trim(text.substr(colon + 1));
  if (name.empty()) throw std::invalid_argument("missing MIG profile before ':' in '" + text + "'");
  const bool digits = !count_text.empty() && count_text.size() <= 2 &&
                      std::all_of(count_text.begin(), count_text.end(),
                                  [](unsigned char c) { return std::isdigit(c); });
  const int count = digits ? std::stoi(count_text) : 0;
  if (count < 1 || count > 7) {
    throw std::invalid_argument("expected PROFILE:COUNT with a count from 1 to 7, e.g. " + name +
                                ":2, got '" + text + "'");
  }
  return std::vector<std::string>(static_cast<std::size_t>(count), name);
}

std::vector<std::string> expand_mig_layout(const DeviceProfile& gpu,
                                           const std::vector<std::string>& names_or_layout) {
  auto append = [](std::vector<std::string>& out, const std::string& item) {
    try {
      for (std::string& name : expand_profile_count(item)) out.push_back(std::move(name));
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
  };
  if (names_or_layout.size() != 1) {
    std::vector<std::string> expanded;
    for (const std::string& name : names_or_layout) append(expanded, name);
    return expanded;
  }
  const std::string only = trim(names_or_layout.front());
  if (const auto it = gpu.mig_layouts.find(only); it != gpu.mig_layouts.end()) return it->second;
  if (only.find(',') != std::string::npos || only.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    std::size_t begin = 0;
    while (true) {
      const std::size_t comma = only.find(',', begin);
      const std::string part = trim(only.substr(begin, comma - begin));
      if (part.empty()) throw InputError("empty MIG profile name in '" + only + "'");
      append(parts, part);
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    return parts;
  }
  if (gpu.find_mig_profile(only) || looks_like_profile_name(only)) return {only};
  if (gpu.mig_layouts.empty()) {
    throw InputError(
        "unknown MIG layout '" + only + "': " + gpu.name +
        " has no named layouts; list profiles, e.g. " +
        (gpu.mig_profiles.empty() ? std::string("3g.40gb,1g.10gb") : gpu.mig_profiles.back().name));
  }
  throw InputError("unknown MIG layout '" + only + "' on " + gpu.name + "; known layouts: " +
                   join(layout_names(gpu), ", ") + "; or list profiles, e.g. " +
                   gpu.mig_profiles.front().name + "," + gpu.mig_profiles.front().name);
}

}  // namespace gpumux
