#include "models/app/interrupt.hpp"

#include <unistd.h>

#include <csignal>

#include "sim/io/output_directory.hpp"
#include "sim/io/output_target.hpp"

namespace gpumux {
namespace {

std::atomic<bool> g_interrupted{false};
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int signal_number) {
  if (g_interrupted.load()) {
    remove_temp_output_signal_safe();
    remove_temp_output_directory_signal_safe();  // plan -o DIR: its DIR.tmp.PID
    constexpr char kMessage[] = "gpumux: second signal: stopped without writing results\n";
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    ::_exit(128 + signal_number);
  }
  g_signal = signal_number;
  g_interrupted.store(true);
}

}  // namespace

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(signal_number, &action, nullptr);
  }
}

const std::atomic<bool>& stop_requested() { return g_interrupted; }

int signal_exit_status() { return 128 + (g_signal != 0 ? static_cast<int>(g_signal) : SIGINT); }

const char* stop_signal_name() {
  if (g_signal == SIGTERM) return "SIGTERM";
  if (g_signal == SIGHUP) return "SIGHUP";
  return "SIGINT";
}

}  // namespace gpumux
