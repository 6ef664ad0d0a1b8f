#pragma once
// Where a result file may be written, and the temporary file beside it.
//
// `gpumux run/compare -o PATH` and write_result_h5 accept only a regular file (replaced
// atomically) or a new name in an existing directory where files can be created. A symlink is
// followed to its target, which must pass the same check (the link stays, the file it points to
// is replaced). Directories, devices (/dev/null, /dev/full), FIFOs and sockets are refused.
//
// The result is written to TARGET.tmp.PID in the target's directory, fsynced, renamed over the
// target, and the directory fsynced. The temporary file's name is registered here so that a
// signal handler can remove it (remove_temp_output_signal_safe) before the process exits.
#include <exception>
#include <functional>
#include <string>

#include "sim/util/error.hpp"

namespace gpumux {

/// A result file that could not be written (a refused target, disk full, a failed rename...).
/// A UserError, so the CLI reports one line and exits 2, and Python raises ScenarioError.
class OutputError : public UserError {
 public:
  explicit OutputError(const std::string& message) : UserError(message) {}
};

struct OutputTarget {
  std::string path;       ///< the file to create or replace (symlinks followed)
  std::string directory;  ///< its directory, where the temporary file goes
  bool exists = false;    ///< a regular file is there now (it is replaced)
};

/// PATH as an error message shows it: whole up to 200 characters, else "..." and its last 197,
/// so the reason after it survives the one-line cut at 400 (sim/util/error.hpp).
std::string shown_path(const std::string& path);

/// Checks PATH as a place to write a result file and returns the file that will be written.
/// Follows symlinks (at most 40); probes that a file can be created in the directory (so a
/// read-only file system, /proc or a directory without write permission fails here, not after
/// a simulation). Throws OutputError("PATH: why") naming the path and the reason.
/// Cost: a few system calls.
OutputTarget check_output_target(const std::string& path);

/// A result file being written: TARGET.tmp.PID beside the target, registered for the signal
/// handlers from construction until commit() renames it over the target or the destructor
/// removes it. For writers that keep the file open for a while (a result file streamed during
/// a run, models/output); replace_file_atomically is the one-call form.
class AtomicOutput {
 public:
  /// Checks PATH (check_output_target: throws OutputError) and registers the temporary name.
  /// Creates nothing: the caller creates and writes temp().
  explicit AtomicOutput(const std::string& path);
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& temp() const { return temp_; }
  /// After temp() is written and closed: the test hooks (GPUMUX_TEST_FAULT write/stall/fsync/
  /// rename), fsync, rename over the target, fsync of the directory. Throws OutputError("cannot
  /// write PATH: why"); the temporary file is then removed.
  void commit();
  /// OutputError("cannot write PATH: why") for a failure while writing temp(), WHY the system's
  /// message when E is an HDF5 error naming one ("No space left on device"); removes the
  /// temporary file.
  OutputError failure(const std::exception& e);

 private:
  OutputError fail(const std::string& why);
  std::string path_;
  OutputTarget target_;
  std::string temp_;
  bool done_ = false;
};

/// Writes PATH atomically: checks it (check_output_target), calls write_temp(TEMP) to write
/// TEMP = TARGET.tmp.PID beside the target (write_temp must close the file), fsyncs TEMP, renames
/// it over TARGET and fsyncs the directory. PATH is then the old file, absent, or complete.
/// The temporary file is registered for signal handlers while it exists and removed on every
/// error. Throws OutputError("PATH: why" or "cannot write PATH: why").
void replace_file_atomically(const std::string& path,
                             const std::function<void(const std::string& temp)>& write_temp);

/// The temporary name for TARGET: TARGET.tmp.PID (same directory, so the rename is atomic).
std::string temp_output_name(const std::string& target);

/// Records PATH as the temporary file being written (one at a time; the latest wins) or clears
/// it (nullptr). Not thread-safe across concurrent writers: only the last registered file is
/// removed by remove_temp_output_signal_safe.
void register_temp_output(const char* path);

/// Unlinks the registered temporary file, if any. Async-signal-safe (unlink only).
void remove_temp_output_signal_safe();

/// Tells HDF5 not to run its clean-up at process exit (H5dont_atexit); call before any other
/// HDF5 use. HDF5 1.10 keeps a file whose H5Fclose failed (disk full) in its table and crashes
/// closing it again at exit; every file gpumux writes or reads is closed explicitly anyway.
void skip_hdf5_cleanup_at_exit();

/// Test hook: the faults to inject into every output written from now on, a comma-separated
/// list of POINT:ERRNO_NAME (points "probe", "write", "fsync", "rename"; ENOSPC, EIO, EACCES,
/// EROFS, EDQUOT, EXDEV), e.g. "write:ENOSPC", and "stall:SECONDS"; "" (the default): none.
/// Unknown entries are ignored. For tests only: the CLI sets it once at start-up from the
/// environment variable GPUMUX_TEST_FAULT (docs/performance.md "Developer switches"), unit tests
/// call it directly. Not thread-safe: set before writing.
void set_output_test_faults(std::string spec);

/// Test hook: the errno injected at POINT ("probe", "write", "fsync", "rename"), or 0.
int injected_output_fault(const char* point);

/// Test hook: seconds to pause after the temporary file is written and before it is closed
/// ("stall:SECONDS" in the test faults), so a test can signal the process mid-write. 0: none.
double injected_output_stall();

}  // namespace gpumux
