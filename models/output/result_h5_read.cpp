// Reading result files back (`gpumux report`, `gpumux plot`): the summary, and a pass over
// every table that finds a corrupt or truncated one before anything is printed or drawn. Input
// that is not a regular file (a FIFO would block open() forever, a device never ends) and tables
// that declare more rows than the file could hold are refused in one line, as is a /tenant_names
// that does not name every row of the /tenants beside it.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "models/config/input_error.hpp"
#include "models/output/result_io.hpp"
#include "models/output/result_read_isolated.hpp"
#include "sim/io/hdf5_file.hpp"
#include "sim/util/write_all.hpp"

namespace gpumux {
namespace {

using Json = nlohmann::ordered_json;

/// At most this many bytes of a table per byte of the file: zlib's deflate, the filter gpumux
/// writes with, inflates one byte to at most ~1032.
constexpr double kMaxInflation = 1100.0;
/// Tables this small are read whatever the file's size (fill values of a few MiB take no time).
constexpr double kSmallTableBytes = 1 << 20;

/// Why PATH (symlinks followed) cannot be a result file without opening it: "no such file",
/// "a directory", "a FIFO (named pipe)", ...; "" for a regular file.
std::string not_a_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int error = errno;
    return error == ENOENT ? std::string("no such file") : std::string(std::strerror(error));
  }
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe), not a regular file";
  if (S_ISSOCK(st.st_mode)) return "a socket, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device, not a regular file";
  return "not a regular file";
}

}  // namespace

std::vector<nlohmann::ordered_json> read_summaries_h5(const std::string& path) {
  const auto not_a_result = [&](const std::string& why) {
    return InputError(SourceLocation{path, 0, 0, ""},
                      fmt::format("not a gpumux result file ({})", why));
  };
  // Before any open(): a FIFO would block it forever, a device would be read without end.
  if (const std::string why = not_a_regular_file(path); !why.empty()) throw not_a_result(why);
  h5::silence_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw not_a_result("not an HDF5 file");
  }
  std::string stored;
  try {
    h5::File file = h5::File::open_read_only(path);
    const h5::Group root = file.root();
    if (!root.exists("summary")) throw not_a_result("no /summary dataset");
    stored = root.read_string("summary");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw not_a_result(e.what());
  }
  Json parsed;
  try {
    parsed = Json::parse(stored);
  } catch (const Json::parse_error&) {
    throw not_a_result("/summary is not JSON");
  }
  std::vector<Json> summaries;
  if (parsed.is_object()) {
    summaries.push_back(std::move(parsed));
  } else if (parsed.is_array() && !parsed.empty() &&
             std::all_of(parsed.begin(), parsed.end(),
                         [](const Json& s) { return s.is_object(); })) {
    for (Json& s : parsed) summaries.push_back(std::move(s));
  } else {
    throw not_a_result("/summary is not a summary object or array");
  }
  return summaries;
}

namespace {

// H5Ovisit callback: the path of every dataset in the file, in name order.
herr_t collect_dataset(hid_t, const char* name, const H5O_info_t* info, void* out) {
  if (info->type == H5O_TYPE_DATASET) static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

// Reads every row of the dataset at PATH in blocks of kCheckRows (its own file type, so no
// conversion), which decodes every chunk; returns why it cannot be read, empty when it can.
std::string unreadable_table(hid_t file, const std::string& path, std::uint64_t file_bytes) {
  constexpr hsize_t kCheckRows = 16384;
  try {
    const h5::Handle dataset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose, "opening");
    const h5::Handle space(H5Dget_space(dataset.id()), H5Sclose, "reading its dataspace");
    const h5::Handle type(H5Dget_type(dataset.id()), H5Tclose, "reading its type");
    const int rank = H5Sget_simple_extent_ndims(space.id());
    if (rank < 0) return "unreadable dataspace";
    const std::size_t row_size = H5Tget_size(type.id());
    if (row_size == 0) return "unreadable type";
    const bool variable =
        H5Tdetect_class(type.id(), H5T_VLEN) > 0 || H5Tis_variable_str(type.id()) > 0;
    if (rank == 0) {  // a scalar: one value
      std::vector<std::byte> value(row_size);
      h5::check(H5Dread(dataset.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data()),
                "reading");
      if (variable) H5Dvlen_reclaim(type.id(), space.id(), H5P_DEFAULT, value.data());
      return "";
    }
    if (rank != 1) return fmt::format("{} dimensions, not a table", rank);
    hsize_t rows = 0;
    H5Sget_simple_extent_dims(space.id(), &rows, nullptr);
    // Rows the file cannot hold are fill values HDF5 would make up one by one (2^40 rows of a
    // 38 KB file: hours); deflate stores at most ~1032 bytes in one, so more is not a table.
    const double declared = static_cast<double>(rows) * static_cast<double>(row_size);
    if (declared > kMaxInflation * static_cast<double>(file_bytes) + kSmallTableBytes) {
      return fmt::format("declares {} rows of {} B, more than a {} B file can hold", rows, row_size,
                         file_bytes);
    }
    std::vector<std::byte> block(static_cast<std::size_t>(std::min(rows, kCheckRows)) * row_size);
    for (hsize_t first = 0; first < rows; first += kCheckRows) {
      const hsize_t count = std::min(kCheckRows, rows - first);
      h5::check(H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, &first, nullptr, &count, nullptr),
                "selecting rows");
      const h5::Handle memory(H5Screate_simple(1, &count, nullptr), H5Sclose, "a memory space");
      h5::check(
          H5Dread(dataset.id(), type.id(), memory.id(), space.id(), H5P_DEFAULT, block.data()),
          fmt::format("reading rows {} to {}", first, first + count - 1));
      if (variable) H5Dvlen_reclaim(type.id(), memory.id(), H5P_DEFAULT, block.data());
    }
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

// The rows of the 1-D dataset at PATH (0 for a scalar).
hsize_t rows_of(hid_t file, const std::string& path) {
  const h5::Handle dataset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose, "opening");
  const h5::Handle space(H5Dget_space(dataset.id()), H5Sclose, "reading its dataspace");
  hsize_t rows = 0;
  if (H5Sget_simple_extent_ndims(space.id()) == 1) {
    H5Sget_simple_extent_dims(space.id(), &rows, nullptr);
  }
  return rows;
}

// /tenant_names names the rows of /tenants beside it (the root's, or a compare file's
// /strategies/LABEL/): a file where the two differ in length (an emptied /tenant_names) would be
// reported or drawn with wrong names or none. Returns why, or "" when every pair agrees.
std::string tenant_names_mismatch(hid_t file, const std::vector<std::string>& datasets) {
  for (const std::string& dataset : datasets) {
    const auto slash = dataset.rfind('/');
    const std::string folder = slash == std::string::npos ? "" : dataset.substr(0, slash + 1);
    if (dataset.substr(folder.size()) != "tenants") continue;
    const std::string names = folder + "tenant_names";
    if (std::find(datasets.begin(), datasets.end(), names) == datasets.end()) continue;
    const hsize_t tenants = rows_of(file, dataset), named = rows_of(file, names);
    if (tenants != named) {
      return fmt::format("/{} has {} rows and /{} {} names", dataset, tenants, names, named);
    }
  }
  return "";
}

}  // namespace

void check_result_tables_h5(const std::string& path) {
  if (const std::string why = not_a_regular_file(path); !why.empty()) {
    throw InputError(SourceLocation{path, 0, 0, ""},
                     fmt::format("not a gpumux result file ({})", why));
  }
  std::error_code size_error;
  const std::uint64_t file_bytes = std::filesystem::file_size(path, size_error);
  h5::silence_errors();
  try {
    const h5::File file = h5::File::open_read_only(path);
    std::vector<std::string> datasets;
    h5::check(H5Ovisit2(file.root().id(), H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &datasets,
                        H5O_INFO_BASIC),
              "listing its tables");
    for (const std::string& dataset : datasets) {
      const std::string why =
          unreadable_table(file.root().id(), dataset, size_error ? 0 : file_bytes);
      if (!why.empty()) {
        throw InputError(SourceLocation{path, 0, 0, ""},
                         fmt::format("/{}: corrupt or truncated table ({})", dataset, why));
      }
    }
    if (const std::string why = tenant_names_mismatch(file.root().id(), datasets); !why.empty()) {
      throw InputError(SourceLocation{path, 0, 0, ""},
                       fmt::format("inconsistent tables ({}): not as gpumux wrote it", why));
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(SourceLocation{path, 0, 0, ""},
                     fmt::format("not a gpumux result file ({})", e.what()));
  }
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUMUX_CLANG_ASAN 1
#endif
#endif
#ifndef GPUMUX_CLANG_ASAN
#define GPUMUX_CLANG_ASAN 0
#endif

namespace {

// The reading child's memory: the address space it has at the fork plus 1 GiB and twice the
// file (assumption: decoding a gpumux file needs a 16,384-row block, HDF5's 1 MiB chunk cache
// and the summaries, which are under the file's size). A corrupt variable-length length made
// H5Dread allocate and zero up to 4 GiB before reading the string (H5T__conv_vlen's conversion
// buffer; 1.5-3 GB of memory and the whole 30 s limit per file, found by fuzzing `report`);
// under the limit that allocation fails and the library reports the read failed, at once. Not
// under AddressSanitizer: its shadow mappings are counted in the address space.
void limit_child_memory(double file_bytes) {
#if defined(__SANITIZE_ADDRESS__) || GPUMUX_CLANG_ASAN
  (void)file_bytes;
#else
  std::ifstream statm("/proc/self/statm");
  unsigned long long pages = 0;
  if (!(statm >> pages)) return;  // no /proc: no limit, the timeout still holds
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  const double most = static_cast<double>(pages) * page + 1073741824.0 + 2 * file_bytes;
  rlimit current{};
  if (::getrlimit(RLIMIT_AS, &current) != 0) return;
  if (current.rlim_cur != RLIM_INFINITY && static_cast<double>(current.rlim_cur) <= most) return;
  rlimit lowered = current;
  lowered.rlim_cur = static_cast<rlim_t>(most);
  (void)::setrlimit(RLIMIT_AS, &lowered);  // a refusal leaves the timeout as the bound
#endif
}

}  // namespace

std::vector<nlohmann::ordered_json> read_result_file_isolated(const std::string& path,
                                                              double base_seconds,
                                                              void (*in_child)()) {
  // What needs no HDF5 first, in this process: a FIFO or a missing file is one line already.
  if (const std::string why = not_a_regular_file(path); !why.empty()) {
    throw InputError(SourceLocation{path, 0, 0, ""},
                     fmt::format("not a gpumux result file ({})", why));
  }
  std::error_code size_error;
  const double file_bytes =
      static_cast<double>(size_error ? 0 : std::filesystem::file_size(path, size_error));
  const auto limit = std::chrono::milliseconds(
      static_cast<std::int64_t>((base_seconds + file_bytes / (20.0 * 1024 * 1024)) * 1000));
  int channel[2];
  if (::pipe(channel) != 0) {
    throw std::runtime_error(std::string("reading a result file: pipe: ") + std::strerror(errno));
  }
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(channel[0]);
    ::close(channel[1]);
    throw std::runtime_error(std::string("reading a result file: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    // The child: 'S' + the summaries as one JSON array, or 'E' + the one-line error. A crash
    // in the library ends it plainly (no handler of the parent's runs).
    ::close(channel[0]);
    for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
    limit_child_memory(file_bytes);
    if (in_child != nullptr) in_child();
    int status = 0;
    std::string answer;
    try {
      const std::vector<Json> summaries = read_summaries_h5(path);
      check_result_tables_h5(path);
      answer = "S" + Json(summaries).dump();
    } catch (const std::exception& e) {
      answer = std::string("E") + e.what();
      status = 2;
    }
    (void)write_all(channel[1], answer);  // a reader gone: nothing to tell it
    ::close(channel[1]);
    ::_exit(status);
  }
  ::close(channel[1]);
  std::string answer;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd waiting{channel[0], POLLIN, 0};
    const int ready =
        ::poll(&waiting, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(channel[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its end: done, or dead
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(channel[0]);
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const auto corrupt = [&](const std::string& what) {
    return InputError(SourceLocation{path, 0, 0, ""},
                      fmt::format("not a gpumux result file (corrupt: the HDF5 library {})", what));
  };
  if (timed_out) {
    throw corrupt(fmt::format("did not finish reading it in {:.3g} s",
                              static_cast<double>(limit.count()) / 1000));
  }
  if (WIFSIGNALED(status)) {
    throw corrupt(fmt::format("crashed reading it: {}", strsignal(WTERMSIG(status))));
  }
  if (!answer.empty() && answer[0] == 'E') throw InputError(answer.substr(1));
  if (answer.empty() || answer[0] != 'S' || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw corrupt("stopped reading it");
  }
  std::vector<Json> summaries;
  for (Json& s : Json::parse(answer.substr(1))) summaries.push_back(std::move(s));
  return summaries;
}

}  // namespace gpumux
