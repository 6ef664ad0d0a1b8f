#include "models/scenario/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "models/config/mig_names.hpp"
#include "models/gpu/mig_layout.hpp"
#include "models/scenario/trace_reader.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

// SourceLocation::file for values that came from the command line rather than the file.
constexpr const char* kOverrideSource = "--set";

std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// Case-insensitive Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean 'timeslice'?)" when one candidate is within edit distance 2, else "".
std::string hint(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  std::size_t best_distance = 3;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = &candidate;
    }
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == '-';
  });
}

const char* kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a single value";
    default:
      return "nothing";
  }
}

// A value in the document together with where it was written.
struct Field {
  YAML::Node node;
  std::string path;  ///< dotted key path
  YAML::Mark mark;   ///< of the value (of its key when the value is empty)
};

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// State of one load: where text came from, which paths --set replaced, and the location index.
class Context {
 public:
  Context(std::string file, std::map<std::string, SourceLocation>& locations)
      : file_(std::move(file)), locations_(locations) {
    const fs::path parent = fs::path(file_).parent_path();
    base_dir_ = parent.empty() ? fs::path(".") : parent;
  }

  void add_override(const std::string& path) { overridden_.push_back(path); }

  bool from_override(const std::string& path) const {
    return std::any_of(overridden_.begin(), overridden_.end(), [&](const std::string& key) {
      return path == key || path.rfind(key + ".", 0) == 0;
    });
  }

  SourceLocation at(const std::string& path, const YAML::Mark& mark) const {
    SourceLocation where;
    where.key_path = path;
    if (from_override(path)) {
      where.file = kOverrideSource;
      return where;
    }
    where.file = file_;
    if (mark.line >= 0) {
      where.line = mark.line + 1;
      where.column = mark.column + 1;
    }
    return where;
  }

  [[noreturn]] void fail(const Field& field, const std::string& message) const {
    throw InputError(at(field.path, field.mark), message);
  }

  void record(const Field& field) {
    if (!field.path.empty()) locations_[field.path] = at(field.path, field.mark);
  }

  // Fails at a location recorded earlier (the file alone when the path was never visited).
  [[noreturn]] void fail_at(const std::string& path, const std::string& message) const {
    const auto it = locations_.find(path);
    throw InputError(it != locations_.end() ? it->second : SourceLocation{file_, 0, 0, path},
                     message);
  }

  // Trace paths resolve against the scenario file's directory; a path given with --set is the
  // user's own, relative to the working directory.
  fs::path resolve_path(const Field& field, const std::string& text) const {
    const fs::path path(text);
    if (path.is_absolute()) return path.lexically_normal();
    const fs::path base = from_override(field.path) ? fs::current_path() : base_dir_;
    return fs::absolute(base / path).lexically_normal();
  }

 private:
  std::string file_;
  fs::path base_dir_;
  std::vector<std::string> overridden_;
  std::map<std::string, SourceLocation>& locations_;
};

// --- scalar conversions: each fails with the field's location ---

std::string text_of(Context& ctx, const Field& field) {
  if (field.node.IsNull()) ctx.fail(field, "missing value");
  if (!field.node.IsScalar()) {
    ctx.fail(field, std::string("expected a single value, got ") + kind_of(field.node));
  }
  return field.node.Scalar();
}

std::string non_empty_text(Context& ctx, const Field& field) {
  std::string text = text_of(ctx, field);
  if (trim(text).empty()) ctx.fail(field, "must not be empty");
  return text;
}

std::string name_of(Context& ctx, const Field& field) {
  const std::string text = text_of(ctx, field);
  if (!valid_name(text)) {
    ctx.fail(field, "invalid name '" + text +
                        "' (use letters, digits, '_', '.' and '-' only, no spaces or '/')");
  }
  return text;
}

std::int64_t integer_of(Context& ctx, const Field& field, std::int64_t min) {
  const std::string text = trim(text_of(ctx, field));
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size()) {
    ctx.fail(field, "expected an integer, got '" + text + "'");
  }
  if (ec == std::errc::result_out_of_range) ctx.fail(field, "integer out of range: " + text);
  if (value < min) ctx.fail(field, "must be >= " + std::to_string(min) + ", got " + text);
  return value;
}

std::uint64_t seed_of(Context& ctx, const Field& field) {
  const std::string text = trim(text_of(ctx, field));
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    ctx.fail(field, "expected an integer from 0 to 18446744073709551615, got '" + text + "'");
  }
  return value;
}

int int_of(Context& ctx, const Field& field, int min) {
  const std::int64_t value = integer_of(ctx, field, min);
  if (value > 1'000'000'000) ctx.fail(field, "too large: " + std::to_string(value));
  return static_cast<int>(value);
}

double number_of(Context& ctx, const Field& field) {
  const std::string text = trim(text_of(ctx, field));
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    ctx.fail(field, "expected a plain number, got '" + text + "'");
  }
  if (!std::isfinite(value)) ctx.fail(field, "must be a finite number, got '" + text + "'");
  return value;
}

// A plain number in [low, high] (or (low, high] when `low_open`).
double fraction_of(Context& ctx, const Field& field, double low, bool low_open, double high) {
  const double value = number_of(ctx, field);
  if (value > high || value < low || (low_open && value == low)) {
    std::ostringstream range;
    range << (low_open ? "(" : "[") << low << ", " << high << "]";
    ctx.fail(field, "must be in " + range.str() + ", got " + text_of(ctx, field));
  }
  return value;
}

template <typename Parse>
auto with_unit(Context& ctx, const Field& field, Parse parse) {
  const std::string text = text_of(ctx, field);
  try {
    return parse(text);
  } catch (const std::invalid_argument& e) {
    ctx.fail(field, std::string(e.what()) + " (got '" + text + "')");
  }
}

Nanos duration_of(Context& ctx, const Field& field) {
  return with_unit(ctx, field, units::parse_duration_ns);
}

Nanos positive_duration_of(Context& ctx, const Field& field) {
  const Nanos value = duration_of(ctx, field);
  if (value <= 0) ctx.fail(field, "must be greater than zero (got '" + text_of(ctx, field) + "')");
  return value;
}

std::int64_t size_of(Context& ctx, const Field& field) {
  return with_unit(ctx, field, units::parse_size_bytes);
}

double rate_of(Context& ctx, const Field& field) {
  return with_unit(ctx, field, units::parse_rate_per_s);
}

bool bool_of(Context& ctx, const Field& field) {
  const std::string text = text_of(ctx, field);
  if (text == "true" || text == "True" || text == "yes") return true;
  if (text == "false" || text == "False" || text == "no") return false;
  ctx.fail(field, "expected true or false, got '" + text + "'");
}

// One of a fixed set of words; `names` lists the spellings, `canonical` what the message offers.
// One of a fixed set of words. `names` lists every accepted spelling, the canonical one of each
// value first; `canonical` is what the message offers.
template <typename Enum>
Enum choice_of(Context& ctx, const Field& field,
               const std::vector<std::pair<std::string, Enum>>& names,
               const std::vector<std::string>& canonical, const char* what) {
  const std::string text = text_of(ctx, field);
  for (const auto& [name, value] : names) {
    if (text == name) return value;
  }
  // Values are few and long ("time-slicing"), so a looser match still points at the right one;
  // it is measured against every spelling and offered in the canonical one.
  std::size_t best_distance = std::max<std::size_t>(2, text.size() / 3) + 1;
  std::string suggestion;
  for (const auto& [name, value] : names) {
    const std::size_t distance = edit_distance(text, name);
    if (distance < best_distance) {
      best_distance = distance;
      const Enum same = value;
      suggestion = std::find_if(names.begin(), names.end(), [&](const auto& entry) {
                     return entry.second == same;
                   })->first;
    }
  }
  ctx.fail(field, "unknown " + std::string(what) + " '" + text + "'" +
                      (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
                      "; use one of: " + join(canonical));
}

// --- structure: mappings with a known set of keys, and lists ---

class MapReader {
 public:
  // `moved` maps keys that belong elsewhere to a hint ("host_gap" -> "request.host_gap").
  MapReader(Context& ctx, Field self, std::vector<std::string> allowed,
            const std::map<std::string, std::string>& moved = {})
      : ctx_(ctx), self_(std::move(self)), allowed_(std::move(allowed)) {
    ctx_.record(self_);
    if (self_.node.IsNull()) return;  // an empty block is an empty mapping
    if (!self_.node.IsMap()) {
      ctx_.fail(self_, std::string("expected a mapping (key: value), got ") + kind_of(self_.node));
    }
    for (auto it = self_.node.begin(); it != self_.node.end(); ++it) {
      const YAML::Node key_node = it->first;
      const std::string key = key_node.IsScalar() ? key_node.Scalar() : "?";
      Field key_field{key_node, child_path(self_.path, key), key_node.Mark()};
      if (!key_node.IsScalar()) ctx_.fail(key_field, "a key must be a plain word");
      for (const auto& [seen, field] : entries_) {
        if (seen == key) {
          ctx_.fail(key_field, "duplicate key '" + key + "' (first on line " +
                                   std::to_string(field.mark.line + 1) + ")");
        }
      }
      if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
        const auto move = moved.find(key);
        const std::string where = self_.path.empty() ? "at the top level" : "in " + self_.path;
        ctx_.fail(key_field, "unknown key '" + key + "' " + where +
                                 (move != moved.end() ? " (it belongs under " + move->second + ")"
                                                      : hint(key, allowed_)) +
                                 "; allowed: " + join(allowed_));
      }
      const YAML::Node value = it->second;
      const YAML::Mark mark = value.IsNull() ? key_node.Mark() : value.Mark();
      Field field{value, key_field.path, mark.line >= 0 ? mark : key_node.Mark()};
      ctx_.record(field);
      entries_.emplace_back(key, std::move(field));
    }
  }

  std::optional<Field> get(const std::string& key) const {
    for (const auto& [name, field] : entries_) {
      if (name == key) return field;
    }
    return std::nullopt;
  }

  Field require(const std::string& key) const {
    if (auto field = get(key)) return *field;
    Field missing{self_.node, child_path(self_.path, key), self_.mark};
    ctx_.fail(missing, "missing required key '" + key + "'");
  }

  const Field& self() const { return self_; }

 private:
  Context& ctx_;
  Field self_;
  std::vector<std::string> allowed_;
  std::vector<std::pair<std::string, Field>> entries_;
};

std::vector<Field> list_of(Context& ctx, const Field& field, bool required_non_empty) {
  ctx.record(field);
  std::vector<Field> items;
  if (field.node.IsNull()) {
    if (required_non_empty) ctx.fail(field, "must be a non-empty list");
    return items;
  }
  if (!field.node.IsSequence()) {
    ctx.fail(field, std::string("expected a list, got ") + kind_of(field.node));
  }
  std::size_t index = 0;
  for (const YAML::Node& item : field.node) {
    const YAML::Mark mark = item.Mark().line >= 0 ? item.Mark() : field.mark;
    items.push_back({item, child_path(field.path, std::to_string(index++)), mark});
    ctx.record(items.back());
  }
  if (items.empty() && required_non_empty) ctx.fail(field, "must be a non-empty list");
  return items;
}

// --- the schema ---

// A value that is fixed or drawn from a distribution: a scalar, or exactly one of {fixed: V},
// {exponential: MEAN}, {lognormal: {median: V, sigma: S}}, {uniform: {min: A, max: B}}.
// `value(field, positive)` parses one value (a duration, or a plain count); `forms` is the
// example text for the error message.
template <typename ParseValue>
DurationDistribution distribution_with(Context& ctx, const Field& field, ParseValue value,
                                       const char* forms) {
  DurationDistribution d;
  if (field.node.IsScalar()) {
    d.value = value(field, true);
    return d;
  }
  const MapReader map(ctx, field, {"fixed", "exponential", "lognormal", "uniform"});
  if (!field.node.IsMap() || field.node.size() != 1) ctx.fail(field, forms);
  if (const auto fixed = map.get("fixed")) {
    d.value = value(*fixed, true);
  } else if (const auto exponential = map.get("exponential")) {
    d.kind = DurationDistribution::Kind::exponential;
    d.value = value(*exponential, true);
  } else if (const auto lognormal = map.get("lognormal")) {
    d.kind = DurationDistribution::Kind::lognormal;
    const MapReader params(ctx, *lognormal, {"median", "sigma"});
    d.value = value(params.require("median"), true);
    const Field sigma = params.require("sigma");
    d.sigma = number_of(ctx, sigma);
    if (d.sigma < 0) ctx.fail(sigma, "must be >= 0, got " + text_of(ctx, sigma));
  } else {
    d.kind = DurationDistribution::Kind::uniform;
    const MapReader params(ctx, *map.get("uniform"), {"min", "max"});
    d.value = value(params.require("min"), false);
    const Field max = params.require("max");
    d.upper = value(max, true);
    if (d.upper < d.value) ctx.fail(max, "max must be >= min");
  }
  return d;
}

DurationDistribution distribution_of(Context& ctx, const Field& field) {
  return distribution_with(
      ctx, field,
      [&ctx](const Field& f, bool positive) {
        return positive ? positive_duration_of(ctx, f) : duration_of(ctx, f);
      },
      "expected a duration (2ms) or exactly one of {fixed: 2ms}, {exponential: 2ms}, "
      "{lognormal: {median: 2ms, sigma: 0.4}}, {uniform: {min: 1ms, max: 3ms}}");
}

// A token count: plain numbers, no units; a fixed count may be 0, a mean or median must be >= 1.
DurationDistribution token_count_of(Context& ctx, const Field& field) {
  const bool scalar = field.node.IsScalar();
  return distribution_with(
      ctx, field,
      [&ctx, scalar](const Field& f, bool positive) {
        const std::int64_t minimum = positive && !scalar ? 1 : 0;
        const double v = number_of(ctx, f);
        if (!(v >= static_cast<double>(minimum)) || v > 1e9) {
          ctx.fail(f, "expected a token count >= " + std::to_string(minimum) + ", got " +
                          text_of(ctx, f));
        }
        return static_cast<std::int64_t>(std::llround(v));
      },
      "expected a count (512) or exactly one of {exponential: 500}, "
      "{lognormal: {median: 500, sigma: 1.0}}, {uniform: {min: 100, max: 900}}");
}

TokenCount token_kind_of(Context& ctx, const Field& field, const char* what) {
  return choice_of<TokenCount>(ctx, field,
                               {{"input", TokenCount::input},
                                {"input_tokens", TokenCount::input},
                                {"output", TokenCount::output},
                                {"output_tokens", TokenCount::output}},
                               {"input_tokens", "output_tokens"}, what);
}

KernelSpec kernel_of(Context& ctx, const Field& field, std::size_t index) {
  const MapReader map(ctx, field,
                      {"name", "duration", "sm_fraction", "memory_bound", "repeat", "per_token",
                       "collective", "per_sequence", "waves", "block_time", "working_set"});
  KernelSpec k;
  k.name = "kernel" + std::to_string(index);
  if (const auto name = map.get("name")) k.name = non_empty_text(ctx, *name);
  k.duration = distribution_of(ctx, map.require("duration"));
  if (const auto f = map.get("sm_fraction")) k.sm_fraction = fraction_of(ctx, *f, 0, true, 1);
  if (const auto f = map.get("memory_bound")) k.memory_bound = fraction_of(ctx, *f, 0, false, 1);
  if (const auto f = map.get("repeat")) {
    const std::string text = f->node.IsScalar() ? f->node.Scalar() : "";
    if (text.find("token") != std::string::npos) {
      k.repeat_per_token = token_kind_of(ctx, *f, "token count to repeat per");
    } else {
      k.repeat = int_of(ctx, *f, 1);
    }
  }
  if (const auto f = map.get("per_token")) {
    k.duration_per_token = token_kind_of(ctx, *f, "token count the duration is per");
  }
  if (const auto f = map.get("collective")) k.collective = bool_of(ctx, *f);
  if (const auto f = map.get("per_sequence")) k.per_sequence = duration_of(ctx, *f);
  const auto waves = map.get("waves");
  const auto block_time = map.get("block_time");
  if (waves && block_time) ctx.fail(*block_time, "give either waves or block_time, not both");
  if (waves) {
    k.waves = number_of(ctx, *waves);
    if (!(k.waves >= 1) || k.waves > 1e9) {
      ctx.fail(*waves, "must be a number of waves >= 1, got " + text_of(ctx, *waves));
    }
  }
  if (block_time) {
    const Nanos block = positive_duration_of(ctx, *block_time);
    k.waves = std::max(1.0, k.duration.mean() / static_cast<double>(block));
  }
  if (const auto f = map.get("working_set")) k.working_set = size_of(ctx, *f);
  return k;
}

ArrivalSpec arrivals_of(Context& ctx, const Field& field) {
  ArrivalSpec a;
  // The keys allowed depend on the process, so read `process` before checking the others.
  if (!field.node.IsMap()) {
    ctx.record(field);
    ctx.fail(field, std::string("expected a mapping such as {process: poisson, rate: 50/s}, got ") +
                        kind_of(field.node));
  }
  std::optional<Field> process_field;
  for (auto it = field.node.begin(); it != field.node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "process") {
      process_field = Field{it->second, child_path(field.path, "process"),
                            it->second.IsNull() ? it->first.Mark() : it->second.Mark()};
    }
  }
  if (!process_field) {
    // Let a misspelt key ("proces") be reported as such, with its hint.
    const MapReader all(
        ctx, field, {"process", "rate", "concurrency", "think", "file", "format", "time_scale"});
    ctx.fail({field.node, child_path(field.path, "process"), field.mark},
             "missing required key 'process' (poisson, constant, closed or trace)");
  }
  a.process =
      choice_of<ArrivalProcess>(ctx, *process_field,
                                {{"poisson", ArrivalProcess::poisson},
                                 {"constant", ArrivalProcess::constant},
                                 {"closed", ArrivalProcess::closed},
                                 {"trace", ArrivalProcess::trace}},
                                {"poisson", "constant", "closed", "trace"}, "arrival process");
  switch (a.process) {
    case ArrivalProcess::poisson:
    case ArrivalProcess::constant: {
      const MapReader map(ctx, field, {"process", "rate"});
      a.rate_per_s = rate_of(ctx, map.require("rate"));
      break;
    }
    case ArrivalProcess::closed: {
      const MapReader map(ctx, field, {"process", "concurrency", "think"});
      a.concurrency = int_of(ctx, map.require("concurrency"), 1);
      if (const auto think = map.get("think")) a.think = duration_of(ctx, *think);
      break;
    }
    case ArrivalProcess::trace: {
      const MapReader map(ctx, field, {"process", "file", "format", "time_scale"});
      const Field file = map.require("file");
      const fs::path path = ctx.resolve_path(file, non_empty_text(ctx, file));
      std::error_code error;
      if (!fs::is_regular_file(path, error)) {
        ctx.fail(file, "trace file not found: " + path.string());
      }
      a.trace_file = path.string();
      if (const auto format = map.get("format")) {
        const std::string name = text_of(ctx, *format);
        try {
          a.trace_format = parse_trace_format(name);
        } catch (const std::invalid_argument& e) {
          ctx.fail(*format, e.what() + hint(name, {"csv", "azure-llm", "mooncake"}));
        }
      }
      if (const auto scale = map.get("time_scale")) {
        a.time_scale = number_of(ctx, *scale);
        if (!(a.time_scale > 0)) ctx.fail(*scale, "must be > 0, got " + text_of(ctx, *scale));
      }
      break;
    }
  }
  return a;
}

WorkloadSpec workload_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"arrivals", "request", "max_in_flight", "memory_per_request",
                       "memory_per_token", "tokens", "batching", "priority"},
                      {{"kernels", "workload.request"}, {"host_gap", "workload.request"}});
  WorkloadSpec w;
  w.arrivals = arrivals_of(ctx, map.require("arrivals"));
  const MapReader request(ctx, map.require("request"), {"kernels", "host_gap", "cuda_graph"});
  std::size_t index = 0;
  for (const Field& kernel : list_of(ctx, request.require("kernels"), true)) {
    w.kernels.push_back(kernel_of(ctx, kernel, index++));
  }
  if (const auto gap = request.get("host_gap")) w.host_gap = duration_of(ctx, *gap);
  if (const auto graph = request.get("cuda_graph")) w.cuda_graph = bool_of(ctx, *graph);
  if (const auto f = map.get("priority")) {
    const double p = number_of(ctx, *f);
    if (p != std::floor(p) || p < -100 || p > 100) {
      ctx.fail(*f, "must be an integer stream priority (lower is more urgent, as in CUDA), got " +
                       text_of(ctx, *f));
    }
    w.priority = static_cast<int>(p);
  }
  w.max_in_flight = w.arrivals.process == ArrivalProcess::closed ? w.arrivals.concurrency : 1;
  if (const auto f = map.get("max_in_flight")) w.max_in_flight = int_of(ctx, *f, 1);
  if (const auto f = map.get("memory_per_request")) w.memory_per_request = size_of(ctx, *f);
  if (const auto f = map.get("memory_per_token")) w.memory_per_token = size_of(ctx, *f);
  if (const auto f = map.get("batching")) {
    const MapReader batching(ctx, *f, {"max_batch"});
    w.max_batch = int_of(ctx, batching.require("max_batch"), 1);
  }
  if (const auto f = map.get("tokens")) {
    const MapReader tokens(ctx, *f, {"input", "output"});
    w.has_tokens = true;
    if (const auto in = tokens.get("input")) w.input_tokens = token_count_of(ctx, *in);
    if (const auto out = tokens.get("output")) w.output_tokens = token_count_of(ctx, *out);
  }
  return w;
}

SharingSpec sharing_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"mode", "replicas", "timeslice", "context_switch", "preemption",
                       "preemption_latency", "cache_refill", "active_thread_percentage",
                       "pinned_memory_limit", "max_clients", "interference", "cuda_version"});
  if (const auto f = map.get("interference")) {
    ctx.fail(*f, "was removed: MPS interference now follows from SM residency, fair HBM sharing "
                 "and L2 capacity (set a kernel's working_set; docs/strategies.md)");
  }
  SharingSpec s;
  if (const auto f = map.get("mode")) {
    s.mode = choice_of<SharingMode>(ctx, *f,
                                    {{"exclusive", SharingMode::exclusive},
                                     {"time-slicing", SharingMode::time_slicing},
                                     {"time_slicing", SharingMode::time_slicing},
                                     {"timeslicing", SharingMode::time_slicing},
                                     {"mps", SharingMode::mps}},
                                    {"exclusive", "time-slicing", "mps"}, "sharing mode");
  }
  if (const auto f = map.get("replicas")) s.replicas = int_of(ctx, *f, 1);
  if (const auto f = map.get("timeslice")) s.timeslice = positive_duration_of(ctx, *f);
  if (const auto f = map.get("context_switch")) s.context_switch = duration_of(ctx, *f);
  if (const auto f = map.get("preemption")) {
    s.preemption = choice_of<PreemptionMode>(ctx, *f,
                                             {{"instruction", PreemptionMode::instruction},
                                              {"kernel-boundary", PreemptionMode::kernel_boundary},
                                              {"kernel_boundary", PreemptionMode::kernel_boundary}},
                                             {"instruction", "kernel-boundary"}, "preemption mode");
  }
  if (const auto f = map.get("preemption_latency")) s.preemption_latency = duration_of(ctx, *f);
  if (const auto f = map.get("cache_refill")) s.cache_refill = duration_of(ctx, *f);
  if (const auto f = map.get("active_thread_percentage")) {
    s.active_thread_percentage = fraction_of(ctx, *f, 0, true, 100);
  }
  if (const auto f = map.get("pinned_memory_limit")) s.pinned_memory_limit = size_of(ctx, *f);
  if (const auto f = map.get("max_clients")) s.max_clients = int_of(ctx, *f, 1);
  if (const auto f = map.get("cuda_version")) {
    // "13.1" -> 1301; written as a string or a number (13.1 and 13.10 are the same version).
    const std::string text = text_of(ctx, *f);
    const auto dot = text.find('.');
    int major = -1, minor = 0;
    try {
      std::size_t used = 0;
      major = std::stoi(text.substr(0, dot), &used);
      if (used != text.substr(0, dot).size()) major = -1;
      if (dot != std::string::npos) {
        const std::string rest = text.substr(dot + 1);
        minor = std::stoi(rest, &used);
        if (used != rest.size() || rest.empty()) major = -1;
      }
    } catch (const std::exception&) {
      major = -1;
    }
    if (major < 1 || minor < 0 || minor > 99) {
      ctx.fail(*f, "expected a CUDA version such as 12.6 or 13.1, got '" + text + "'");
    }
    s.cuda_version = major * 100 + minor;
  }
  return s;
}

std::vector<std::string> mig_of(Context& ctx, const Field& field, std::string& layout_name) {
  std::vector<std::string> profiles;
  // PROFILE:COUNT repeats a profile (mig-parted / GKE syntax): [3g.40gb:2, 1g.10gb]
  auto append = [&](const Field& where, const std::string& item) {
    try {
      for (std::string& name : expand_profile_count(item)) profiles.push_back(std::move(name));
    } catch (const std::invalid_argument& e) {
      ctx.fail(where, e.what());
    }
  };
  if (field.node.IsSequence()) {
    for (const Field& item : list_of(ctx, field, true)) append(item, non_empty_text(ctx, item));
    return profiles;
  }
  const std::string text = non_empty_text(ctx, field);
  if (text.find(',') == std::string::npos && text.find(':') == std::string::npos) {
    layout_name = trim(text);
    return profiles;
  }
  for (const std::string& part : split(text, ',')) {
    if (trim(part).empty()) ctx.fail(field, "empty MIG profile name in '" + text + "'");
    append(field, trim(part));
  }
  return profiles;
}

GpuSpec gpu_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field, {"name", "model", "count", "mig", "sharing", "cost_per_hour"},
                      {{"mode", "sharing"},
                       {"replicas", "sharing"},
                       {"timeslice", "sharing"},
                       {"context_switch", "sharing"},
                       {"preemption", "sharing"},
                       {"active_thread_percentage", "sharing"}});
  GpuSpec g;
  g.where = ctx.at(field.path, field.mark);
  g.name = name_of(ctx, map.require("name"));
  g.model = non_empty_text(ctx, map.require("model"));
  if (const auto f = map.get("count")) g.count = int_of(ctx, *f, 1);
  if (const auto f = map.get("mig")) g.mig = mig_of(ctx, *f, g.mig_layout_name);
  if (const auto f = map.get("sharing")) g.sharing = sharing_of(ctx, *f);
  if (const auto f = map.get("cost_per_hour")) {
    g.cost_per_hour = number_of(ctx, *f);
    if (g.cost_per_hour < 0) ctx.fail(*f, "must be >= 0, got " + text_of(ctx, *f));
  }
  return g;
}

void slo_quantiles_of(Context& ctx, const MapReader& map, SloQuantiles& q) {
  if (const auto f = map.get("p50")) q.p50 = positive_duration_of(ctx, *f);
  if (const auto f = map.get("p90")) q.p90 = positive_duration_of(ctx, *f);
  if (const auto f = map.get("p99")) q.p99 = positive_duration_of(ctx, *f);
  if (const auto f = map.get("p999")) q.p999 = positive_duration_of(ctx, *f);
}

SloSpec slo_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field, {"p50", "p90", "p99", "p999", "ttft", "tpot"});
  SloSpec slo;
  slo_quantiles_of(ctx, map, slo);
  if (const auto f = map.get("ttft")) {
    slo_quantiles_of(ctx, MapReader(ctx, *f, {"p50", "p90", "p99", "p999"}), slo.ttft);
  }
  if (const auto f = map.get("tpot")) {
    slo_quantiles_of(ctx, MapReader(ctx, *f, {"p50", "p90", "p99", "p999"}), slo.tpot);
  }
  return slo;
}

// Checks the form "GPU" or "GPU/INDEX" and that GPU names one device of the expanded list (a
// written name with count > 1 is a group, which a tenant cannot run on as a whole).
void check_device(Context& ctx, const Field& field, const std::string& device,
                  const std::vector<GpuSpec>& written, const std::vector<std::string>& expanded) {
  const auto slash = device.find('/');
  const std::string gpu = device.substr(0, slash);
  if (slash != std::string::npos) {
    const std::string index = device.substr(slash + 1);
    if (index.empty() ||
        !std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c); })) {
      ctx.fail(field, "expected GPU or GPU/INSTANCE (MIG instance index, e.g. gpu0/1), got '" +
                          device + "'");
    }
  }
  if (std::find(expanded.begin(), expanded.end(), gpu) != expanded.end()) return;
  for (const GpuSpec& g : written) {
    if (g.name == gpu) {
      ctx.fail(field, "gpu '" + gpu + "' has count " + std::to_string(g.count) +
                          "; name one of its devices (" + gpu + "-0 .. " + gpu + "-" +
                          std::to_string(g.count - 1) + ")");
    }
  }
  ctx.fail(field, "no gpu named '" + gpu + "'" + hint(gpu, expanded) + "; gpus: " + join(expanded));
}

TenantSpec tenant_of(Context& ctx, const Field& field, const std::vector<GpuSpec>& gpus,
                     const std::vector<std::string>& gpu_names) {
  const MapReader map(
      ctx, field, {"name", "device", "replicas", "memory", "gpus", "workload", "slo"},
      {{"arrivals", "workload"}, {"request", "workload"}, {"kernels", "workload.request"}});
  TenantSpec t;
  t.where = ctx.at(field.path, field.mark);
  t.name = name_of(ctx, map.require("name"));
  const Field device = map.require("device");
  if (device.node.IsSequence()) {
    for (const Field& item : list_of(ctx, device, true)) {
      const std::string name = non_empty_text(ctx, item);
      check_device(ctx, item, name, gpus, gpu_names);
      if (std::find(t.devices.begin(), t.devices.end(), name) != t.devices.end()) {
        ctx.fail(item, "device '" + name + "' listed twice");
      }
      t.devices.push_back(name);
    }
  } else {
    t.devices.push_back(non_empty_text(ctx, device));
    check_device(ctx, device, t.devices.front(), gpus, gpu_names);
  }
  t.device = t.devices.front();
  t.gpus = static_cast<int>(t.devices.size());
  if (const auto f = map.get("replicas")) t.replicas = int_of(ctx, *f, 1);
  if (const auto f = map.get("memory")) t.memory = size_of(ctx, *f);
  if (const auto f = map.get("gpus")) {
    t.gpus = int_of(ctx, *f, 1);
    if (device.node.IsSequence() && t.gpus != static_cast<int>(t.devices.size())) {
      ctx.fail(*f, "gpus: " + std::to_string(t.gpus) + " but `device` lists " +
                       std::to_string(t.devices.size()) + " devices");
    }
  }
  t.workload = workload_of(ctx, map.require("workload"));
  if (const auto f = map.get("slo")) t.slo = slo_of(ctx, *f);
  return t;
}

FaultSpec fault_of(Context& ctx, const Field& field, const std::vector<TenantSpec>& written,
                   const std::set<std::string>& expanded) {
  const MapReader map(ctx, field, {"tenant", "at", "kind", "recovery"});
  FaultSpec f;
  f.where = ctx.at(field.path, field.mark);
  const Field tenant = map.require("tenant");
  f.tenant = text_of(ctx, tenant);
  if (expanded.count(f.tenant) == 0) {
    for (const TenantSpec& t : written) {
      if (t.name == f.tenant) {
        ctx.fail(tenant, "tenant '" + f.tenant + "' has " + std::to_string(t.replicas) +
                             " replicas; name one of them (" + f.tenant + "-0 .. " + f.tenant +
                             "-" + std::to_string(t.replicas - 1) + ")");
      }
    }
    ctx.fail(tenant, "no tenant named '" + f.tenant + "'" +
                         hint(f.tenant, {expanded.begin(), expanded.end()}));
  }
  f.at = duration_of(ctx, map.require("at"));
  if (const auto kind = map.get("kind")) {
    f.kind =
        choice_of<FaultKind>(ctx, *kind, {{"fatal", FaultKind::fatal}}, {"fatal"}, "fault kind");
  }
  if (const auto recovery = map.get("recovery")) f.recovery = duration_of(ctx, *recovery);
  return f;
}

OutputSpec output_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field, {"sample", "kernels"});
  OutputSpec out;
  if (const auto f = map.get("sample")) out.sample = positive_duration_of(ctx, *f);
  if (const auto f = map.get("kernels")) out.kernels = bool_of(ctx, *f);
  return out;
}

// Copies written entries into the expanded list: count/replicas N > 1 give NAME-0 .. NAME-(N-1).
// Names must stay unique after expansion.
template <typename Spec>
std::vector<Spec> expand(Context& ctx, const std::vector<Spec>& written,
                         const std::vector<Field>& fields, int Spec::*copies, const char* what) {
  std::vector<Spec> expanded;
  struct Owner {
    std::string path;  // key path of the written entry
    bool expanded;     // whether the name was made by expansion
  };
  std::map<std::string, Owner> owner;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const Spec& spec = written[i];
    const int n = spec.*copies;
    for (int k = 0; k < n; ++k) {
      Spec copy = spec;
      if (n > 1) copy.name = spec.name + "-" + std::to_string(k);
      const auto [it, inserted] = owner.emplace(copy.name, Owner{fields[i].path, n > 1});
      if (!inserted) {
        const bool by_expansion = n > 1 || it->second.expanded;
        ctx.fail_at(
            fields[i].path + ".name",
            std::string("duplicate ") + what + " name '" + copy.name + "' (also " +
                it->second.path +
                (by_expansion ? "; count/replicas N > 1 names copies NAME-0 .. NAME-(N-1)" : "") +
                ")");
      }
      expanded.push_back(std::move(copy));
    }
  }
  return expanded;
}

void read_scenario(Context& ctx, const YAML::Node& root, Scenario& scenario) {
  if (root.IsNull()) {
    throw InputError(SourceLocation{scenario.source_file, 0, 0, ""},
                     "empty scenario (expected a mapping with name, duration, gpus, tenants)");
  }
  const MapReader map(
      ctx, Field{root, "", root.Mark()},
      {"name", "description", "seed", "duration", "warmup", "gpus", "tenants", "faults", "output"},
      {{"sharing", "a gpus entry"}, {"workload", "a tenants entry"}});
  scenario.name = non_empty_text(ctx, map.require("name"));
  if (const auto f = map.get("description")) scenario.description = text_of(ctx, *f);
  scenario.seed = 1;
  if (const auto f = map.get("seed")) scenario.seed = seed_of(ctx, *f);
  scenario.duration = positive_duration_of(ctx, map.require("duration"));
  if (const auto f = map.get("warmup")) {
    scenario.warmup = duration_of(ctx, *f);
    if (scenario.warmup >= scenario.duration) {
      ctx.fail(*f, "warmup (" + units::format_duration(scenario.warmup) +
                       ") must be shorter than duration (" +
                       units::format_duration(scenario.duration) + ")");
    }
  }

  const std::vector<Field> gpu_fields = list_of(ctx, map.require("gpus"), true);
  std::vector<GpuSpec> gpus;
  for (const Field& field : gpu_fields) gpus.push_back(gpu_of(ctx, field));
  scenario.gpus = expand(ctx, gpus, gpu_fields, &GpuSpec::count, "gpu");

  std::vector<std::string> gpu_names;
  for (const GpuSpec& g : scenario.gpus) gpu_names.push_back(g.name);

  const std::vector<Field> tenant_fields = list_of(ctx, map.require("tenants"), true);
  std::vector<TenantSpec> tenants;
  for (const Field& field : tenant_fields)
    tenants.push_back(tenant_of(ctx, field, gpus, gpu_names));
  scenario.tenants = expand(ctx, tenants, tenant_fields, &TenantSpec::replicas, "tenant");

  if (const auto f = map.get("faults")) {
    std::set<std::string> names;
    for (const TenantSpec& t : scenario.tenants) names.insert(t.name);
    for (const Field& field : list_of(ctx, *f, false)) {
      scenario.faults.push_back(fault_of(ctx, field, tenants, names));
    }
  }
  if (const auto f = map.get("output")) scenario.output = output_of(ctx, *f);
}

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

// Applies one --set and returns its normalised key path (sequence indices without leading
// zeros) for Context::add_override.
std::string apply_override(YAML::Node& root, const Override& override) {
  SourceLocation where;
  where.file = kOverrideSource;
  where.key_path = override.key_path;
  const std::vector<std::string> parts = split(override.key_path, '.');
  if (parts.empty() ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    throw InputError(where, "expected a dotted key path such as gpus.0.sharing.timeslice");
  }
  YAML::Node value;
  try {
    value = YAML::Load(override.value);
  } catch (const YAML::Exception& e) {
    throw InputError(where, "bad YAML value '" + override.value + "': " + e.msg);
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

YAML::Node parse_yaml(const std::string& text, const std::string& source_name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    SourceLocation where;
    where.file = source_name;
    if (e.mark.line >= 0) {
      where.line = e.mark.line + 1;
      where.column = e.mark.column + 1;
    }
    throw InputError(where, "YAML syntax error: " + e.msg);
  }
}

}  // namespace

Override parse_override(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    SourceLocation where;
    where.file = kOverrideSource;
    where.key_path = text;
    throw InputError(where, "expected KEY=VALUE, e.g. --set gpus.0.sharing.timeslice=2ms");
  }
  return {trim(text.substr(0, equals)), text.substr(equals + 1)};
}

Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const std::vector<Override>& overrides) {
  YAML::Node root = parse_yaml(yaml_text, source_name);
  Scenario scenario;
  scenario.source_file = source_name;
  Context ctx(source_name, scenario.locations);
  for (const Override& override : overrides) ctx.add_override(apply_override(root, override));
  read_scenario(ctx, root, scenario);
  return scenario;
}

Scenario load_scenario_file(const std::string& path, const std::vector<Override>& overrides) {
  std::ifstream in(path, std::ios::binary);
  SourceLocation where;
  where.file = path;
  if (!in) throw InputError(where, "cannot open scenario file: " + std::string(strerror(errno)));
  std::error_code error;
  if (fs::is_directory(path, error)) {
    throw InputError(where, "cannot open scenario file: it is a directory");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw InputError(where, "cannot read scenario file: " + std::string(strerror(errno)));
  return load_scenario_text(text.str(), path, overrides);
}

}  // namespace gpumux
