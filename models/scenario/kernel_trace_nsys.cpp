// Kernel traces: the Nsight Systems SQLite export (format nsys; kernel_trace.hpp lists the
// tables and columns read): kernels, copies and the peak of device-memory allocations.
#include "models/scenario/kernel_trace_internal.hpp"

#include <sqlite3.h>

#include "sim/util/checked.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

namespace gpumux {
namespace kernel_trace_detail {
namespace {

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
    fail_key(
        path, table,
        std::string("cannot read the SQLite file (truncated or corrupt?): ") + sqlite3_errmsg(db));
  }
}

std::string column_or(const std::set<std::string>& columns, const std::string& name,
                      const std::string& fallback) {
  return columns.count(name) ? name : fallback;
}

}  // namespace

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
  const std::string name_column = kc.count("shortName")       ? "shortName"
                                  : kc.count("demangledName") ? "demangledName"
                                                              : "NULL";
  const auto col = [&](const char* name) { return column_or(kc, name, "0"); };
  const std::string sql = "SELECT rowid, start, \"end\", " + col("streamId") + ", " +
                          col("deviceId") + ", " + col("gridX") + ", " + col("gridY") + ", " +
                          col("gridZ") + ", " + col("blockX") + ", " + col("blockY") + ", " +
                          col("blockZ") + ", " + col("registersPerThread") + ", " +
                          col("staticSharedMemory") + ", " + col("dynamicSharedMemory") + ", " +
                          name_column + " FROM " + kKernels + " ORDER BY start";
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
    k.registers_per_thread =
        static_cast<int>(std::clamp<std::int64_t>(sqlite3_column_int64(s, 11), 0, 65536));
    k.shared_memory =
        checked::add_saturating(sqlite3_column_int64(s, 12), sqlite3_column_int64(s, 13));
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
        case 1:
          c.kind = "HtoD";
          break;
        case 2:
          c.kind = "DtoH";
          break;
        case 8:
          c.kind = "DtoD";
          break;
        case 10:
          c.kind = "PtoP";
          break;
        default:
          c.kind = "copy";
          break;
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

}  // namespace kernel_trace_detail
}  // namespace gpumux
