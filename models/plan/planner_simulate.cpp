// Simulating units in gpumux plan: the one-GPU scenario of a configuration (unit_scenario),
// the input's run settings, the per-tenant numbers of a run (RunResult or summary JSON), the SLO
// verdict per tenant (judge), and the batch runner: in-process threads or options.batch_runner
// (Dask), results stored in the unit cache.
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <poll.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "models/gpu/device_profile.hpp"
#include "models/run/runner.hpp"
#include "models/run/slo.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/resolve.hpp"
#include "models/strategies/registry.hpp"
#include "models/strategies/strategy.hpp"
#include "sim/util/write_all.hpp"

namespace gpumux {
namespace planner_detail {

// ---------------------------------------------------------------------------------------------
// Units: simulation

Scenario Planner::run_settings() const {
  Scenario s;
  s.name = scenario_.name;
  s.description = scenario_.description;
  s.seed = scenario_.seed;
  s.duration = scenario_.duration;
  s.warmup = scenario_.warmup;
  s.output = scenario_.output;
  s.source_file = scenario_.source_file;
  return s;
}

Nanos Planner::max_duration() const {
  return plan_.max_duration ? std::max(*plan_.max_duration, scenario_.duration)
                            : (packing_search() ? 4 : 16) * scenario_.duration;
}

std::optional<Nanos> Planner::longer_window(Nanos duration) const {
  const Nanos warmup = std::min(scenario_.warmup, duration);
  const Nanos next = warmup + 2 * (duration - warmup);
  if (next <= duration || next > max_duration()) return std::nullopt;
  return next;
}

Scenario Planner::unit_scenario(const Config& config, Nanos duration) const {
  if (config.machine >= 0) {
    Scenario s = node_scenario(config, "node0");
    if (duration > 0) s.duration = duration;
    return s;
  }
  const ModelInfo& model = models_[static_cast<std::size_t>(config.model)];
  Scenario s = run_settings();
  if (duration > 0) s.duration = duration;
  GpuSpec gpu;
  gpu.name = "gpu0";
  gpu.model = model.profile->name;
  gpu.cost_per_hour = model.spec.cost_per_hour;
  gpu.where.key_path = "gpus.0";
  // The registry's strategy of the variant (models/strategies/registry.hpp).
  const Strategy& strategy = strategy_of(config.variant);
  gpu.sharing = SharingSpec(strategy);
  int max_block = 0;
  for (const Block& b : config.blocks) max_block = std::max(max_block, popcount(b.tenants));
  if (&strategy == &time_slicing_strategy()) gpu.sharing.replicas = max_block;
  if (&strategy == &mps_strategy()) gpu.sharing.replicas = config.variant.replicas;
  const bool mig = config.blocks.front().profile >= 0;
  for (const Block& b : config.blocks) {
    if (mig)
      gpu.mig.push_back(model.profile->mig_profiles[static_cast<std::size_t>(b.profile)].name);
  }
  s.gpus.push_back(gpu);
  for (int t = 0; t < n_; ++t) {
    for (std::size_t b = 0; b < config.blocks.size(); ++b) {
      if (!(config.blocks[b].tenants >> t & 1u)) continue;
      TenantSpec spec = scenario_.tenants[static_cast<std::size_t>(t)];
      spec.device = mig ? "gpu0/" + std::to_string(b) : std::string("gpu0");
      spec.devices = {spec.device};
      spec.gpus = 1;
      s.tenants.push_back(spec);
    }
  }
  for (const FaultSpec& f : scenario_.faults) {
    for (const TenantSpec& t : s.tenants) {
      if (t.name == f.tenant) s.faults.push_back(f);
    }
  }
  return s;
}

std::vector<Numbers> numbers_of(const RunResult& r) {
  std::vector<Numbers> out;
  for (const TenantResult& t : r.tenants) {
    Numbers n;
    n.name = t.name;
    n.device = t.device;
    n.failed = t.failed;
    n.oom = t.oom_events;
    for (const SloCheck& c : evaluate_slo(t).checks) {
      PlanSloTarget target;
      target.key = c.key;
      target.label = c.label;
      target.target_ns = static_cast<double>(c.target_ns);
      if (c.value_ns) target.value_ns = static_cast<double>(*c.value_ns);
      if (c.low_ns) target.low_ns = static_cast<double>(*c.low_ns);
      if (c.high_ns) target.high_ns = static_cast<double>(*c.high_ns);
      target.samples = c.samples;
      n.targets.push_back(target);
    }
    out.push_back(n);
  }
  return out;
}

std::vector<Numbers> numbers_of(const std::string& summary_text) {
  const nlohmann::json summary = nlohmann::json::parse(summary_text);
  std::vector<Numbers> out;
  for (const auto& [name, t] : summary.at("tenants").items()) {
    Numbers n;
    n.name = name;
    n.device = t.value("device", "");
    n.failed = t.value("failed", std::int64_t{0});
    n.oom = t.value("oom_events", std::int64_t{0});
    if (const auto slo = t.find("slo"); slo != t.end() && slo->is_object()) {
      for (const auto& item : slo->items()) {
        // Not a structured binding: clang (the sanitizer build) does not capture those.
        const std::string& key = item.key();
        const nlohmann::json& check = item.value();
        PlanSloTarget target;
        target.key = key;
        target.label = slo_label(key);
        target.target_ns = check.value("target_ns", 0.0);
        auto number = [&check](const char* name) -> std::optional<double> {
          const auto it = check.find(name);
          if (it == check.end() || !it->is_number()) return std::nullopt;
          return it->get<double>();
        };
        target.value_ns = number("value_ns");
        target.low_ns = number("low_ns");
        target.high_ns = number("high_ns");
        target.samples = check.value("samples", std::int64_t{0});
        n.targets.push_back(target);
      }
    }
    out.push_back(n);
  }
  return out;
}

/// The index of the last tenant of `scenario` called `name`, -1 if none (the numbers of a run
/// carry tenant names; the planner's masks carry indices).
static int last_tenant_named(const Scenario& scenario, const std::string& name) {
  int t = -1;
  for (std::size_t i = 0; i < scenario.tenants.size(); ++i) {
    if (scenario.tenants[i].name == name) t = static_cast<int>(i);
  }
  return t;
}

std::vector<PlanSloInput> Planner::slo_inputs(const std::vector<Numbers>& numbers,
                                              Mask tenants) const {
  std::vector<PlanSloInput> out;
  for (const Numbers& n : numbers) {
    const int t = last_tenant_named(scenario_, n.name);
    if (t < 0 || !(tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    PlanSloInput in;
    in.name = spec.name;
    in.best_effort = spec.best_effort;
    in.failed = faults_of_[static_cast<std::size_t>(t)] ? 0 : n.failed;
    in.oom_events = n.oom;
    in.targets = n.targets;
    in.headroom = plan_.headroom;
    out.push_back(std::move(in));
  }
  return out;
}

bool Planner::projected_not_met(const std::vector<Numbers>& numbers, Mask tenants,
                                Nanos window) const {
  const Nanos warmup = std::min(scenario_.warmup, window);
  std::vector<double> later;
  for (std::optional<Nanos> w = longer_window(window); w; w = longer_window(*w)) {
    later.push_back(to_seconds(*w - warmup));
  }
  if (later.empty()) return false;
  const std::vector<PlanSloInput> inputs = slo_inputs(numbers, tenants);
  return plan_met_probability(inputs, scenario_.output.confidence, to_seconds(window - warmup),
                              later, kPlanFutilityKappa) <= kPlanFutilityProbability;
}

std::vector<PlanTenantOutcome> Planner::judge(const std::vector<Numbers>& numbers, Mask tenants,
                                              double& worst, std::string& reason,
                                              bool* inconclusive) const {
  std::vector<PlanTenantOutcome> out;
  worst = 0;
  reason.clear();
  bool only_inconclusive = true;  // every failure so far is an inconclusive verdict
  for (const Numbers& n : numbers) {
    const int t = last_tenant_named(scenario_, n.name);
    if (t < 0 || !(tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    const PlanSloInput in = slo_inputs({n}, Mask{1} << t).front();
    const PlanSloVerdict check = check_plan_slo(in);
    PlanTenantOutcome o;
    o.name = spec.name;
    o.device = n.device;
    o.met = check.met;
    o.worst_ratio = check.worst_ratio;
    o.worst_bound_ratio = check.worst_bound_ratio;
    o.reason = check.reason;
    o.worst = check.worst;
    o.inconclusive = check.inconclusive;
    o.samples = check.worst_samples;
    worst = std::max(worst, check.worst_ratio);
    if (!check.met) {
      // The reason is the first decided failure (a miss, an OOM, ...): what a longer window
      // cannot change; the first inconclusive verdict only when nothing else failed.
      if (reason.empty() || (only_inconclusive && !check.inconclusive)) reason = check.reason;
      only_inconclusive = only_inconclusive && check.inconclusive;
    }
    out.push_back(o);
  }
  if (inconclusive != nullptr) *inconclusive = !reason.empty() && only_inconclusive;
  return out;
}

Nanos Planner::config_duration(const Config& c) {
  Nanos longest = scenario_.duration;
  for (const Block& b : c.blocks) {
    longest = std::max(longest, unit(unit_key(b.tenants, c.model, b.profile, c.variant)).duration);
  }
  return longest;
}

namespace {

/// Numbers as text and back, exactly (the doubles are integers of ns; order kept): what a
/// continued simulation's child process sends back (SteppedRun).
std::string numbers_text(const std::vector<Numbers>& numbers) {
  nlohmann::json out = nlohmann::json::array();
  for (const Numbers& n : numbers) {
    nlohmann::json targets = nlohmann::json::array();
    for (const PlanSloTarget& t : n.targets) {
      const auto optional = [](const std::optional<double>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json();
      };
      targets.push_back({t.key, t.label, t.target_ns, optional(t.value_ns), optional(t.low_ns),
                         optional(t.high_ns), t.samples});
    }
    out.push_back({n.name, n.device, n.failed, n.oom, targets});
  }
  return out.dump();
}

std::vector<Numbers> numbers_from_text(const std::string& text) {
  std::vector<Numbers> out;
  for (const nlohmann::json& n : nlohmann::json::parse(text)) {
    Numbers numbers;
    numbers.name = n.at(0).get<std::string>();
    numbers.device = n.at(1).get<std::string>();
    numbers.failed = n.at(2).get<std::int64_t>();
    numbers.oom = n.at(3).get<std::int64_t>();
    for (const nlohmann::json& t : n.at(4)) {
      PlanSloTarget target;
      target.key = t.at(0).get<std::string>();
      target.label = t.at(1).get<std::string>();
      target.target_ns = t.at(2).get<double>();
      const auto optional = [](const nlohmann::json& v) {
        return v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
      };
      target.value_ns = optional(t.at(3));
      target.low_ns = optional(t.at(4));
      target.high_ns = optional(t.at(5));
      target.samples = t.at(6).get<std::int64_t>();
      numbers.targets.push_back(target);
    }
    out.push_back(numbers);
  }
  return out;
}

}  // namespace

Config Planner::unit_config(const UnitKey& u) const {
  Config c;
  c.model = u.model;
  const bool exclusive = u.strategy == &exclusive_strategy();
  const bool time_slicing = u.strategy == &time_slicing_strategy();
  c.variant.family = u.profile >= 0 ? (exclusive      ? kMig
                                       : time_slicing ? kMigTs
                                                      : kMigMps)
                                    : (exclusive      ? kDedicated
                                       : time_slicing ? kTimeSlicing
                                                      : kMps);
  c.variant.replicas = u.strategy == &mps_strategy() ? u.replicas : 0;
  c.blocks.push_back({u.tenants, u.profile});
  return c;
}

std::vector<Numbers> Planner::simulate_unit(const UnitKey& u, Nanos window,
                                            std::shared_ptr<SteppedRun>* stepped,
                                            Nanos longest) const {
  RunOptions run;
  run.record_requests = false;
  // A unit's verdict reads only its tenants' latencies, failures and OOMs (numbers_of): no
  // utilization statistics (the same numbers, fewer instructions).
  run.device_statistics = false;
  run.interrupt = options_.interrupt;
  if (stepped != nullptr) {
    if (!*stepped) {
      *stepped = std::make_shared<SteppedRun>(
          resolve_scenario(unit_scenario(unit_config(u), longest)), run);
    }
    return numbers_from_text(
        (*stepped)->at(window, [](const RunResult& r) { return numbers_text(numbers_of(r)); }));
  }
  return numbers_of(simulate(resolve_scenario(unit_scenario(unit_config(u), window)), run));
}

// ---------------------------------------------------------------------------------------------
// Unit workers: processes that simulate units, forked while the planner's process has one
// thread. Each worker is single-threaded, so the fork of a continued window (SteppedRun::at)
// copies no lock another thread holds (a threaded plan hung so: 1 in 17 runs of a test plan).
// Messages both ways are frames: an 8-byte length, then text. To a worker: "R tenants model
// profile strategy replicas window longest" (a unit over a window; longest > 0: continued, on
// the worker that holds its simulation) or "D tenants model profile strategy replicas" (drop
// that unit's continued simulation). From a worker: "ok\n" and the numbers (numbers_text) or
// "error\n" and the message. The results land by index, so the answer is the threads'.

class UnitWorkers {
 public:
  struct Worker {
    pid_t pid = -1;
    int fd = -1;  // this process's end of the socket pair
  };
  std::vector<Worker> workers;  // fd < 0: gone
  UnitWorkers() = default;
  UnitWorkers(const UnitWorkers&) = delete;
  UnitWorkers& operator=(const UnitWorkers&) = delete;
  ~UnitWorkers() {
    for (std::size_t k = 0; k < workers.size(); ++k) stop(k);
  }
  bool alive(std::size_t k) const { return workers[k].fd >= 0; }
  /// Ends worker K (idle or not) and reaps it.
  void stop(std::size_t k) {
    Worker& w = workers[k];
    if (w.fd < 0) return;
    ::close(w.fd);
    w.fd = -1;
    ::kill(w.pid, SIGKILL);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
};

namespace {

bool send_frame(int fd, const std::string& text) {
  const std::string frame = length_framed(text);
  std::size_t done = 0;
  while (done < frame.size()) {
    // MSG_NOSIGNAL: a worker that died is an error here, not SIGPIPE (workers run on Linux
    // only: single_threaded).
#if defined(MSG_NOSIGNAL)
    const ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
#else
    const ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, 0);
#endif
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool read_exactly(int fd, char* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, out + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> read_frame(int fd) {
  std::uint64_t size = 0;
  if (!read_exactly(fd, reinterpret_cast<char*>(&size), sizeof size)) return std::nullopt;
  std::string text(size, '\0');
  if (!read_exactly(fd, text.data(), text.size())) return std::nullopt;
  return text;
}

/// Whether this process has exactly one thread (Linux: /proc/self/task); false where unknown.
bool single_threaded() {
#if defined(__linux__)
  std::error_code error;
  std::size_t threads = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", error), end; !error && it != end;
       it.increment(error)) {
    ++threads;
  }
  return !error && threads == 1;
#else
  return false;
#endif
}

std::string unit_text(const UnitKey& u) {
  return fmt::format("{} {} {} {} {}", u.tenants, u.model, u.profile, strategy_rank(*u.strategy),
                     u.replicas);
}

}  // namespace

void Planner::start_workers() {
  workers_tried_ = true;
  if (!single_threaded()) return;
  auto pool = std::make_shared<UnitWorkers>();
  [[maybe_unused]] const pid_t planner = ::getpid();
  for (int k = 0; k < jobs_; ++k) {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0) break;
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(ends[0]);
      ::close(ends[1]);
      break;
    }
    if (pid == 0) {
      // The worker: only its own end open (a copy of another worker's end would keep that
      // worker from seeing the planner close it).
      ::close(ends[0]);
      for (const UnitWorkers::Worker& w : pool->workers) ::close(w.fd);
#if defined(__linux__)
      // Killed with the planner (even mid-unit), as its windows' children are with it.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != planner) ::_exit(0);
#endif
      serve_units(ends[1]);
    }
    ::close(ends[1]);
    pool->workers.push_back({pid, ends[0]});
  }
  if (pool->workers.size() < 2) return;
  stats_.worker_processes = static_cast<int>(pool->workers.size());
  workers_ = std::move(pool);
}

void Planner::serve_units(int fd) {
  for (;;) {
    const std::optional<std::string> frame = read_frame(fd);
    if (!frame) ::_exit(0);  // the planner is done (or gone)
    std::istringstream in(*frame);
    char kind = 0;
    std::uint64_t tenants = 0;
    int model = 0, profile = 0, rank = 0, replicas = 0;
    Nanos window = 0, longest = 0;
    in >> kind >> tenants >> model >> profile >> rank >> replicas;
    std::string reply;
    try {
      if (!in || rank < 0 || static_cast<std::size_t>(rank) >= strategies().size()) {
        throw std::runtime_error("unit worker: a malformed request: " + *frame);
      }
      const UnitKey u{tenants, model, profile, strategies()[static_cast<std::size_t>(rank)],
                      replicas};
      if (kind == 'D') {
        stepped_.erase(u);
        continue;
      }
      in >> window >> longest;
      if (!in) throw std::runtime_error("unit worker: a malformed request: " + *frame);
      reply = "ok\n" +
              numbers_text(simulate_unit(u, window, longest > 0 ? &stepped_[u] : nullptr, longest));
    } catch (const std::exception& e) {
      reply = std::string("error\n") + e.what();
    }
    if (!send_frame(fd, reply)) ::_exit(0);
  }
}

void Planner::simulate_on_workers(const std::vector<UnitKey>& round,
                                  const std::vector<Nanos>& windows,
                                  const std::vector<Nanos>& longest,
                                  std::vector<std::vector<Numbers>>& results,
                                  std::vector<std::string>& errors) {
  UnitWorkers& pool = *workers_;
  std::vector<std::size_t> pending;  // in order: the first that fits an idle worker goes next
  for (std::size_t i = 0; i < round.size(); ++i) pending.push_back(i);
  std::vector<std::optional<std::size_t>> busy(pool.workers.size());
  std::size_t left = round.size();
  const auto here = [&](std::size_t i) {
    // In this process (its workers gone): a fresh run of the window, the same numbers.
    try {
      results[i] = simulate_unit(round[i], windows[i], nullptr, 0);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
    --left;
  };
  const auto lost = [&](std::size_t k) {
    pool.stop(k);
    for (auto it = worker_of_.begin(); it != worker_of_.end();) {
      it = it->second == k ? worker_of_.erase(it) : std::next(it);
    }
    if (busy[k]) here(*busy[k]);
    busy[k].reset();
  };
  while (left > 0) {
    for (std::size_t k = 0; k < pool.workers.size(); ++k) {
      if (!pool.alive(k) || busy[k]) continue;
      // A unit whose simulation a worker holds goes to that worker only.
      const auto fits = std::find_if(pending.begin(), pending.end(), [&](std::size_t i) {
        const auto held = worker_of_.find(round[i]);
        return held == worker_of_.end() || held->second == k || !pool.alive(held->second);
      });
      if (fits == pending.end()) continue;
      const std::size_t i = *fits;
      pending.erase(fits);
      busy[k] = i;
      if (longest[i] > 0) {
        worker_of_[round[i]] = k;
      } else {
        worker_of_.erase(round[i]);
      }
      if (!send_frame(pool.workers[k].fd,
                      fmt::format("R {} {} {}", unit_text(round[i]), windows[i], longest[i]))) {
        lost(k);
      }
    }
    std::vector<pollfd> waiting;
    std::vector<std::size_t> waiting_worker;
    for (std::size_t k = 0; k < pool.workers.size(); ++k) {
      if (pool.alive(k) && busy[k]) {
        waiting.push_back({pool.workers[k].fd, POLLIN, 0});
        waiting_worker.push_back(k);
      }
    }
    if (waiting.empty()) {
      // Every worker gone: the rest here.
      for (const std::size_t i : pending) here(i);
      pending.clear();
      continue;
    }
    const int ready = ::poll(waiting.data(), waiting.size(), 200);
    if (options_.interrupt != nullptr && options_.interrupt->load()) {
      // No verdict of this batch counts (simulate_units throws): the workers go.
      workers_.reset();
      worker_of_.clear();
      throw PlanInterrupted();
    }
    if (ready <= 0) continue;
    for (std::size_t j = 0; j < waiting.size(); ++j) {
      if (waiting[j].revents == 0) continue;
      const std::size_t k = waiting_worker[j];
      const std::optional<std::string> reply = read_frame(pool.workers[k].fd);
      const std::size_t i = *busy[k];
      if (!reply) {
        lost(k);
        continue;
      }
      busy[k].reset();
      --left;
      if (reply->rfind("ok\n", 0) == 0) {
        try {
          results[i] = numbers_from_text(reply->substr(3));
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      } else {
        errors[i] = reply->rfind("error\n", 0) == 0 ? reply->substr(6) : *reply;
      }
    }
  }
}

void Planner::drop_stepped(const UnitKey& u) {
  stepped_.erase(u);
  const auto held = worker_of_.find(u);
  if (held == worker_of_.end()) return;
  if (workers_ && workers_->alive(held->second) &&
      !send_frame(workers_->workers[held->second].fd, "D " + unit_text(u))) {
    workers_->stop(held->second);
  }
  worker_of_.erase(held);
}

// Simulates BATCH, each unit over the input's window; a unit whose only failures are
// inconclusive verdicts runs again over a doubled measured window (longer_window) until it is
// decided or the next window would pass plan.max_duration: then it stays infeasible, marked
// inconclusive (never ranked). Each round is one parallel batch.
void Planner::simulate_units(const std::vector<UnitKey>& batch,
                             const std::vector<std::vector<UnitKey>>& candidates) {
  if (batch.empty()) return;
  const auto stopped = [&] { return options_.interrupt != nullptr && options_.interrupt->load(); };
  std::vector<UnitKey> round;
  if (options_.dominance) {
    // Dominance: a tenant that is not shown to meet its SLOs alone on a device (exclusive, the
    // whole device: no neighbour's kernels, context switches or memory) is not shown to with
    // neighbours on it either, so a unit holding it is decided by the tenant's alone unit.
    const auto alone = [](const UnitKey& u, int t) {
      return UnitKey{Mask{1} << t, u.model, u.profile, &exclusive_strategy(), 0};
    };
    std::vector<UnitKey> alone_batch;
    for (const UnitKey& u : batch) {
      if (popcount(u.tenants) < 2) continue;
      for (int t = 0; t < n_; ++t) {
        if (!(u.tenants >> t & 1u)) continue;
        const UnitKey a = alone(u, t);
        if (unit(a).verdict == Verdict::unknown &&
            std::find(alone_batch.begin(), alone_batch.end(), a) == alone_batch.end()) {
          alone_batch.push_back(a);
        }
      }
    }
    simulate_units(alone_batch);
    for (const UnitKey& u : batch) {
      std::optional<std::string> why;
      if (popcount(u.tenants) >= 2) {
        for (int t = 0; t < n_ && !why; ++t) {
          if (!(u.tenants >> t & 1u)) continue;
          const UnitInfo& a = unit(alone(u, t));
          if (a.verdict == Verdict::infeasible || a.verdict == Verdict::pruned) {
            why = fmt::format("{} alone in {}: {}",
                              scenario_.tenants[static_cast<std::size_t>(t)].name, device_label(u),
                              a.reason);
          }
        }
      }
      if (!why) {
        round.push_back(u);
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      UnitInfo& info = units_[u];
      info.verdict = Verdict::infeasible;
      info.reason = *why;
      info.resume = 0;
      ++stats_.units_pruned;
    }
    if (round.empty()) return;
  } else {
    round = batch;
  }
  std::vector<Nanos> windows;
  for (const UnitKey& u : round) {
    // A unit that stopped growing resumes at its next window: the windows it runs are the
    // same as when it grows at once.
    const Nanos resume = unit(u).resume;
    windows.push_back(resume > 0 ? resume : scenario_.duration);
  }
  // A candidate stays open while none of its units is decided infeasible.
  std::vector<bool> open(candidates.size(), true);
  const bool lazy = !candidates.empty() && options_.lazy_windows;
  const auto needed = [&](const UnitKey& u) {
    if (!lazy) return true;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (open[c] &&
          std::find(candidates[c].begin(), candidates[c].end(), u) != candidates[c].end()) {
        return true;
      }
    }
    return false;
  };
  const bool continue_windows = options_.continue_windows;
  while (!round.empty()) {
    if (stopped()) throw PlanInterrupted();
    std::vector<std::vector<Numbers>> results(round.size());
    std::vector<std::string> errors(round.size());
    if (options_.batch_runner) {
      std::vector<std::string> texts;
      for (std::size_t i = 0; i < round.size(); ++i) {
        texts.push_back(emit_scenario_yaml(unit_scenario(unit_config(round[i]), windows[i])));
      }
      const std::vector<std::string> summaries = options_.batch_runner(texts);
      for (std::size_t i = 0; i < round.size() && i < summaries.size(); ++i) {
        try {
          results[i] = numbers_of(summaries[i]);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      }
    } else {
      // A shared unit whose window may grow continues one simulation from window to window
      // (SteppedRun: the same numbers as a fresh run of each window); its longest window is
      // the last of the doublings within plan.max_duration.
      std::vector<std::shared_ptr<SteppedRun>*> steps(round.size(), nullptr);
      std::vector<Nanos> last_window(round.size(), 0);
      if (continue_windows) {
        for (std::size_t i = 0; i < round.size(); ++i) {
          Nanos last = windows[i];
          while (const std::optional<Nanos> longer = longer_window(last)) last = *longer;
          if (round[i].strategy == &exclusive_strategy()) continue;
          // The longest window continues the unit's simulation when one is kept (it runs on to
          // its end: half a fresh run's events); a unit that starts there runs it afresh.
          if (last == windows[i] && stepped_.find(round[i]) == stepped_.end()) continue;
          steps[i] = &stepped_[round[i]];
          last_window[i] = last;
        }
      }
      // The first batch of a plan with more than one job starts the worker processes, while
      // this process has no other thread (a continued window forks: in a worker, a fork of a
      // single-threaded process).
      if (!workers_tried_ && jobs_ > 1 && options_.unit_processes) start_workers();
      if (workers_) {
        simulate_on_workers(round, windows, last_window, results, errors);
      } else {
        std::atomic<std::size_t> next{0};
        auto work = [&] {
          for (std::size_t i = next++; i < round.size(); i = next++) {
            try {
              results[i] = simulate_unit(round[i], windows[i], steps[i], last_window[i]);
            } catch (const std::exception& e) {
              errors[i] = e.what();
            }
          }
        };
        const int threads = std::min<int>(jobs_, static_cast<int>(round.size()));
        // A continued window forks (SteppedRun::at) while the other threads run: a
        // function-local static that another thread is initialising at that moment stays
        // locked in the child for ever (a strategy's parameter table, first read by
        // Run::finish's scenario emit, hung a plan; SteppedRun now kills a stalled child and
        // runs its window afresh). Every such table is built here, before any thread starts.
        if (threads > 1) {
          for (const Strategy* strategy : strategies()) (void)strategy->parameters();
        }
        std::vector<std::thread> pool;
        for (int k = 1; k < threads; ++k) pool.emplace_back(work);
        work();
        for (std::thread& th : pool) th.join();
      }
    }
    // A simulation cut short is no verdict: stop before any is recorded.
    if (stopped()) throw PlanInterrupted();
    std::vector<UnitKey> again;
    std::vector<Nanos> again_windows;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.batches;
      std::vector<std::optional<Nanos>> longer(round.size());
      for (std::size_t i = 0; i < round.size(); ++i) {
        UnitInfo& info = units_[round[i]];
        ++stats_.simulations;
        if (windows[i] > scenario_.duration) ++stats_.longer_windows;
        info.duration = windows[i];
        info.resume = 0;
        if (!errors[i].empty()) {
          info.verdict = Verdict::infeasible;
          info.reason = errors[i];
          continue;
        }
        bool inconclusive = false;
        info.outcomes =
            judge(results[i], round[i].tenants, info.worst_ratio, info.reason, &inconclusive);
        info.verdict = info.reason.empty() ? Verdict::feasible : Verdict::infeasible;
        info.inconclusive = inconclusive;
        if (inconclusive) {
          longer[i] = longer_window(windows[i]);
          if (!longer[i]) {
            ++stats_.inconclusive_at_bound;
            info.reason += fmt::format(" after {:.4g} s simulated (plan.max_duration)",
                                       to_seconds(windows[i]));
          } else if (options_.futility &&
                     projected_not_met(results[i], round[i].tenants, windows[i])) {
            // The futility rule: no longer window is projected to find it met; it ends as a
            // ladder that stays undecided ends, inconclusive at the bound (never ranked).
            longer[i].reset();
            ++stats_.inconclusive_at_bound;
            ++stats_.projected_at_bound;
            info.reason += fmt::format(
                " after {:.4g} s simulated (projected not met within plan.max_duration, {:.4g} s)",
                to_seconds(windows[i]), to_seconds(max_duration()));
          }
        }
      }
      // A candidate with a unit decided infeasible (a miss, a failure, or inconclusive at the
      // bound) is closed: its other units need no longer window for it.
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        for (const UnitKey& u : candidates[c]) {
          const auto it = units_.find(u);
          if (it == units_.end()) continue;
          const UnitInfo& info = it->second;
          const bool growing = info.verdict == Verdict::infeasible && info.inconclusive &&
                               std::find(round.begin(), round.end(), u) != round.end() &&
                               longer[static_cast<std::size_t>(
                                   std::find(round.begin(), round.end(), u) - round.begin())];
          if ((info.verdict == Verdict::infeasible && !growing) ||
              info.verdict == Verdict::pruned) {
            open[c] = false;
          }
        }
      }
      for (std::size_t i = 0; i < round.size(); ++i) {
        if (!longer[i]) continue;
        if (needed(round[i])) {
          again.push_back(round[i]);
          again_windows.push_back(*longer[i]);
        } else {
          // Undecided, and no open candidate needs it now: unknown until one does.
          UnitInfo& info = units_[round[i]];
          info.verdict = Verdict::unknown;
          info.inconclusive = false;
          info.reason.clear();
          info.outcomes.clear();
          info.worst_ratio = 0;
          info.resume = *longer[i];
        }
      }
    }
    // A unit that does not grow on drops its continued simulation (one that resumes later
    // starts again at its next window: the same numbers).
    for (const UnitKey& u : round) {
      if (std::find(again.begin(), again.end(), u) == again.end()) drop_stepped(u);
    }
    if (options_.progress) options_.progress(stats_.simulations);
    round = std::move(again);
    windows = std::move(again_windows);
  }
}

}  // namespace planner_detail
}  // namespace gpumux
