#pragma once
// The one YAML reader of gpumux: scenario files (models/scenario/loader.hpp), device profiles
// (models/config/profile_loader.hpp) and every strategy's `sharing:` block
// (models/strategies/strategy.hpp) are read through it, so a value is located, converted and
// reported the same way everywhere.
//
// A Field is a value together with its dotted key path and YAML mark; a Context records where
// each key was written and turns a failure into an InputError naming file:line:column and the
// key path (or `--set` for a value that came from the command line). MapReader checks a mapping
// against its allowed keys (unknown key -> error with a "did you mean" hint, duplicate key ->
// error). The scalar conversions below each fail with the field's location.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/config/input_error.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {

using Nanos = std::int64_t;

namespace yaml {

/// SourceLocation::file for values that came from the command line rather than the file.
inline constexpr const char* kOverrideSource = "--set";

using ::gpumux::join;  // sim/util/strings.hpp
using ::gpumux::trim;
std::vector<std::string> split(const std::string& text, char separator);
/// Case-insensitive Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(const std::string& a, const std::string& b);
/// " (did you mean 'timeslice'?)" when one candidate is within edit distance 2, else "".
std::string hint(const std::string& word, const std::vector<std::string>& candidates);
bool valid_name(const std::string& name);
/// "a mapping", "a list", "a single value" or "nothing".
const char* kind_of(const YAML::Node& node);
std::string child_path(const std::string& parent, const std::string& key);

/// Parses YAML text; a syntax error becomes an InputError "<prefix><yaml-cpp message>" at the
/// error's line and column of `source_name`.
YAML::Node parse(const std::string& text, const std::string& source_name,
                 const std::string& prefix = "YAML syntax error: ");

/// Integer / plain-number text of a scalar; nullopt when the text is not entirely one.
std::optional<long long> parse_integer(const std::string& text);
std::optional<double> parse_number(const std::string& text);

/// A value in the document together with where it was written.
struct Field {
  YAML::Node node;
  std::string path;  ///< dotted key path
  YAML::Mark mark;   ///< of the value (of its key when the value is empty)
};

/// State of one read: where text came from, which paths --set replaced, and the location index.
class Context {
 public:
  Context(std::string file, std::map<std::string, SourceLocation>& locations);

  void add_override(const std::string& path) { overridden_.push_back(path); }
  bool from_override(const std::string& path) const;
  SourceLocation at(const std::string& path, const YAML::Mark& mark) const;
  [[noreturn]] void fail(const Field& field, const std::string& message) const;
  void record(const Field& field);
  /// Fails at a location recorded earlier (the file alone when the path was never visited).
  [[noreturn]] void fail_at(const std::string& path, const std::string& message) const;
  /// Paths resolve against the file's directory; a path given with --set is the user's own,
  /// relative to the working directory.
  std::filesystem::path resolve_path(const Field& field, const std::string& text) const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::filesystem::path base_dir_;
  std::vector<std::string> overridden_;
  std::map<std::string, SourceLocation>& locations_;
};

// --- scalar conversions: each fails with the field's location ---

std::string text_of(Context& ctx, const Field& field);
std::string non_empty_text(Context& ctx, const Field& field);
std::string name_of(Context& ctx, const Field& field);
std::int64_t integer_of(Context& ctx, const Field& field, std::int64_t min);
std::uint64_t seed_of(Context& ctx, const Field& field);
int int_of(Context& ctx, const Field& field, int min);
double number_of(Context& ctx, const Field& field);
/// A plain number in [low, high] (or (low, high] when `low_open`).
double fraction_of(Context& ctx, const Field& field, double low, bool low_open, double high);
Nanos duration_of(Context& ctx, const Field& field);
Nanos positive_duration_of(Context& ctx, const Field& field);
std::int64_t size_of(Context& ctx, const Field& field);
double rate_of(Context& ctx, const Field& field);
bool bool_of(Context& ctx, const Field& field);

template <typename Parse>
auto with_unit(Context& ctx, const Field& field, Parse parse) {
  const std::string text = text_of(ctx, field);
  try {
    return parse(text);
  } catch (const std::invalid_argument& e) {
    ctx.fail(field, std::string(e.what()) + " (got '" + text + "')");
  }
}

/// The best spelling for an unknown choice (measured against every spelling, offered in the
/// canonical one: the first spelling of the same value), or "".
template <typename Value>
std::string closest_choice(const std::string& text,
                           const std::vector<std::pair<std::string, Value>>& names) {
  // Values are few and long ("time-slicing"), so a looser match still points at the right one.
  std::size_t best_distance = std::max<std::size_t>(2, text.size() / 3) + 1;
  std::string suggestion;
  for (const auto& [name, value] : names) {
    const std::size_t distance = edit_distance(text, name);
    if (distance < best_distance) {
      best_distance = distance;
      const Value same = value;
      suggestion = std::find_if(names.begin(), names.end(), [&](const auto& entry) {
                     return entry.second == same;
                   })->first;
    }
  }
  return suggestion;
}

/// One of a fixed set of words. `names` lists every accepted spelling, the canonical one of each
/// value first; `canonical` is what the message offers.
template <typename Enum>
Enum choice_of(Context& ctx, const Field& field,
               const std::vector<std::pair<std::string, Enum>>& names,
               const std::vector<std::string>& canonical, const char* what) {
  const std::string text = text_of(ctx, field);
  for (const auto& [name, value] : names) {
    if (text == name) return value;
  }
  const std::string suggestion = closest_choice(text, names);
  ctx.fail(field, "unknown " + std::string(what) + " '" + text + "'" +
                      (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
                      "; use one of: " + join(canonical));
}

// --- structure: mappings with a known set of keys, and lists ---

class MapReader {
 public:
  /// `moved` maps keys that belong elsewhere to a hint ("host_gap" -> "request.host_gap").
  MapReader(Context& ctx, Field self, std::vector<std::string> allowed,
            const std::map<std::string, std::string>& moved = {});

  std::optional<Field> get(const std::string& key) const;
  Field require(const std::string& key) const;
  const Field& self() const { return self_; }
  Context& context() const { return ctx_; }

 private:
  Context& ctx_;
  Field self_;
  std::vector<std::string> allowed_;
  std::vector<std::pair<std::string, Field>> entries_;
};

std::vector<Field> list_of(Context& ctx, const Field& field, bool required_non_empty);

}  // namespace yaml
}  // namespace gpumux
