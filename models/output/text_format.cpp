#include "models/output/text_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace gpumux {

namespace {

std::string three_digits(double value) {
  const double a = std::fabs(value);
  if (a > 0 && a < 0.9995) return fmt::format("{:.3g}", value);  // 0.083, not 0.08
  if (a < 9.995) return fmt::format("{:.2f}", value);
  if (a < 99.95) return fmt::format("{:.1f}", value);
  return fmt::format("{:.0f}", value);
}

// SECONDS (>= 60) as a clock reading: "1m30s", "30m"; from an hour "2h05m", "5h"; from a day
// "3d4h". Rounded to the last unit shown.
std::string clock_duration(long long seconds) {
  if (seconds < 3600) {
    const long long rest = seconds % 60;
    return rest != 0 ? fmt::format("{}m{:02}s", seconds / 60, rest)
                     : fmt::format("{}m", seconds / 60);
  }
  const long long minutes = (seconds + 30) / 60;
  if (minutes < 24 * 60) {
    const long long rest = minutes % 60;
    return rest != 0 ? fmt::format("{}h{:02}m", minutes / 60, rest)
                     : fmt::format("{}h", minutes / 60);
  }
  const long long hours = (seconds + 1800) / 3600;
  const long long rest = hours % 24;
  return rest != 0 ? fmt::format("{}d{}h", hours / 24, rest) : fmt::format("{}d", hours / 24);
}

}  // namespace

std::string format_duration_ns(double ns) {
  if (!std::isfinite(ns)) return "-";
  const double a = std::fabs(ns);
  if (a < 999.5) return fmt::format("{:.0f} ns", ns);
  if (a < 999.5e3) return three_digits(ns / 1e3) + " us";
  if (a < 999.5e6) return three_digits(ns / 1e6) + " ms";
  if (a < 59.95e9) return three_digits(ns / 1e9) + " s";
  std::string clock = clock_duration(std::llround(a / 1e9));
  if (ns < 0) clock.insert(clock.begin(), '-');
  return clock;
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (std::fabs(bytes) >= 1023.5 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : three_digits(bytes) + " " + kUnits[unit];
}

std::string format_si(double value) {
  if (!std::isfinite(value)) return "-";
  static constexpr const char* kSuffixes[] = {"", "k", "M", "G", "T"};
  std::size_t i = 0;
  while (std::fabs(value) >= 999.5 && i + 1 < std::size(kSuffixes)) {
    value /= 1000;
    ++i;
  }
  return three_digits(value) + kSuffixes[i];
}

std::string format_count(double value) {
  return std::isfinite(value) ? fmt::format("{:.0f}", value) : "-";
}

std::string format_rate(double per_s) {
  return std::isfinite(per_s) ? three_digits(per_s) + "/s" : "-";
}

std::string format_percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", 100 * fraction) : "-";
}

std::string format_factor(double factor) {
  return std::isfinite(factor) ? fmt::format("{:.2f}x", factor) : "-";
}

std::string format_interval_ns(const nlohmann::ordered_json* low,
                               const nlohmann::ordered_json* high) {
  auto bound = [](const nlohmann::ordered_json* v) {
    return v != nullptr && v->is_number() ? format_duration_ns(v->get<double>()) : std::string("-");
  };
  return fmt::format("[{}, {}]", bound(low), bound(high));
}

std::string format_metric(MetricFormat format, const nlohmann::ordered_json* value) {
  if (value == nullptr || value->is_null()) return "-";
  if (format == MetricFormat::verdict && value->is_string()) {
    const std::string verdict = value->get<std::string>();
    return verdict == "missed" ? "MISSED" : verdict.empty() ? "-" : verdict;
  }
  if (format == MetricFormat::text || value->is_string()) {
    return value->is_string() ? value->get<std::string>() : value->dump();
  }
  if (format == MetricFormat::verdict) {
    if (value->is_boolean()) return value->get<bool>() ? "met" : "MISSED";
    return "-";
  }
  if (!value->is_number()) return "-";
  const double x = value->get<double>();
  switch (format) {
    case MetricFormat::duration:
      return format_duration_ns(x);
    case MetricFormat::rate:
      return format_rate(x);
    case MetricFormat::factor:
      return format_factor(x);
    case MetricFormat::percent:
      return format_percent(x);
    case MetricFormat::bytes:
      return format_bytes(x);
    case MetricFormat::number:
      return format_si(x);
    default:
      return format_count(x);
  }
}

void TextTable::add_row(std::vector<std::string> row) {
  row.resize(headers_.size(), "");
  rows_.push_back(std::move(row));
}

namespace {

// A cell's width in characters (UTF-8 code points), not bytes, so a "—" lines up with ASCII.
std::size_t display_width(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  return n;
}

}  // namespace

std::string TextTable::render(const std::string& indent) const {
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) widths[c] = display_width(headers_[c]);
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], display_width(row[c]));
    }
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) l += "  ";
      const std::string pad(widths[c] - display_width(cells[c]), ' ');
      l += c < left_columns_ ? cells[c] + pad : pad + cells[c];
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(headers_);
  std::vector<std::string> rule;
  for (std::size_t w : widths) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& row : rows_) line(row);
  return out;
}

}  // namespace gpumux
