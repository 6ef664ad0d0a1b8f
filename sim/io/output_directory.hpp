#pragma once
// A folder of output files written all or nothing (`gpumux plan -o DIR`).
//
// The target is checked before any work: an existing directory (replaced whole; a symlink to
// one is followed and the folder it points to is replaced, the link stays) or a new name in an
// existing directory where folders can be created. Whatever is in an existing directory must be
// what the caller writes (OWNED: a previous run's files), so a mistyped `-o ~` never removes a
// user's files. The files are written into TARGET.tmp.PID beside the target, then renamed into
// place: over an existing folder by an atomic exchange (renameat2 RENAME_EXCHANGE; where the
// file system lacks it, the old folder is moved aside first), after which the old folder is
// removed. The target is therefore the old folder, absent, or the complete new one; every error
// removes the temporary folder. Errors are OutputError("PATH: why"), one line.
#include <functional>
#include <string>

#include "sim/io/output_target.hpp"

namespace gpumux {

struct OutputDirectory {
  std::string path;     ///< the folder to create or replace (symlinks followed)
  std::string parent;   ///< its parent directory, where the temporary folder goes
  bool exists = false;  ///< a directory is there now (it is replaced whole)
};

/// Says whether RELATIVE (a path inside the target, "pods/00-a.yaml"; folders end in '/') may be
/// replaced: what the caller itself writes.
using OwnedEntry = std::function<bool(const std::string& relative)>;

/// Checks PATH as a folder to write (see the header comment) and returns where it goes. Probes
/// that a folder can be created beside it (the temporary folder's name, so a name too long for
/// it fails here). Throws OutputError("PATH: why"). Cost: a few system calls and a listing of
/// an existing target.
OutputDirectory check_output_directory(const std::string& path, const OwnedEntry& owned);

/// Writes PATH whole: checks it (check_output_directory), creates TARGET.tmp.PID, calls
/// write(TEMP) to fill it (write throws OutputError or std::exception on failure), then renames
/// it into place and removes the old folder. On any error PATH is unchanged and the temporary
/// folder is removed; throws OutputError("cannot write PATH: why" or "PATH: why").
void replace_directory_atomically(const std::string& path, const OwnedEntry& owned,
                                  const std::function<void(const std::string& temp)>& write);

/// Removes the temporary folder that replace_directory_atomically is filling, if any (and every
/// file and folder in it), with async-signal-safe system calls only: the second signal's
/// handler calls it before _exit (models/app/interrupt.cpp), so no DIR.tmp.PID is left behind.
/// Cost: one getdents64 per folder level and one unlinkat per entry (a plan's folder: a few).
void remove_temp_output_directory_signal_safe();

}  // namespace gpumux
