#include "models/scenario/kernel_trace.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string_view>

namespace gpumux {
namespace {

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  SourceLocation where;
  where.file = file;
  where.line = line;
  throw InputError(where, message);
}

[[noreturn]] void fail_key(const std::string& file, const std::string& key,
                           const std::string& message) {
  SourceLocation where;
  where.file = file;
  where.key_path = key;
  throw InputError(where, message);
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

void check_readable(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, 0, "kernel trace not found");
  if (std::filesystem::is_directory(path, ec)) fail(path, 0, "is a directory, not a kernel trace");
}

void sort_by_start(KernelTrace& trace) {
  std::stable_sort(trace.kernels.begin(), trace.kernels.end(),
                   [](const TraceKernel& a, const TraceKernel& b) { return a.start < b.start; });
  std::stable_sort(trace.copies.begin(), trace.copies.end(),
                   [](const TraceCopy& a, const TraceCopy& b) { return a.start < b.start; });
}

// ------------------------------------------------------------------------------------------
// nsys: Nsight Systems SQLite export

struct Database {
  sqlite3* db = nullptr;
  ~Database() {
    if (db) sqlite3_close(db);
  }
};

struct Statement {
  sqlite3_stmt* stmt = nullptr;
  ~Statement() {
    if (stmt) sqlite3_finalize(stmt);
  }
};

std::uint32_t big_endian32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// The SQLite file header (sqlite.org/fileformat.html §1.3): magic, page size at offset 16, the
// in-header page count at 28 (valid when the change counter at 24 equals the version-valid-for
// number at 92). A file shorter than page size x page count was cut off.
void check_sqlite_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, 0, "cannot open the kernel trace");
  unsigned char header[100] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  const auto got = in.gcount();
  static const char kMagic[] = "SQLite format 3";
  if (got < 16 || std::string_view(reinterpret_cast<const char*>(header), 15) != kMagic) {
    fail(path, 0,
         "not a SQLite database (format nsys expects the Nsight Systems SQLite export: "
         "nsys export --type sqlite REPORT.nsys-rep)");
  }
  if (got < 100) fail(path, 0, "truncated SQLite file: shorter than its 100-byte header");
  std::uint32_t page_size = (std::uint32_t{header[16]} << 8) | header[17];
  if (page_size == 1) page_size = 65536;
  const std::uint32_t pages = big_endian32(header + 28);
  const bool count_valid = big_endian32(header + 24) == big_endian32(header + 92);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && count_valid && pages > 0) {
    const std::uint64_t expected = std::uint64_t{page_size} * pages;
    if (size < expected) {
      fail(path, 0,
           "truncated SQLite file: " + std::to_string(size) + " bytes, its header says " +
               std::to_string(expected) + " (" + std::to_string(pages) + " pages of " +
               std::to_string(page_size) + ")");
    }
  }
}

std::set<std::string> table_columns(sqlite3* db, const std::string& path,
                                    const std::string& table) {
  Statement s;
  const std::string sql = "PRAGMA table_info(" + table + ")";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    fail_key(path, table, std::string("cannot read the SQLite file: ") + sqlite3_errmsg(db));
  }
  std::set<std::string> columns;
  int rc = 0;
  while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) {
    columns.insert(reinterpret_cast<const char*>(sqlite3_column_text(s.stmt, 1)));
  }
  if (rc != SQLITE_DONE) {
    fail_key(path, table, std::string("cannot read the SQLite file: ") + sqlite3_errmsg(db));
  }
  return columns;
}

// Runs `sql`, calling `row(stmt)` per row; any SQLite error becomes one InputError line.
template <typename Row>
void query(sqlite3* db, const std::string& path, const std::string& table, const std::string& sql,
           Row row) {
  Statement s;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    fail_key(path, table, std::string("cannot read the SQLite file: ") + sqlite3_errmsg(db));
  }
  int rc = 0;
  while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) row(s.stmt);
  if (rc != SQLITE_DONE) {
    fail_key(path, table,
             std::string("cannot read the SQLite file (truncated or corrupt?): ") +
                 sqlite3_errmsg(db));
  }
}

std::string column_or(const std::set<std::string>& columns, const std::string& name,
                      const std::string& fallback) {
  return columns.count(name) ? name : fallback;
}

KernelTrace read_nsys(const std::string& path) {
  check_sqlite_header(path);
  Database d;
  if (sqlite3_open_v2(path.c_str(), &d.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    fail(path, 0, std::string("cannot open the SQLite file: ") + sqlite3_errmsg(d.db));
  }
  KernelTrace trace;
  trace.source = path;
  trace.format = KernelTraceFormat::nsys;

  const std::string kKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
  const std::set<std::string> kc = table_columns(d.db, path, kKernels);
  if (kc.empty()) {
    fail_key(path, kKernels,
             "no such table: the report has no CUDA kernels (record with nsys profile "
             "--trace=cuda)");
  }
  for (const char* needed : {"start", "end"}) {
    if (!kc.count(needed)) fail_key(path, kKernels + "." + needed, "missing column");
  }
  std::map<std::int64_t, std::string> strings;
  if (!table_columns(d.db, path, "StringIds").empty()) {
    query(d.db, path, "StringIds", "SELECT id, value FROM StringIds", [&](sqlite3_stmt* s) {
      const auto* text = sqlite3_column_text(s, 1);
      strings[sqlite3_column_int64(s, 0)] = text ? reinterpret_cast<const char*>(text) : "";
    });
  }
  const std::string name_column =
      kc.count("shortName") ? "shortName" : kc.count("demangledName") ? "demangledName" : "NULL";
  const auto col = [&](const char* name) { return column_or(kc, name, "0"); };
  const std::string sql =
      "SELECT rowid, start, \"end\", " + col("streamId") + ", " + col("deviceId") + ", " +
      col("gridX") + ", " +
      col("gridY") + ", " + col("gridZ") + ", " + col("blockX") + ", " + col("blockY") + ", " +
      col("blockZ") + ", " + col("registersPerThread") + ", " + col("staticSharedMemory") + ", " +
      col("dynamicSharedMemory") + ", " + name_column + " FROM " + kKernels + " ORDER BY start";
  query(d.db, path, kKernels, sql, [&](sqlite3_stmt* s) {
    TraceKernel k;
    k.row = static_cast<int>(sqlite3_column_int64(s, 0));
    k.start = sqlite3_column_int64(s, 1);
    k.end = sqlite3_column_int64(s, 2);
    k.stream = sqlite3_column_int64(s, 3);
    k.device = sqlite3_column_int64(s, 4);
    for (int i = 0; i < 3; ++i) {
      k.grid[i] = sqlite3_column_int64(s, 5 + i);
      k.block[i] = sqlite3_column_int64(s, 8 + i);
    }
    k.registers_per_thread = static_cast<int>(sqlite3_column_int64(s, 11));
    k.shared_memory = sqlite3_column_int64(s, 12) + sqlite3_column_int64(s, 13);
    if (sqlite3_column_type(s, 14) == SQLITE_INTEGER) {
      const auto it = strings.find(sqlite3_column_int64(s, 14));
      k.name = it != strings.end() ? it->second : "kernel";
    } else if (sqlite3_column_type(s, 14) == SQLITE_TEXT) {
      k.name = reinterpret_cast<const char*>(sqlite3_column_text(s, 14));
    } else {
      k.name = "kernel";
    }
    if (k.end <= k.start) {
      fail_key(path, kKernels + " row " + std::to_string(k.row),
               "end (" + std::to_string(k.end) + ") is not after start (" +
                   std::to_string(k.start) + ")");
    }
    trace.kernels.push_back(std::move(k));
  });

  const std::string kCopies = "CUPTI_ACTIVITY_KIND_MEMCPY";
  const std::set<std::string> cc = table_columns(d.db, path, kCopies);
  if (cc.count("start") && cc.count("end")) {
    const std::string copy_sql = "SELECT start, \"end\", " + column_or(cc, "bytes", "0") + ", " +
                                 column_or(cc, "streamId", "0") + ", " +
                                 column_or(cc, "copyKind", "-1") + " FROM " + kCopies +
                                 " ORDER BY start";
    query(d.db, path, kCopies, copy_sql, [&](sqlite3_stmt* s) {
      TraceCopy c;
      c.start = sqlite3_column_int64(s, 0);
      c.end = sqlite3_column_int64(s, 1);
      c.bytes = sqlite3_column_int64(s, 2);
      c.stream = sqlite3_column_int64(s, 3);
      // ENUM_CUDA_MEMCPY_OPER: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP (others kept as numbers).
      switch (sqlite3_column_int64(s, 4)) {
        case 1: c.kind = "HtoD"; break;
        case 2: c.kind = "DtoH"; break;
        case 8: c.kind = "DtoD"; break;
        case 10: c.kind = "PtoP"; break;
        default: c.kind = "copy"; break;
      }
      if (c.end > c.start) trace.copies.push_back(c);
    });
  }

  const std::string kMemory = "CUDA_GPU_MEMORY_USAGE_EVENTS";
  const std::set<std::string> mc = table_columns(d.db, path, kMemory);
  if (mc.count("bytes") && mc.count("memoryOperationType")) {
    // memKind 2 = device memory (ENUM_CUDA_MEM_KIND); without the column every event counts.
    const std::string where = mc.count("memKind") ? " WHERE memKind = 2" : "";
    std::int64_t live = 0, peak = 0;
    bool any = false;
    query(d.db, path, kMemory,
          "SELECT bytes, memoryOperationType FROM " + kMemory + where + " ORDER BY start",
          [&](sqlite3_stmt* s) {
            const std::int64_t bytes = sqlite3_column_int64(s, 0);
            const std::int64_t op = sqlite3_column_int64(s, 1);
            if (op == 0) live += bytes;
            if (op == 1) live -= bytes;
            peak = std::max(peak, live);
            any = true;
          });
    if (any && peak > 0) trace.peak_memory = peak;
  }
  return trace;
}

// ------------------------------------------------------------------------------------------
// torch: Kineto Chrome trace

Nanos micros_to_ns(const nlohmann::json& value, const std::string& path, const std::string& key) {
  if (value.is_number()) return static_cast<Nanos>(std::llround(value.get<double>() * 1000.0));
  if (value.is_string()) {
    try {
      return static_cast<Nanos>(std::llround(std::stod(value.get<std::string>()) * 1000.0));
    } catch (const std::exception&) {
    }
  }
  fail_key(path, key, "expected a number of microseconds");
}

void dims(const nlohmann::json& args, const char* name, std::int64_t out[3]) {
  const auto it = args.find(name);
  if (it == args.end() || !it->is_array()) return;
  for (std::size_t i = 0; i < 3 && i < it->size(); ++i) {
    if ((*it)[i].is_number()) out[i] = (*it)[i].get<std::int64_t>();
  }
}

double number_arg(const nlohmann::json& args, const char* name, double fallback) {
  const auto it = args.find(name);
  if (it == args.end() || !it->is_number()) return fallback;
  return it->get<double>();
}

}  // namespace

KernelTrace parse_torch_trace(std::istream& in, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, 0, std::string("not a JSON file: ") + e.what());
  }
  const nlohmann::json* events = nullptr;
  if (doc.is_object()) {
    const auto it = doc.find("traceEvents");
    if (it != doc.end()) events = &*it;
  }
  if (!events) {
    fail_key(path, "traceEvents",
             "missing: not a PyTorch profiler (Kineto) trace; write one with "
             "prof.export_chrome_trace(PATH)");
  }
  if (!events->is_array()) fail_key(path, "traceEvents", "expected a list of events");
  KernelTrace trace;
  trace.source = path;
  trace.format = KernelTraceFormat::torch;
  std::optional<std::int64_t> peak_reserved, peak_allocated;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    if (!e.is_object()) continue;
    const std::string key = "traceEvents." + std::to_string(i);
    const std::string cat = lower(e.value("cat", std::string()));
    const std::string name = e.value("name", std::string());
    static const nlohmann::json kNoArgs = nlohmann::json::object();
    const auto args_it = e.find("args");
    const nlohmann::json& args =
        args_it != e.end() && args_it->is_object() ? *args_it : kNoArgs;
    if (name == "[memory]") {
      // Device Type 1 = CUDA (c10::DeviceType); CPU events are 0.
      if (number_arg(args, "Device Type", 1) != 1) continue;
      const double reserved = number_arg(args, "Total Reserved", -1);
      const double allocated = number_arg(args, "Total Allocated", -1);
      if (reserved >= 0) {
        peak_reserved = std::max<std::int64_t>(peak_reserved.value_or(0),
                                               static_cast<std::int64_t>(reserved));
      }
      if (allocated >= 0) {
        peak_allocated = std::max<std::int64_t>(peak_allocated.value_or(0),
                                                static_cast<std::int64_t>(allocated));
      }
      continue;
    }
    const bool kernel = cat == "kernel";
    const bool copy = cat == "gpu_memcpy" || cat == "gpu_memset";
    if (!kernel && !copy) continue;
    if (!e.contains("ts")) fail_key(path, key + ".ts", "missing");
    if (!e.contains("dur")) fail_key(path, key + ".dur", "missing");
    const Nanos start = micros_to_ns(e["ts"], path, key + ".ts");
    const Nanos dur = micros_to_ns(e["dur"], path, key + ".dur");
    if (dur < 0) fail_key(path, key + ".dur", "negative duration");
    const auto stream = static_cast<std::int64_t>(number_arg(args, "stream", 0));
    if (copy) {
      TraceCopy c;
      c.start = start;
      c.end = start + dur;
      c.bytes = static_cast<std::int64_t>(number_arg(args, "bytes", 0));
      c.stream = stream;
      c.kind = cat == "gpu_memset" ? "memset" : name;
      if (c.end > c.start) trace.copies.push_back(c);
      continue;
    }
    TraceKernel k;
    k.row = static_cast<int>(i);
    k.name = name.empty() ? "kernel" : name;
    k.start = start;
    k.end = start + std::max<Nanos>(1, dur);
    k.stream = stream;
    k.device = static_cast<std::int64_t>(number_arg(args, "device", 0));
    dims(args, "grid", k.grid);
    dims(args, "block", k.block);
    k.registers_per_thread = static_cast<int>(number_arg(args, "registers per thread", 0));
    k.shared_memory = static_cast<std::int64_t>(number_arg(args, "shared memory", 0));
    k.blocks_per_sm = number_arg(args, "blocks per SM", 0);
    trace.kernels.push_back(std::move(k));
  }
  if (peak_reserved) {
    trace.peak_memory = *peak_reserved;
  } else if (peak_allocated) {
    trace.peak_memory = *peak_allocated;
  }
  sort_by_start(trace);
  return trace;
}

namespace {

// ------------------------------------------------------------------------------------------
// csv

std::vector<std::string> split_csv(const std::string& line, const std::string& path, int number) {
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
      fields.emplace_back(trim(field));
      field.clear();
    } else {
      field += c;
    }
  }
  if (quoted) fail(path, number, "unterminated quoted field");
  fields.emplace_back(trim(field));
  return fields;
}

bool read_line(std::istream& in, std::string& line, int& number) {
  if (!std::getline(in, line)) return false;
  ++number;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  return true;
}

double number_field(const std::string& text, const std::string& column, const std::string& path,
                    int line) {
  std::string cleaned;
  for (const char c : text) {
    if (c != ',') cleaned += c;  // ncu prints thousands separators inside quotes
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(cleaned, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (cleaned.empty() || used != cleaned.size() || !std::isfinite(value)) {
    fail(path, line, column + ": expected a number, got '" + text + "'");
  }
  return value;
}

std::int64_t integer_field(const std::string& text, const std::string& column,
                           const std::string& path, int line) {
  const double value = number_field(text, column, path, line);
  if (value < 0 || value != std::floor(value) || value > 9e18) {
    fail(path, line, column + ": expected a non-negative integer, got '" + text + "'");
  }
  return static_cast<std::int64_t>(value);
}

// "128" or "128x1x1" (also "(128, 1, 1)" / "[128,1,1]").
void dims_field(const std::string& text, std::int64_t out[3], const std::string& column,
                const std::string& path, int line) {
  std::string cleaned;
  for (const char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      cleaned += c;
    } else if (c == 'x' || c == 'X' || c == ',' || c == ' ' || c == ';') {
      if (!cleaned.empty() && cleaned.back() != ' ') cleaned += ' ';
    } else if (c != '(' && c != ')' && c != '[' && c != ']') {
      fail(path, line, column + ": expected X or XxYxZ, got '" + text + "'");
    }
  }
  std::size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    while (pos < cleaned.size() && cleaned[pos] == ' ') ++pos;
    if (pos >= cleaned.size()) {
      out[i] = i == 0 ? 0 : 1;
      continue;
    }
    const std::size_t stop = cleaned.find(' ', pos);
    out[i] = std::stoll(cleaned.substr(pos, stop - pos));
    pos = stop == std::string::npos ? cleaned.size() : stop;
  }
  if (out[0] <= 0) fail(path, line, column + ": expected X or XxYxZ, got '" + text + "'");
}

}  // namespace

KernelTrace parse_csv_kernel_trace(std::istream& in, const std::string& path) {
  KernelTrace trace;
  trace.source = path;
  trace.format = KernelTraceFormat::csv;
  std::string line;
  int number = 0;
  if (!read_line(in, line, number)) fail(path, 1, "empty file: expected a header row");
  const std::vector<std::string> header = split_csv(line, path, number);
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at.emplace(lower(header[i]), i);
  const auto find = [&](std::initializer_list<const char*> names) -> std::optional<std::size_t> {
    for (const char* n : names) {
      const auto it = at.find(n);
      if (it != at.end()) return it->second;
    }
    return std::nullopt;
  };
  const auto name_col = find({"name", "kernel", "kernel_name"});
  const auto duration_col = find({"duration_ns", "duration"});
  if (!name_col) fail(path, 1, "missing column 'name' (header: " + line + ")");
  if (!duration_col) fail(path, 1, "missing column 'duration_ns' (header: " + line + ")");
  const auto grid_col = find({"grid"});
  const auto block_col = find({"block"});
  if (grid_col.has_value() != block_col.has_value()) {
    fail(path, 1, std::string("missing column '") + (grid_col ? "block" : "grid") +
                      "': give grid and block together");
  }
  const auto regs_col = find({"registers_per_thread", "registers"});
  const auto smem_col = find({"shared_memory_bytes", "shared_memory"});
  const auto fraction_col = find({"sm_fraction"});
  const auto usage_col = find({"sm_usage"});
  const auto bound_col = find({"memory_bound"});
  const auto profile_col = find({"profile"});
  const auto gap_col = find({"gap_ns"});
  const auto start_col = find({"start_ns"});
  const auto stream_col = find({"stream"});
  if (gap_col && start_col) fail(path, 1, "give gap_ns or start_ns, not both");
  trace.timed = gap_col.has_value() || start_col.has_value();

  Nanos clock = 0;
  while (read_line(in, line, number)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_csv(line, path, number);
    const auto field = [&](std::size_t column) -> const std::string& {
      if (column >= f.size()) {
        fail(path, number,
             "missing field '" + header[column] + "' (" + std::to_string(f.size()) + " of " +
                 std::to_string(header.size()) + " columns)");
      }
      return f[column];
    };
    TraceKernel k;
    k.row = number;
    k.name = field(*name_col);
    const Nanos duration = integer_field(field(*duration_col), header[*duration_col], path, number);
    if (duration <= 0) fail(path, number, header[*duration_col] + ": must be greater than zero");
    if (grid_col) {
      dims_field(field(*grid_col), k.grid, header[*grid_col], path, number);
      dims_field(field(*block_col), k.block, header[*block_col], path, number);
    }
    if (regs_col) {
      k.registers_per_thread =
          static_cast<int>(integer_field(field(*regs_col), header[*regs_col], path, number));
    }
    if (smem_col) k.shared_memory = integer_field(field(*smem_col), header[*smem_col], path, number);
    if (fraction_col) {
      k.sm_fraction = number_field(field(*fraction_col), header[*fraction_col], path, number);
      if (!(k.sm_fraction > 0 && k.sm_fraction <= 1)) {
        fail(path, number, header[*fraction_col] + ": must be in (0, 1]");
      }
    }
    if (usage_col) {
      k.sm_usage = static_cast<int>(integer_field(field(*usage_col), header[*usage_col], path, number));
    }
    if (bound_col) {
      k.memory_bound = number_field(field(*bound_col), header[*bound_col], path, number);
      if (!(k.memory_bound >= 0 && k.memory_bound <= 1)) {
        fail(path, number, header[*bound_col] + ": must be in [0, 1]");
      }
    } else if (profile_col) {
      // Orion: 1 = compute-bound, 0 = memory-bound, -1 = neither (roofline against a knee).
      const double p = number_field(field(*profile_col), header[*profile_col], path, number);
      if (p == 1) {
        k.memory_bound = kComputeBoundMemoryShare;
      } else if (p == 0) {
        k.memory_bound = kMemoryBoundMemoryShare;
      } else if (p == -1) {
        k.memory_bound = kNeitherMemoryShare;
      } else {
        fail(path, number, header[*profile_col] + ": expected 1, 0 or -1, got '" +
                               field(*profile_col) + "'");
      }
    }
    if (stream_col) {
      k.stream = static_cast<std::int64_t>(
          number_field(field(*stream_col), header[*stream_col], path, number));
    }
    if (start_col) {
      k.start = integer_field(field(*start_col), header[*start_col], path, number);
    } else {
      const Nanos gap =
          gap_col ? integer_field(field(*gap_col), header[*gap_col], path, number) : 0;
      k.start = clock + gap;
    }
    k.end = k.start + duration;
    clock = k.end;
    trace.kernels.push_back(std::move(k));
  }
  if (start_col) sort_by_start(trace);
  return trace;
}

// ------------------------------------------------------------------------------------------
// ncu --csv

std::string ncu_key(const std::string& name) {
  std::string_view s = trim(name);
  if (s.rfind("void ", 0) == 0) s.remove_prefix(5);
  const std::size_t stop = s.find_first_of("(<");
  if (stop != std::string_view::npos) s = s.substr(0, stop);
  const std::size_t scope = s.rfind("::");
  if (scope != std::string_view::npos) s.remove_prefix(scope + 2);
  return std::string(trim(s));
}

std::map<std::string, NcuMetrics> parse_ncu_metrics(std::istream& in, const std::string& path) {
  static const std::string kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
  static const std::string kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
  std::string line;
  int number = 0;
  // ncu prints "==PROF==" lines before the table when its output is captured whole.
  std::vector<std::string> header;
  while (read_line(in, line, number)) {
    if (line.rfind("==", 0) == 0 || trim(line).empty()) continue;
    header = split_csv(line, path, number);
    break;
  }
  if (header.empty()) fail(path, 0, "empty file: expected ncu --csv output");
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at.emplace(header[i], i);
  const auto name_it = at.find("Kernel Name");
  if (name_it == at.end()) fail(path, number, "missing column 'Kernel Name' (not ncu --csv output?)");
  struct Sum {
    double sm = 0, dram = 0;
    int n_sm = 0, n_dram = 0;
  };
  std::map<std::string, Sum> sums;
  const auto metric_name = at.find("Metric Name");
  const auto metric_value = at.find("Metric Value");
  const bool long_layout = metric_name != at.end() && metric_value != at.end();
  const auto sm_col = at.find(kSm);
  const auto dram_col = at.find(kDram);
  if (!long_layout && (sm_col == at.end() || dram_col == at.end())) {
    fail(path, number,
         "missing column '" + (sm_col == at.end() ? kSm : kDram) +
             "': run ncu --csv --metrics " + kSm + "," + kDram);
  }
  const int header_line = number;
  while (read_line(in, line, number)) {
    if (trim(line).empty() || line.rfind("==", 0) == 0) continue;
    const std::vector<std::string> f = split_csv(line, path, number);
    if (f.size() < header.size()) {
      fail(path, number, "missing fields (" + std::to_string(f.size()) + " of " +
                             std::to_string(header.size()) + " columns)");
    }
    const std::string& name = f[name_it->second];
    const auto add = [&](Sum& s, bool sm, const std::string& text, const std::string& column) {
      const double v = number_field(text, column, path, number);
      (sm ? s.sm : s.dram) += v;
      ++(sm ? s.n_sm : s.n_dram);
    };
    if (long_layout) {
      const std::string& metric = f[metric_name->second];
      if (metric != kSm && metric != kDram) continue;
      for (const std::string& key : {name, ncu_key(name)}) {
        add(sums[key], metric == kSm, f[metric_value->second], "Metric Value");
      }
    } else {
      // --page raw prints a units row ("%") under the header; skip non-numeric rows.
      if (number == header_line + 1 && name.empty()) continue;
      for (const std::string& key : {name, ncu_key(name)}) {
        add(sums[key], true, f[sm_col->second], kSm);
        add(sums[key], false, f[dram_col->second], kDram);
      }
    }
  }
  std::map<std::string, NcuMetrics> out;
  for (const auto& [name, s] : sums) {
    if (s.n_sm == 0 || s.n_dram == 0) continue;
    out[name] = NcuMetrics{s.sm / s.n_sm, s.dram / s.n_dram};
  }
  if (out.empty()) {
    fail(path, 0, "no kernel has both " + kSm + " and " + kDram);
  }
  return out;
}

std::map<std::string, NcuMetrics> read_ncu_metrics(const std::string& path) {
  check_readable(path);
  std::ifstream in(path);
  if (!in) fail(path, 0, "cannot open the ncu metrics file");
  return parse_ncu_metrics(in, path);
}

KernelTraceFormat parse_kernel_trace_format(const std::string& name) {
  const std::string n = lower(name);
  if (n == "nsys" || n == "sqlite" || n == "nsight-systems") return KernelTraceFormat::nsys;
  if (n == "torch" || n == "kineto" || n == "pytorch") return KernelTraceFormat::torch;
  if (n == "csv") return KernelTraceFormat::csv;
  throw std::invalid_argument("unknown kernel trace format '" + name +
                              "' (known: nsys, torch, csv)");
}

const char* kernel_trace_format_name(KernelTraceFormat format) {
  switch (format) {
    case KernelTraceFormat::nsys: return "nsys";
    case KernelTraceFormat::torch: return "torch";
    case KernelTraceFormat::csv: return "csv";
  }
  return "csv";
}

KernelTrace read_kernel_trace(const std::string& path, KernelTraceFormat format) {
  check_readable(path);
  KernelTrace trace;
  if (format == KernelTraceFormat::nsys) {
    trace = read_nsys(path);
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, 0, "cannot open the kernel trace");
    trace = format == KernelTraceFormat::torch ? parse_torch_trace(in, path)
                                               : parse_csv_kernel_trace(in, path);
  }
  if (trace.kernels.empty()) {
    fail(path, 0,
         std::string("no kernels in the trace (") + kernel_trace_format_name(format) + " format)");
  }
  return trace;
}

}  // namespace gpumux
