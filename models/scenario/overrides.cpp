// `--set KEY=VALUE`: edits of the YAML tree before it is read.
#include "models/scenario/loader_parts.hpp"
#include "models/scenario/override_tree.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace gpumux::scenario_detail {

using namespace yaml;

namespace {

// --- overrides: edits of the YAML tree before it is read ---

// Finds a key of a mapping without creating it (yaml-cpp's operator[] would).
std::optional<YAML::Node> find_key(const YAML::Node& map, const std::string& key) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return std::nullopt;
}

std::vector<std::string> keys_of(const YAML::Node& map) {
  std::vector<std::string> keys;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar()) keys.push_back(it->first.Scalar());
  }
  return keys;
}

// The index of the entry of list LIST (at PARENT) whose `name:` is NAME, for --set
// tenants.<name>.KEY; one-line InputError naming the unknown entry and the names there are.
// A replica's expanded name (small-a-0 of small-a with replicas: 3) is pointed at its template.
std::size_t entry_named(const SourceLocation& where, const YAML::Node& list,
                        const std::string& parent, const std::string& name) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node entry = list[i];
    if (!entry.IsMap()) continue;
    const auto value = find_key(entry, "name");
    if (!value || !value->IsScalar()) continue;
    if (value->Scalar() == name) return i;
    names.push_back(value->Scalar());
  }
  std::string message = parent;
  if (names.empty()) {
    message += " is a list without names; expected an index, got '";
    message += name;
    message += "'";
    throw InputError(where, message);
  }
  message += " has no entry named '";
  message += name;
  message += "'";
  for (const std::string& candidate : names) {
    const std::string prefix = candidate + "-";
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
        std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                    [](unsigned char c) { return std::isdigit(c) != 0; })) {
      message += " (a replica of '";
      message += candidate;
      message += "': --set ";
      message += parent;
      message += ".";
      message += candidate;
      message += ".KEY sets all its replicas)";
      throw InputError(where, message);
    }
  }
  message += hint(name, names);
  message += "; names: ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) message += ", ";
    message += names[i];
  }
  message += " (or an index 0-";
  message += std::to_string(list.size() - 1);
  message += ")";
  throw InputError(where, message);
}

// The value as one printable line for a message: control and non-ASCII bytes as \xNN, at most
// 60 bytes of it.
std::string printable(const std::string& value) {
  std::string out;
  for (std::size_t i = 0; i < value.size() && i < 60; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    out += c < 0x20 || c >= 0x7F ? fmt::format("\\x{:02X}", c) : std::string(1, value[i]);
  }
  if (value.size() > 60) out += "...";
  return out;
}

// Applies one --set and returns its normalised key path (sequence indices without leading
// zeros) for Context::add_override.

}  // namespace

std::string apply_override(YAML::Node& root, const Override& override) {
  SourceLocation where;
  where.file = kOverrideSource;
  where.key_path = override.key_path;
  const std::vector<std::string> parts = split(override.key_path, '.');
  if (parts.empty() ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    throw InputError(where, "expected a dotted key path such as gpus.0.sharing.timeslice");
  }
  // The value goes through the same reader as a scenario file (UTF-8, one document, depth), so
  // `--set name=<Latin-1 bytes>` is refused here rather than after simulating.
  YAML::Node value;
  try {
    value = parse(override.value, kOverrideSource, "");
  } catch (const InputError& e) {
    const SourceLocation& at = e.where();
    std::string message = e.what();
    // parse() names "--set:LINE:COLUMN: "; keep the reason, add the key and where in the value.
    const std::string prefix = at.describe() + ": ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    std::string position;
    if (at.line > 0) {
      position = fmt::format(" (line {}, column {} of the value)", at.line, at.column);
    }
    throw InputError(
        where, "bad YAML value '" + printable(override.value) + "'" + position + ": " + message);
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);

  YAML::Node cur;
  cur.reset(root);
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string parent = walked.empty() ? "the scenario" : walked;
    std::string normalised = part;
    if (cur.IsSequence()) {
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
      if (ec != std::errc() || end != part.data() + part.size()) {
        index = entry_named(where, cur, parent, part);  // tenants.<name>.KEY, gpus.<name>.KEY
      }
      if (index >= cur.size()) {
        throw InputError(where, parent + " has " + std::to_string(cur.size()) + " entries");
      }
      normalised = std::to_string(index);
      if (last) {
        cur[index] = value;
      } else {
        YAML::Node next = cur[index];
        cur.reset(next);
      }
    } else if (cur.IsMap() || (last && cur.IsNull())) {
      if (last) {
        cur[part] = value;
      } else {
        const auto next = find_key(cur, part);
        if (!next) {
          // A Kubernetes resource or label name holds dots before its '/' (nvidia.com/gpu,
          // nvidia.com/mig-1g.10gb): the rest of the path is that one key of this mapping.
          std::string rest = part;
          for (std::size_t j = i + 1; j < parts.size(); ++j) rest += "." + parts[j];
          if (rest.find('/') != std::string::npos) {
            cur[rest] = value;
            return child_path(walked, rest);
          }
          // The parent must exist; offer the flag that sets the missing block whole.
          std::string block = override.value;
          for (std::size_t j = parts.size() - 1; j > i; --j)
            block = "{" + parts[j] + ": " + block + "}";
          const std::string close = hint(part, keys_of(cur));
          throw InputError(where, parent + " has no key '" + part + "'" +
                                      (close.empty() ? "; to add it, set the whole block: --set " +
                                                           child_path(walked, part) + "=" + block
                                                     : close));
        }
        cur.reset(*next);
      }
    } else {
      throw InputError(where, parent + " is " + kind_of(cur) + ", not a mapping or list");
    }
    walked = child_path(walked, normalised);
  }
  return walked;
}

}  // namespace gpumux::scenario_detail

namespace gpumux {

void apply_overrides(YAML::Node& root, yaml::Context& ctx, const std::vector<Override>& overrides,
                     const std::string& prefix) {
  for (const Override& override : overrides) {
    if (prefix.empty()) {
      ctx.add_override(scenario_detail::apply_override(root, override));
    } else if (override.key_path.rfind(prefix, 0) == 0 &&
               override.key_path.size() > prefix.size()) {
      const Override inner{override.key_path.substr(prefix.size()), override.value};
      ctx.add_override(scenario_detail::apply_override(root, inner));
    }
  }
}

}  // namespace gpumux
