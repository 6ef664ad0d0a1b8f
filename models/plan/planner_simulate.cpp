// Simulating units in gpumux plan: the one-GPU scenario of a configuration (unit_scenario),
// the input's run settings, the per-tenant numbers of a run (RunResult or summary JSON), the SLO
// verdict per tenant (judge), and the batch runner: in-process threads or options.batch_runner
// (Dask), results stored in the unit cache.
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "models/gpu/device_profile.hpp"
#include "models/run/runner.hpp"
#include "models/run/slo.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/resolve.hpp"
#include "models/strategies/registry.hpp"
#include "models/strategies/strategy.hpp"

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
    std::vector<Config> configs;
    for (const UnitKey& u : round) {
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
      configs.push_back(c);
    }
    std::vector<std::vector<Numbers>> results(round.size());
    std::vector<std::string> errors(round.size());
    if (options_.batch_runner) {
      std::vector<std::string> texts;
      for (std::size_t i = 0; i < round.size(); ++i) {
        texts.push_back(emit_scenario_yaml(unit_scenario(configs[i], windows[i])));
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
      std::atomic<std::size_t> next{0};
      auto work = [&] {
        for (std::size_t i = next++; i < round.size(); i = next++) {
          try {
            RunOptions run;
            run.record_requests = false;
            // A unit's verdict reads only its tenants' latencies, failures and OOMs (numbers_of):
            // no utilization statistics (the same numbers, fewer instructions).
            run.device_statistics = false;
            run.interrupt = options_.interrupt;
            if (steps[i] != nullptr) {
              std::shared_ptr<SteppedRun>& stepped = *steps[i];
              if (!stepped) {
                stepped = std::make_shared<SteppedRun>(
                    resolve_scenario(unit_scenario(configs[i], last_window[i])), run);
              }
              results[i] = numbers_from_text(stepped->at(
                  windows[i], [](const RunResult& r) { return numbers_text(numbers_of(r)); }));
              continue;
            }
            results[i] =
                numbers_of(simulate(resolve_scenario(unit_scenario(configs[i], windows[i])), run));
          } catch (const std::exception& e) {
            errors[i] = e.what();
          }
        }
      };
      const int threads = std::min<int>(jobs_, static_cast<int>(round.size()));
      // A continued window forks (SteppedRun::at) while the other threads run: a function-local
      // static that another thread is initialising at that moment stays locked in the child
      // for ever (a strategy's parameter table, first read by Run::finish's scenario emit, hung
      // a plan). Every such table is built here, before any thread starts.
      if (threads > 1) {
        for (const Strategy* strategy : strategies()) (void)strategy->parameters();
      }
      std::vector<std::thread> pool;
      for (int k = 1; k < threads; ++k) pool.emplace_back(work);
      work();
      for (std::thread& th : pool) th.join();
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
      if (std::find(again.begin(), again.end(), u) == again.end()) stepped_.erase(u);
    }
    if (options_.progress) options_.progress(stats_.simulations);
    round = std::move(again);
    windows = std::move(again_windows);
  }
}

}  // namespace planner_detail
}  // namespace gpumux
