#pragma once
// Reading a result file that may be corrupt, in a child process (issue 36). The HDF5 library
// itself is not safe on every corrupt file: fuzzing `gpumux report`'s readers found a flipped byte
// in a variable-length string's global heap that makes H5Dread crash (SIGSEGV in H5HG_read) and
// another that makes it loop forever (H5C_protect). gpumux cannot fix the library, so `report`
// and `plot` decode the file where neither can take the command down.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumux {

/// read_summaries_h5(PATH) then check_result_tables_h5(PATH), run in a forked child; returns
/// the summaries. The child's InputError comes back as the same one line. A child killed by a
/// signal, or still decoding after BASE_SECONDS + 1 s per 20 MB of file (assumption: a table
/// decodes at well over 20 MB of file per second; check_result_tables_h5 reads every row), is
/// killed and reported as InputError("PATH: not a gpumux result file (corrupt: the HDF5 library
/// crashed reading it: ...)" or "... did not finish reading it in N s"). The fuzz target passes
/// a shorter BASE_SECONDS than its per-input timeout. The child resets SIGSEGV, SIGBUS, SIGFPE
/// and SIGILL to their default action, then calls IN_CHILD when given (the fuzz target turns off
/// libFuzzer's crash report there: a crash in the child is the answer, not a finding). Cost: a
/// fork, plus the reads.
std::vector<nlohmann::ordered_json> read_result_file_isolated(const std::string& path,
                                                              double base_seconds = 30,
                                                              void (*in_child)() = nullptr);

}  // namespace gpumux
