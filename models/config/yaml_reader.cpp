#include "models/config/yaml_reader.hpp"
#include "sim/util/utf8.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace gpumux::yaml {

namespace fs = std::filesystem;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
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

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

namespace {

[[noreturn]] void fail_in(const std::string& source_name, int line, int column,
                          const std::string& message) {
  SourceLocation where;
  where.file = source_name;
  where.line = line;
  where.column = column;
  throw InputError(where, message);
}

// gpumux reads UTF-8 only (a name or description goes into JSON and HDF5 results, which must be
// UTF-8): a UTF-16/32 byte-order mark or an invalid byte is an error at its line and column.
void check_utf8(const std::string& text, const std::string& source_name) {
  const auto starts = [&](std::initializer_list<unsigned char> bom) {
    return text.size() >= bom.size() &&
           std::equal(bom.begin(), bom.end(), text.begin(),
                      [](unsigned char b, char c) { return b == static_cast<unsigned char>(c); });
  };
  if (starts({0x00, 0x00, 0xFE, 0xFF}) || starts({0xFF, 0xFE, 0x00, 0x00})) {
    fail_in(source_name, 0, 0, "the file is UTF-32 text; gpumux reads UTF-8: save it as UTF-8");
  }
  if (starts({0xFE, 0xFF}) || starts({0xFF, 0xFE})) {
    fail_in(source_name, 0, 0, "the file is UTF-16 text; gpumux reads UTF-8: save it as UTF-8");
  }
  if (const auto bad = find_invalid_utf8(text)) {
    fail_in(source_name, bad->line, bad->column, bad->message());
  }
}

// YAML nesting deeper than this is refused by yaml-cpp (its depth guard, DeepRecursion).
constexpr int kYamlMaxDepth = 2000;

// Documents after the first that are scanned for content (the "several documents" error).
// yaml-cpp 0.7's parser can report documents forever on malformed text without consuming it
// (YAML::LoadAll then loops, growing without bound: a 659-byte fuzz finding ran > 2 min and
// 5 GB, tests/fuzz/corpus/timeout-yaml-loadall), so gpumux never calls LoadAll: it loads the
// first document with YAML::Load and scans the following ones as events, at most this many.
constexpr int kYamlMaxDocumentsScanned = 64;

// Counts documents and notes where the first one after the first with content begins.
class DocumentScan : public YAML::EventHandler {
 public:
  int documents = 0;
  bool second_has_content = false;
  YAML::Mark second_mark;

  void OnDocumentStart(const YAML::Mark&) override { ++documents; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { content(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    content(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    content(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    content(mark);
  }
  void OnMapEnd() override {}

 private:
  void content(const YAML::Mark& mark) {
    if (documents >= 2 && !second_has_content) {
      second_has_content = true;
      second_mark = mark;
    }
  }
};

// Whether TEXT, whose first document FIRST loaded, may hold tokens after it (so the document
// scan below must run). Not when FIRST is a block mapping whose keys start at column 0 and no
// line starts with '%', "---" or "...": yaml-cpp's scanner ends such a mapping (pops its indent)
// only at a directive, a document start or end marker at column 0, or the end of the text, so
// the first document ran to the end and the scan would only parse it again (a 512-tenant
// scenario's second parse: 0.027 s of its start-up, docs/performance.md). A flow or
// scalar root, a sequence or an indented mapping can end before the text does ("[1]\nkey: 2",
// "- a\nkey: 2", "  a: 1\nb: 2"): those, and a byte-order mark, are scanned as before.
bool may_hold_more_documents(const std::string& text, const YAML::Node& first) {
  if (!first.IsMap() || first.Style() != YAML::EmitterStyle::Block || first.Mark().column != 0) {
    return true;
  }
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) return true;
  for (std::size_t at = 0;;) {  // AT: a line's start
    if (at < text.size() &&
        (text[at] == '%' || text.compare(at, 3, "---") == 0 || text.compare(at, 3, "...") == 0)) {
      return true;
    }
    const std::size_t end = text.find_first_of("\r\n", at);
    if (end == std::string::npos) return false;
    at = end + 1;
  }
}

}  // namespace

YAML::Node parse(const std::string& text, const std::string& source_name,
                 const std::string& prefix) {
  check_utf8(text, source_name);
  try {
    YAML::Node first = YAML::Load(text);
    if (!may_hold_more_documents(text, first)) return first;
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentScan scan;
    // An empty document after a trailing '---' is no second document.
    for (int d = 0; d < kYamlMaxDocumentsScanned && !scan.second_has_content &&
                    parser.HandleNextDocument(scan);
         ++d) {
    }
    if (scan.second_has_content) {
      const YAML::Mark mark = scan.second_mark;
      fail_in(source_name, mark.line >= 0 ? mark.line + 1 : 0, mark.line >= 0 ? mark.column + 1 : 0,
              "several YAML documents (a second one starts after '---'); gpumux reads one: put "
              "each scenario in its own file");
    }
    return first;
  } catch (const YAML::DeepRecursion& e) {
    fail_in(source_name, e.mark.line >= 0 ? e.mark.line + 1 : 0,
            e.mark.line >= 0 ? e.mark.column + 1 : 0,
            "nested too deeply: gpumux reads YAML nested at most " + std::to_string(kYamlMaxDepth) +
                " levels (yaml-cpp's limit)");
  } catch (const YAML::Exception& e) {
    SourceLocation where;
    where.file = source_name;
    if (e.mark.line >= 0) {
      where.line = e.mark.line + 1;
      where.column = e.mark.column + 1;
    }
    throw InputError(where, prefix + e.msg);
  }
}

std::optional<long long> parse_integer(const std::string& text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_number(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

// --- Context ---

Context::Context(std::string file, std::map<std::string, SourceLocation>& locations)
    : file_(std::move(file)), locations_(locations) {
  const fs::path parent = fs::path(file_).parent_path();
  base_dir_ = parent.empty() ? fs::path(".") : parent;
}

bool Context::from_override(const std::string& path) const {
  return std::any_of(overridden_.begin(), overridden_.end(), [&](const std::string& key) {
    return path == key || path.rfind(key + ".", 0) == 0;
  });
}

SourceLocation Context::at(const std::string& path, const YAML::Mark& mark) const {
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

void Context::fail(const Field& field, const std::string& message) const {
  throw InputError(at(field.path, field.mark), message);
}

void Context::record(const Field& field) {
  if (!field.path.empty()) locations_[field.path] = at(field.path, field.mark);
}

void Context::fail_at(const std::string& path, const std::string& message) const {
  const auto it = locations_.find(path);
  throw InputError(it != locations_.end() ? it->second : SourceLocation{file_, 0, 0, path},
                   message);
}

fs::path Context::resolve_path(const Field& field, const std::string& text) const {
  const fs::path path(text);
  if (path.is_absolute()) return path.lexically_normal();
  const fs::path base = from_override(field.path) ? fs::current_path() : base_dir_;
  return fs::absolute(base / path).lexically_normal();
}

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

// --- MapReader ---

MapReader::MapReader(Context& ctx, Field self, std::vector<std::string> allowed,
                     const std::map<std::string, std::string>& moved)
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

std::optional<Field> MapReader::get(const std::string& key) const {
  for (const auto& [name, field] : entries_) {
    if (name == key) return field;
  }
  return std::nullopt;
}

Field MapReader::require(const std::string& key) const {
  if (auto field = get(key)) return *field;
  Field missing{self_.node, child_path(self_.path, key), self_.mark};
  ctx_.fail(missing, "missing required key '" + key + "'");
}

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

}  // namespace gpumux::yaml
