#pragma once
// Stopping a run from the outside (the CLI's SIGINT, SIGTERM and SIGHUP).
//
// The first signal sets the stop flag that the runner polls (RunControl::interrupt): the run stops,
// its partial results are written marked status=interrupted and the exit status is 128 + signal.
// A signal during the write lets the write finish. A second signal removes the temporary result
// file, if one is being written (sim/io/output_target.hpp), and exits 128 + signal at once.
#include <atomic>

namespace gpumux {

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP (after loading and resolving, so a
/// signal before the run still simply ends the process; a cluster replay installs them before
/// loading: its replay and workload simulations poll the flag, and stop with nothing written).
void catch_stop_signals();

/// The stop flag the handlers set.
const std::atomic<bool>& stop_requested();

/// 128 + the signal that stopped the run (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
int signal_exit_status();

/// "SIGINT", "SIGTERM" or "SIGHUP": the signal that stopped the run.
const char* stop_signal_name();

}  // namespace gpumux
