// Finding a device profile by name (profile_loader.hpp): the profiles embedded at build time,
// their nvidia-smi names as aliases, paths to profile files, and the per-process cache that
// load_device_profile returns references into. Parsing a profile document and its provenance
// rules are profile_loader.cpp's.
#include "models/config/profile_loader.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "models/config/input_error.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/strings.hpp"

namespace gpumux {

// Generated at build time by scripts/embed_profiles.cmake from calibration/profiles/*.yaml.
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_profiles();

namespace {

bool looks_like_path(const std::string& name) {
  const std::string suffix = ".yaml";
  return name.find('/') != std::string::npos ||
         (name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0);
}

std::string read_text_file(const std::string& path) {
  try {
    return input_file::read(path, input_file::kMaxScenarioBytes, "device profile file");
  } catch (const input_file::FileError& e) {
    throw InputError(SourceLocation{path, 0, 0, ""}, e.what());
  }
}

}  // namespace

std::vector<std::string> embedded_profile_names() {
  std::vector<std::string> names;
  for (const auto& [stem, text] : embedded_profiles()) names.emplace_back(stem);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
// "NVIDIA H100 80GB HBM3" / "nvidia-h100-80gb-hbm3" / "H100 80GB HBM3" -> "h100-80gb-hbm3"
std::string alias_key(const std::string& name) {
  std::string key;
  for (const char c : name) {
    const bool separator = c == ' ' || c == '-' || c == '_' || c == '\t';
    if (separator) {
      if (!key.empty() && key.back() != '-') key += '-';
    } else {
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  while (!key.empty() && key.back() == '-') key.pop_back();
  if (key.rfind("nvidia-", 0) == 0) key.erase(0, 7);
  return key;
}
}  // namespace

std::string embedded_profile_for_alias(const std::string& name) {
  const std::string wanted = alias_key(name);
  if (wanted.empty()) return "";
  static const std::vector<std::pair<std::string, std::string>> aliases = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [stem, text] : embedded_profiles()) {
      try {
        const DeviceProfile gpu = parse_device_profile(
            std::string(text), "calibration/profiles/" + std::string(stem) + ".yaml");
        for (const std::string& alias : gpu.nvidia_smi_names)
          out.emplace_back(alias_key(alias), stem);
      } catch (const InputError&) {
        // a broken embedded profile is reported when it is loaded by name
      }
    }
    return out;
  }();
  for (const auto& [key, stem] : aliases) {
    if (key == wanted) return stem;
  }
  return "";
}

std::string device_profile_text(const std::string& name_or_path, const std::string& base_dir) {
  if (looks_like_path(name_or_path)) {
    std::filesystem::path path(name_or_path);
    if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
    return read_text_file(path.lexically_normal().string());
  }
  const DeviceProfile& gpu = load_device_profile(name_or_path, base_dir);  // checks the name
  const std::string stem = gpu.source_path.substr(std::string("embedded:").size());
  for (const auto& [name, text] : embedded_profiles()) {
    if (name == stem) return std::string(text);
  }
  throw InputError("unknown GPU model '" + name_or_path + "'");
}

const DeviceProfile& load_device_profile(const std::string& name_or_path,
                                         const std::string& base_dir) {
  // Profiles are immutable once loaded; the map owns them and never moves them, so the returned
  // references stay valid for the life of the process.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<DeviceProfile>> cache;

  std::string key;
  if (looks_like_path(name_or_path)) {
    std::filesystem::path path(name_or_path);
    if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
    key = "file:" + path.lexically_normal().string();
  } else {
    key = "embedded:" + name_or_path;
  }

  // A profile file is keyed by its path and its content (it is read again on every load, a few
  // KiB): edited between two runs of one process (Python), the second run sees the new numbers
  // and records their hash. Earlier versions stay in the cache (references to them stay valid).
  std::string text;
  if (key.rfind("file:", 0) == 0) {
    text = read_text_file(key.substr(5));
    key += fmt::format("#{:016x}:{}", fnv1a64(text), text.size());
  }

  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto found = cache.find(key); found != cache.end()) return *found->second;

  DeviceProfile gpu;
  if (key.rfind("file:", 0) == 0) {
    const std::string path = key.substr(5, key.rfind('#') - 5);
    gpu = parse_device_profile(text, path);
  } else {
    const auto& embedded = embedded_profiles();
    auto it = std::find_if(embedded.begin(), embedded.end(),
                           [&](const auto& entry) { return entry.first == name_or_path; });
    if (it == embedded.end()) {
      const std::string stem = embedded_profile_for_alias(name_or_path);
      it = std::find_if(embedded.begin(), embedded.end(),
                        [&](const auto& entry) { return !stem.empty() && entry.first == stem; });
    }
    if (it == embedded.end()) {
      throw InputError(
          "unknown GPU model '" + name_or_path +
          "'; known: " + join(embedded_profile_names(), ", ") +
          " (or an nvidia-smi name, see `gpumux models`, or a path to a profile .yaml)");
    }
    const std::string text(it->second);
    const std::string stem(it->first);
    gpu = parse_device_profile(text, "calibration/profiles/" + stem + ".yaml");
    gpu.source_path = "embedded:" + stem;
  }
  auto [inserted, ok] = cache.emplace(key, std::make_unique<DeviceProfile>(std::move(gpu)));
  (void)ok;
  return *inserted->second;
}

}  // namespace gpumux
