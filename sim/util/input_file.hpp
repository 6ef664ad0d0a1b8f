#pragma once
// Reading a user's input file with a stated size limit (issue 13, bounded work): scenarios,
// device profiles, request traces and kernel traces are read whole into memory, so each kind has
// a maximum, checked before reading (regular files: their size) or while reading (pipes, e.g.
// `<(zcat trace.csv.gz)`: at most limit + 1 bytes are read). Devices (`model: /dev/zero`),
// sockets and directories are refused before any byte is read. Each refusal is one line that
// names the limit; the caller adds the location (file, key).
#include <cstdint>
#include <limits>
#include <string>

#include "sim/util/error.hpp"

namespace gpumux::input_file {

/// A file that cannot be read as an input: one line without the path (the caller adds it).
class FileError : public UserError {
 public:
  using UserError::UserError;
};

/// Scenario and device-profile YAML: hand-written, a few KB; 16 MiB leaves room for a
/// generated scenario with thousands of tenants.
inline constexpr std::int64_t kMaxScenarioBytes = std::int64_t{16} << 20;
/// Kernel traces (JSON, ncu csv) and request traces from a pipe: read whole, then parsed into
/// about as much memory again; 2 GiB holds tens of millions of requests (the public Azure and
/// Mooncake traces are below 200 MB).
inline constexpr std::int64_t kMaxTraceBytes = std::int64_t{2} << 30;
/// Arrival traces on a regular file are read as a stream (models/scenario/trace_reader.hpp:
/// two passes, flat memory): the disk is their limit. A trace from a pipe is held in memory and
/// keeps kMaxTraceBytes.
inline constexpr std::int64_t kStreamedTraceBytes = std::numeric_limits<std::int64_t>::max();
/// Nsight Systems SQLite exports: SQLite reads them page by page (only the kernel, copy and
/// memory tables are loaded), so the limit is the disk's rather than memory's.
inline constexpr std::int64_t kMaxSqliteBytes = std::int64_t{64} << 30;

/// "16 MiB", "2 GiB": a limit as the messages print it.
std::string format_limit(std::int64_t bytes);

/// Throws FileError when PATH is a directory, a device, a socket, or a regular file larger than
/// LIMIT bytes ("3.2 GiB: over the 2 GiB limit for a WHAT"); returns quietly for a missing
/// file (the caller's open reports it) and for pipes (read() bounds those). WHAT names the kind
/// of input, singular ("scenario file").
void check(const std::string& path, std::int64_t limit, const char* what);

/// The whole content of PATH, after check(); a pipe that yields more than LIMIT bytes throws
/// FileError ("more than 16 MiB from a pipe: ..."); "cannot open WHAT: REASON" when it cannot
/// be opened.
std::string read(const std::string& path, std::int64_t limit, const char* what);

}  // namespace gpumux::input_file
