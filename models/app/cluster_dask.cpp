// `gpumux run SCENARIO --dask ADDRESS` (cluster_dask.hpp): the driver child and its framing.
#include "models/app/cluster_dask.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/app/python_tool.hpp"
#include "models/cluster/cluster_metrics.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/workload_pods.hpp"
#include "models/config/input_error.hpp"
#include "sim/util/input_file.hpp"

namespace gpumux {
namespace {

// Groups per Dask worker (python/gpumux/_dask_cluster.py TASKS_PER_WORKER): a few each, so a
// slow or lost worker leaves little behind.
constexpr int kTasksPerWorker = 4;

// What the driver child runs: the package's driver, or one error frame naming what is missing
// (the compiled _gpumux, numpy, pandas ...), never a traceback.
constexpr const char* kBootstrap = R"PY(import json, sys
try:
    from gpumux import _dask_cluster
except ImportError as e:
    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    if text.startswith("gpumux: "):
        text = text[len("gpumux: "):]
    sys.stdout.write(json.dumps({"error": "--dask: " + text, "exit": 2}) + "\n")
    sys.exit(2)
sys.exit(_dask_cluster.main(sys.argv[1:]))
)PY";

/// python3 -c BOOTSTRAP ADDRESS (gpumux._dask_cluster.main), its stdin and stdout piped here,
/// stderr shared.
class DriverProcess {
 public:
  DriverProcess(const std::string& address, const std::atomic<bool>* interrupt)
      : interrupt_(interrupt) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("--dask: pipe failed");
    const std::string python = tool_python();
    const std::string path = tool_python_path();
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("--dask: fork failed");
    if (pid_ == 0) {
      // The driver (and a local:N cluster's workers, which it closes on SIGTERM) never outlives
      // gpumux: killed or gone (SIGKILL included), gpumux's death sends the driver SIGTERM.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);  // it died before the line above
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      ::close(in[0]);
      ::close(in[1]);
      ::close(out[0]);
      ::close(out[1]);
      if (!path.empty()) ::setenv("PYTHONPATH", path.c_str(), 1);
      // A stopped driver (SIGTERM) leaves its local:N cluster's semaphores to multiprocessing's
      // resource tracker, which warns about them on the stderr it shares with gpumux: the stop
      // is then one line, as on every path (interrupt.hpp).
      std::string warnings = "ignore:resource_tracker:UserWarning";
      if (const char* old = std::getenv("PYTHONWARNINGS"); old != nullptr && *old != '\0') {
        warnings = std::string(old) + "," + warnings;
      }
      ::setenv("PYTHONWARNINGS", warnings.c_str(), 1);
      const char* argv[] = {python.c_str(), "-c", kBootstrap, address.c_str(), nullptr};
      ::execvp(python.c_str(), const_cast<char* const*>(argv));
      nlohmann::json frame;
      frame["error"] = fmt::format(
          "--dask: {} cannot be started ({}): install python3 with dask "
          "(scripts/install-deps.sh) or set GPUMUX_PYTHON to one",
          python, std::strerror(errno));
      frame["exit"] = 2;
      const std::string line = frame.dump() + "\n";
      [[maybe_unused]] const ssize_t n = ::write(STDOUT_FILENO, line.data(), line.size());
      ::_exit(2);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  DriverProcess(const DriverProcess&) = delete;
  DriverProcess& operator=(const DriverProcess&) = delete;
  ~DriverProcess() {
    if (to_ >= 0) ::close(to_);
    if (from_ >= 0) ::close(from_);
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      reap();
    }
  }

  void write(const std::string& data) {
    const char* p = data.data();
    std::size_t size = data.size();
    while (size > 0) {
      const ssize_t n = ::write(to_, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error(stopped("while reading its request"));
      p += n;
      size -= static_cast<std::size_t>(n);
    }
  }
  /// After its last frame: the driver closes its client (and a local:N cluster) and exits.
  void wait_exit() {
    if (reap() != 0 && (interrupt_ == nullptr || !interrupt_->load())) {
      throw std::runtime_error("--dask: the Dask driver failed after its last answer");
    }
  }
  void close_input() {
    ::close(to_);
    to_ = -1;
  }

  /// The next JSON line; an {"error": ...} frame throws (InputError for exit 2).
  nlohmann::json read_frame() {
    std::string line;
    for (;;) {
      const std::size_t end = buffer_.find('\n');
      if (end != std::string::npos) {
        line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        break;
      }
      if (!fill()) throw std::runtime_error(stopped("without answering"));
    }
    nlohmann::json frame = nlohmann::json::parse(line, nullptr, false);
    if (frame.is_discarded() || !frame.is_object()) {
      throw std::runtime_error("--dask: the driver answered something else than its framing");
    }
    if (frame.contains("error")) {
      const std::string message = frame["error"].get<std::string>();
      if (frame.value("exit", 3) == 2) throw InputError(message);
      throw std::runtime_error(message);
    }
    return frame;
  }
  std::string read_bytes(std::size_t size) {
    while (buffer_.size() < size) {
      if (!fill()) throw std::runtime_error(stopped("midway through an answer"));
    }
    std::string out = buffer_.substr(0, size);
    buffer_.erase(0, size);
    return out;
  }

 private:
  // Reads more; false at the end. Polls the stop flag (a SIGTERM to this process alone is
  // passed on; a terminal's SIGINT reaches the driver too).
  bool fill() {
    char chunk[1 << 16];
    for (;;) {
      if (interrupt_ != nullptr && interrupt_->load()) {
        ::kill(pid_, SIGTERM);
        throw cluster::ClusterInterrupted();
      }
      struct pollfd ready {};
      ready.fd = from_;
      ready.events = POLLIN;
      const int polled = ::poll(&ready, 1, 100);
      if (polled == 0 || (polled < 0 && errno == EINTR)) continue;
      const ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
  }
  int reap() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }
  std::string stopped(const char* when) {
    const int status = reap();
    if (interrupt_ != nullptr && interrupt_->load()) throw cluster::ClusterInterrupted();
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    // Exit 2: the driver could not start (its one line is on stderr already).
    return fmt::format("--dask: the Dask driver stopped {} (exit {})", when, code);
  }

  const std::atomic<bool>* interrupt_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

}  // namespace

double DaskRunReport::critical_path_s() const {
  double longest = 0;
  for (const DaskTask& t : tasks) longest = std::max(longest, t.wall_s);
  return replay_s + longest;
}

std::string DaskRunReport::summary_line() const {
  if (tasks.empty()) {
    return fmt::format("dask: no workload pod to simulate; replay {:.2f} s", replay_s);
  }
  double wall = 0, cpu = 0;
  std::int64_t peak = 0;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    wall += tasks[i].wall_s;
    cpu += tasks[i].cpu_s;
    peak = std::max(peak, tasks[i].peak_rss_bytes);
    if (tasks[i].wall_s > tasks[longest].wall_s) longest = i;
  }
  const DaskTask& l = tasks[longest];
  return fmt::format(
      "dask: {} tasks on {} workers; replay {:.2f} s; tasks {:.2f} s wall, {:.2f} s CPU in "
      "all; longest task {} ({} nodes, {} pods) {:.2f} s; critical path (replay + longest "
      "task) {:.2f} s; worker peak memory {:.0f} MB",
      tasks.size(), workers, replay_s, wall, cpu, longest, l.nodes, l.pods, l.wall_s,
      critical_path_s(), static_cast<double>(peak) / 1e6);
}

namespace {

/// Reads the tasks' answers until the driver's last frame, each applied to RUN as it comes
/// (ANSWERED counts them). Throws ClusterInterrupted once the stop flag is set.
void read_answers(DriverProcess& driver, const cluster::WorkloadShardPlan& plan, ClusterRun& run,
                  DaskRunReport& report, std::size_t& answered) {
  for (;;) {
    const nlohmann::json frame = driver.read_frame();
    if (frame.value("done", false)) break;
    const std::size_t task = frame.at("task").get<std::size_t>();
    const std::string stats = driver.read_bytes(frame.at("bytes").get<std::size_t>());
    if (task >= plan.nodes.size()) throw std::runtime_error("--dask: an answer for no task");
    const std::vector<cluster::PodWorkloadStats> pods = cluster::decode_workload_stats(stats);
    cluster::apply_workload_stats(pods, run.result);
    DaskTask& t = report.tasks[task];
    t.nodes = plan.nodes[task].size();
    t.pods = pods.size();
    t.estimated_launches = plan.launches[task];
    t.wall_s = frame.value("wall_s", 0.0);
    t.cpu_s = frame.value("cpu_s", 0.0);
    t.peak_rss_bytes = frame.value("peak_rss_bytes", std::int64_t{0});
    t.worker = frame.value("worker", std::string());
    ++answered;
  }
}

}  // namespace

ClusterRun simulate_cluster_on_dask(const ScenarioRequest& request, const std::string& address,
                                    int shards, const std::atomic<bool>* interrupt,
                                    DaskRunReport& report) {
  // The tasks' request: the scenario's text, named by its absolute path; the seed an override.
  nlohmann::json task_request = nlohmann::json::array();
  if (request.is_path) {
    task_request.push_back(
        input_file::read(request.scenario, input_file::kMaxScenarioBytes, "scenario file"));
    task_request.push_back(false);
  } else {
    task_request.push_back(request.scenario);
    task_request.push_back(false);
  }
  std::vector<std::string> overrides = request.overrides;
  if (request.seed) overrides.push_back("seed=" + std::to_string(*request.seed));
  task_request.push_back(overrides);
  task_request.push_back(
      request.is_path ? std::filesystem::absolute(request.scenario).lexically_normal().string()
                      : request.source_name);

  const cluster::ClusterSpec spec = load_cluster_request(request);  // bad input before Dask
  DriverProcess driver(address, interrupt);
  const nlohmann::json hello = driver.read_frame();  // reached the scheduler
  report.workers = std::max(1, hello.value("workers", 1));

  const auto begin = std::chrono::steady_clock::now();
  ClusterRun run;
  run.result = cluster::run_cluster(spec, interrupt);
  const cluster::WorkloadShardPlan plan = cluster::plan_workload_shards(
      spec, run.result, shards > 0 ? shards : kTasksPerWorker * report.workers);
  cluster::apply_workload_window(plan, run.result);
  report.replay_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

  const std::string placement = cluster::encode_workload_placement(spec, run.result);
  nlohmann::json header;
  header["request"] = task_request;
  header["groups"] = plan.nodes;
  header["placement_bytes"] = placement.size();
  driver.write(header.dump() + "\n");
  driver.write(placement);
  driver.close_input();

  report.tasks.assign(plan.nodes.size(), DaskTask{});
  std::size_t answered = 0;
  try {
    read_answers(driver, plan, run, report, answered);
  } catch (const cluster::ClusterInterrupted&) {
    report.interrupted = true;  // the replay is whole; the pods of the tasks that answered
    run.metrics = cluster::cluster_metrics(run.result);
    return run;
  }
  if (answered != plan.nodes.size()) {
    throw std::runtime_error(
        fmt::format("--dask: {} of {} tasks answered", answered, plan.nodes.size()));
  }
  driver.wait_exit();
  run.metrics = cluster::cluster_metrics(run.result);
  return run;
}

}  // namespace gpumux
