// gpumux plan: the planner (bounds, unit decomposition, lazy partition search) against brute
// force on small random instances, the winning setup reproduced by a plain run, input errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>

#include "models/plan/planner.hpp"
#include "models/plan/slo_check.hpp"
#include "models/scenario/resolve.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"

namespace gpumux {
namespace {

/// A random planning instance: a few inference tenants with memory, load and SLOs that make
/// some packings work and others fail.
std::string random_instance(std::mt19937& rng, int tenants, int max_gpus) {
  std::uniform_int_distribution<int> memory_gib(2, 45);
  std::uniform_int_distribution<int> rate(20, 400);
  std::uniform_int_distribution<int> kernel_us(100, 3000);
  std::uniform_real_distribution<double> fraction(0.2, 1.0);
  std::uniform_real_distribution<double> bound(0.0, 0.9);
  std::uniform_int_distribution<int> slo_x(2, 30);
  std::uniform_int_distribution<int> coin(0, 5);
  std::string yaml = fmt::format(
      "name: random\nseed: {}\nduration: 2s\nwarmup: 200ms\n"
      "plan:\n  gpus: [{{model: h100-sxm-80gb, cost_per_hour: 4.0}}, "
      "{{model: a100-sxm4-40gb, cost_per_hour: 1.5}}]\n  max_gpus: {}\n"
      "tenants:\n",
      rng() % 1000, max_gpus);
  for (int t = 0; t < tenants; ++t) {
    const int us = kernel_us(rng);
    const int r = rate(rng) * 1000 / std::max(us, 1000) + 5;  // keep solo load moderate
    yaml += fmt::format("  - name: t{}\n    memory: {}GiB\n", t, memory_gib(rng));
    const int kind = coin(rng);
    if (kind == 0) yaml += "    isolation: memory\n";
    if (kind == 1) yaml += "    isolation: fault\n";
    yaml += fmt::format(
        "    workload:\n      arrivals: {{process: poisson, rate: {}/s}}\n      request:\n"
        "        kernels:\n          - {{name: k, duration: {}us, sm_fraction: {:.2f}, "
        "memory_bound: {:.2f}}}\n",
        r, us, fraction(rng), bound(rng));
    if (kind == 2) {
      yaml += "    best_effort: true\n";
    } else {
      yaml += fmt::format("    slo: {{p99: {}us}}\n", us * slo_x(rng));
    }
  }
  return yaml;
}

TEST(Plan, MatchesBruteForceOnRandomSmallInstances) {
  std::mt19937 rng(20261201);
  int feasible = 0, shared = 0, inconclusive_winners = 0;
  for (int instance = 0; instance < 12; ++instance) {
    const int tenants = instance < 10 ? 3 : 4;
    const std::string yaml = random_instance(rng, tenants, instance % 2 ? 2 : 3);
    const Scenario scenario = load_scenario_text(yaml, "random.yaml");
    PlanOptions fast;
    fast.jobs = 2;
    fast.refine = false;
    const PlanResult planned = plan_scenario(scenario, fast);
    PlanOptions brute;
    brute.exhaustive = true;
    const PlanResult exhaustive = plan_scenario(scenario, brute);
    std::printf("instance %d: planner %lld simulations, brute force %lld, cost %g vs %g\n",
                instance, static_cast<long long>(planned.stats.simulations),
                static_cast<long long>(exhaustive.stats.simulations),
                planned.found() ? planned.ranked.front().cost_per_hour : -1.0,
                exhaustive.found() ? exhaustive.ranked.front().cost_per_hour : -1.0);
    SCOPED_TRACE(yaml);
    ASSERT_EQ(planned.found(), exhaustive.found());
    if (!planned.found()) continue;
    ++feasible;
    EXPECT_DOUBLE_EQ(planned.ranked.front().cost_per_hour, exhaustive.ranked.front().cost_per_hour);
    if (planned.ranked.front().gpus.size() < static_cast<std::size_t>(tenants)) ++shared;
    // The planner simulates fewer configurations than brute force.
    EXPECT_LE(planned.stats.simulations, exhaustive.stats.simulations);
    // Every tenant of the winner meets its SLO in the whole-setup run, over the longest window
    // its units needed. A unit decided over a shorter window can be inconclusive over that one
    // (the interval's dependence estimate moves with the data; the window grows on to
    // plan.max_duration): then the winner says so, and that is the only way to differ.
    const PlanSetup& winner = planned.ranked.front();
    for (const PlanTenantOutcome& o : winner.outcomes) {
      if (o.met) continue;
      EXPECT_TRUE(o.inconclusive) << o.name << ": " << o.reason;
      EXPECT_EQ(winner.reason.rfind("verification run differs from the per-GPU runs: ", 0), 0u)
          << winner.reason;
      ++inconclusive_winners;
    }
  }
  // The instances exercise both outcomes: some setups found, some of them sharing GPUs; and most
  // winners are confirmed whole.
  EXPECT_GE(feasible, 4);
  EXPECT_GE(shared, 1);
  // One of the 10 winners (t2 of instance 3, a queue near saturation: p99 CI [12.2 ms, 23.3 ms]
  // from 2,897 samples around its 20.3 ms target) stays inconclusive over the grown window.
  std::printf("winners inconclusive in the verification run: %d\n", inconclusive_winners);
  EXPECT_LE(inconclusive_winners, 1);
}

const char* kNode = R"(
name: node
seed: 5
duration: 4s
warmup: 500ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0, currency: EUR}]
  max_gpus: 4
tenants:
  - name: embed
    memory: 4GiB
    isolation: fault
    workload:
      arrivals: {process: poisson, rate: 200/s}
      request:
        kernels:
          - {name: enc, duration: 300us, sm_fraction: 0.5, memory_bound: 0.5, repeat: 2}
    slo: {p99: 10ms}
  - name: rerank
    memory: 6GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request:
        kernels:
          - {name: score, duration: 1ms, sm_fraction: 0.6, memory_bound: 0.3}
    slo: {p99: 20ms}
  - name: big
    memory: 60GiB
    workload:
      arrivals: {process: poisson, rate: 50/s}
      request:
        kernels:
          - {name: gemm, duration: 8ms, sm_fraction: 1.0, memory_bound: 0.3}
    slo: {p99: 60ms}
  - name: batch
    memory: 30GiB
    best_effort: true
    workload:
      arrivals: {process: closed, concurrency: 2}
      request:
        kernels:
          - {name: step, duration: 20ms, sm_fraction: 1.0, memory_bound: 0.4}
)";

/// The answer of a plan as text: every row's label, cost, worst ratio and configuration.
std::string answer_of(const PlanResult& r, const std::vector<TenantSpec>& tenants) {
  std::string out;
  for (const PlanSetup& s : r.ranked) {
    out += fmt::format("{} {} {:.6g} {:.6g}", s.label, s.feasible, s.cost_per_hour, s.worst_ratio);
    for (const PlanGpu& g : s.gpus) {
      out += ' ';
      out += g.describe(tenants);
    }
    for (const PlanTenantOutcome& o : s.outcomes) out += fmt::format(" {}:{}", o.name, o.worst);
    out += "\n";
  }
  return out;
}

TEST(Plan, SearchShortcutsKeepTheAnswer) {
  // The two shortcuts of simulate_units (models/plan/planner_simulate.cpp): a unit's window
  // grows only while a candidate needing it may still work, and a unit holding a tenant that
  // is not shown to meet its SLOs alone on the same MIG instance is decided by that alone unit
  // (counted with the pruned units). Planned with them (the default) and without
  // (GPUMUX_PLAN_LAZY=0, GPUMUX_PLAN_DOMINANCE=0): the same rows, costs, ratios,
  // configurations and closest targets. (Their saving is CPU time on the shipped node plan,
  // bench/plan_bench.py; here the alone runs they add can outnumber what they skip.)
  std::mt19937 rng(20261206);
  std::vector<std::string> instances = {kNode};
  for (int i = 0; i < 8; ++i) instances.push_back(random_instance(rng, i < 5 ? 3 : 4, 2));
  std::int64_t decided_by_dominance = 0;
  for (std::string& yaml : instances) {
    // Every sharing allowed (plan.shared_tenant_memory: 1): with the default, the large tenants'
    // shared units are excluded before any simulation, leaving the shortcuts little to decide.
    yaml.replace(yaml.find("plan:\n"), 6, "plan:\n  shared_tenant_memory: 1\n");
    SCOPED_TRACE(yaml);
    const Scenario scenario = load_scenario_text(yaml, "random.yaml");
    PlanOptions options;
    options.jobs = 2;
    const PlanResult fast = plan_scenario(scenario, options);
    ::setenv("GPUMUX_PLAN_LAZY", "0", 1);
    ::setenv("GPUMUX_PLAN_DOMINANCE", "0", 1);
    const PlanResult slow = plan_scenario(scenario, options);
    ::unsetenv("GPUMUX_PLAN_LAZY");
    ::unsetenv("GPUMUX_PLAN_DOMINANCE");
    EXPECT_EQ(answer_of(fast, scenario.tenants), answer_of(slow, scenario.tenants));
    decided_by_dominance += fast.stats.units_pruned - slow.stats.units_pruned;
  }
  std::printf("units decided by an alone unit: %lld\n",
              static_cast<long long>(decided_by_dominance));
  EXPECT_GT(decided_by_dominance, 0);
}

TEST(Plan, ContinuedWindowsKeepEveryNumber) {
  // A unit whose window grows continues one simulation from window to window (SteppedRun,
  // models/run/runner.hpp) instead of a fresh run per window (GPUMUX_PLAN_CONTINUE=0): every
  // number of the plan's JSON is the same (the wall time aside), on the node instance and
  // random ones, and some windows grew (so the continued path ran).
  std::mt19937 rng(20261207);
  std::vector<std::string> instances = {kNode};
  for (int i = 0; i < 6; ++i) instances.push_back(random_instance(rng, 3, 2));
  std::int64_t longer = 0;
  for (const std::string& yaml : instances) {
    SCOPED_TRACE(yaml);
    const Scenario scenario = load_scenario_text(yaml, "random.yaml");
    PlanOptions options;
    options.jobs = 2;
    nlohmann::ordered_json continued = plan_json(plan_scenario(scenario, options));
    ::setenv("GPUMUX_PLAN_CONTINUE", "0", 1);
    nlohmann::ordered_json fresh = plan_json(plan_scenario(scenario, options));
    ::unsetenv("GPUMUX_PLAN_CONTINUE");
    continued["search"].erase("wall_s");
    fresh["search"].erase("wall_s");
    EXPECT_EQ(continued.dump(1), fresh.dump(1));
    longer += continued["search"].value("longer_windows", std::int64_t{0});
  }
  std::printf("windows grown: %lld\n", static_cast<long long>(longer));
  EXPECT_GT(longer, 0);
}

TEST(Plan, BestSetupReproducesWithRun) {
  const Scenario scenario = load_scenario_text(kNode, "node.yaml");
  const PlanResult result = plan_scenario(scenario);
  ASSERT_TRUE(result.found());
  EXPECT_EQ(result.currency, "EUR");
  ASSERT_TRUE(result.best_run.has_value());
  // The written scenario, loaded and run like `gpumux run best.yaml`, gives the same numbers.
  const Scenario best = load_scenario_text(result.best_yaml, "best.yaml");
  EXPECT_FALSE(best.plan.has_value());
  RunOptions options;
  options.record_requests = false;
  const RunResult rerun = simulate(resolve_scenario(best), options);
  ASSERT_EQ(rerun.tenants.size(), result.best_run->tenants.size());
  for (std::size_t t = 0; t < rerun.tenants.size(); ++t) {
    EXPECT_EQ(rerun.tenants[t].name, result.best_run->tenants[t].name);
    EXPECT_EQ(rerun.tenants[t].device, result.best_run->tenants[t].device);
    EXPECT_EQ(rerun.tenants[t].latency.p99, result.best_run->tenants[t].latency.p99);
    EXPECT_EQ(rerun.tenants[t].completed, result.best_run->tenants[t].completed);
  }
  // The per-unit runs the planner judged on agree with the whole setup's run.
  for (const PlanTenantOutcome& o : result.ranked.front().outcomes) {
    EXPECT_TRUE(o.met) << o.name << ": " << o.reason;
  }
  EXPECT_TRUE(result.ranked.front().reason.empty()) << result.ranked.front().reason;
  // Fault isolation honoured: embed never shares an MPS server.
  for (const PlanGpu& gpu : result.ranked.front().gpus) {
    if (gpu.family.find("mps") == std::string::npos) continue;
    for (const auto& block : gpu.blocks) {
      if (block.size() < 2) continue;
      for (int t : block) EXPECT_NE(scenario.tenants[static_cast<std::size_t>(t)].name, "embed");
    }
  }
  // Every family of the plan gets a row, and the space is counted.
  EXPECT_EQ(result.ranked.size(), 7u);
  EXPECT_GT(result.stats.setups, result.stats.setups_surviving);
  EXPECT_GT(result.stats.setups_surviving, 0);
}

TEST(Plan, NoSetupNamesTheTenantThatCannotMeetItsSlo) {
  std::string yaml = kNode;
  // 8 ms of work per request cannot finish in 5 ms anywhere.
  yaml.replace(yaml.find("slo: {p99: 60ms}"), 16, "slo: {p99: 5ms} ");
  const PlanResult result = plan_scenario(load_scenario_text(yaml, "node.yaml"));
  EXPECT_FALSE(result.found());
  EXPECT_NE(result.ranked.front().reason.find("big"), std::string::npos)
      << result.ranked.front().reason;
}

TEST(Plan, MemoryIsolationExcludesTimeSlicingAndUnpinnedMps) {
  std::string yaml = kNode;
  yaml.replace(yaml.find("isolation: fault"), 16, "isolation: memory");
  const PlanResult result = plan_scenario(load_scenario_text(yaml, "node.yaml"));
  ASSERT_TRUE(result.found());
  for (const PlanGpu& gpu : result.ranked.front().gpus) {
    for (const auto& block : gpu.blocks) {
      if (block.size() < 2) continue;
      for (int t : block) {
        if (t != 0) continue;  // embed
        EXPECT_TRUE(gpu.family.find("mps") != std::string::npos && gpu.replicas > 0) << gpu.family;
      }
    }
  }
}

// plan.shared_tenant_memory: `big` (60 GiB, 75 % of an H100) and `batch` (30 GiB, 37.5 %) hold
// more than a quarter of the GPU, so no feasible setup time-shares either with an SLO tenant;
// with the limit at 1 the same search may, and finds a cheaper setup.
TEST(Plan, LargeTenantsAreNotTimeSharedBesideSloTenants) {
  std::string yaml = kNode;
  yaml.replace(yaml.find("  max_gpus: 4\n"), 14,
               "  max_gpus: 4\n  strategies: [dedicated, time-slicing]\n");
  const Scenario scenario = load_scenario_text(yaml, "node.yaml");
  EXPECT_DOUBLE_EQ(scenario.plan->shared_tenant_memory, 0.25);  // the stated default
  const PlanResult ruled = plan_scenario(scenario);
  ASSERT_TRUE(ruled.found());
  const auto large = [&](int t) {
    const std::string& name = scenario.tenants[static_cast<std::size_t>(t)].name;
    return name == "big" || name == "batch";
  };
  const auto has_slo = [&](int t) {
    return !scenario.tenants[static_cast<std::size_t>(t)].best_effort;
  };
  for (const PlanSetup& setup : ruled.ranked) {
    if (!setup.feasible) continue;
    for (const PlanGpu& gpu : setup.gpus) {
      for (const auto& block : gpu.blocks) {
        bool with_large = false, with_slo_neighbour = false;
        for (int t : block) with_large |= large(t);
        for (int t : block) with_slo_neighbour |= !large(t) && has_slo(t);
        if (block.size() >= 2) {
          EXPECT_FALSE(with_large && with_slo_neighbour)
              << setup.label << ": " << gpu.describe(scenario.tenants);
        }
      }
    }
  }
  std::string allowed = yaml;
  allowed.replace(allowed.find("  max_gpus: 4\n"), 14,
                  "  max_gpus: 4\n  shared_tenant_memory: 1\n");
  const PlanResult free = plan_scenario(load_scenario_text(allowed, "node.yaml"));
  ASSERT_TRUE(free.found());
  EXPECT_LT(free.ranked.front().cost_per_hour, ruled.ranked.front().cost_per_hour);
  // Out of range: one line naming the key.
  std::string bad = yaml;
  bad.replace(bad.find("  max_gpus: 4\n"), 14, "  max_gpus: 4\n  shared_tenant_memory: 0\n");
  try {
    (void)load_scenario_text(bad, "node.yaml");
    ADD_FAILURE() << "shared_tenant_memory: 0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("plan.shared_tenant_memory"), std::string::npos)
        << e.what();
  }
}

TEST(Plan, InputErrorsNameTheKey) {
  const auto error_of = [](const std::string& yaml) -> std::string {
    try {
      plan_scenario(load_scenario_text(yaml, "p.yaml"));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  std::string yaml = kNode;
  std::string bad = yaml;
  bad.replace(bad.find("cost_per_hour: 4.0"), 18, "cost_per_hour: -1");
  EXPECT_NE(error_of(bad).find("plan.gpus.0.cost_per_hour"), std::string::npos) << error_of(bad);
  bad = yaml;
  bad.replace(bad.find("max_gpus: 4"), 11, "max_gpus: 0");
  EXPECT_NE(error_of(bad).find("plan.max_gpus"), std::string::npos) << error_of(bad);
  bad = yaml;
  bad.replace(bad.find("isolation: fault"), 16, "isolation: faults");
  EXPECT_NE(error_of(bad).find("did you mean 'fault'"), std::string::npos) << error_of(bad);
  bad = yaml;
  bad.replace(bad.find("model: h100-sxm-80gb"), 20, "model: h900");
  EXPECT_NE(error_of(bad).find("plan.gpus.0.model"), std::string::npos) << error_of(bad);
  bad = yaml;
  bad.replace(bad.find("  max_gpus: 4"), 0, "  platform: kubernetes\n");
  EXPECT_NE(error_of(bad).find("plan.platform"), std::string::npos) << error_of(bad);
  bad = yaml;
  bad.replace(bad.find("  max_gpus: 4"), 0, "  machines: [a3-highgpu-8g]\n");
  EXPECT_NE(error_of(bad).find("plan.machines: machine types need a node platform"),
            std::string::npos)
      << error_of(bad);
  bad = yaml;
  bad.replace(bad.find("  max_gpus: 4"), 0, "  platform: gke\n  machines: [a2-highgpu-1g]\n");
  EXPECT_NE(error_of(bad).find("no machine type of plan.machines has a GPU of plan.gpus"),
            std::string::npos)
      << error_of(bad);
  bad = yaml;
  bad.replace(bad.find("plan:"), 5, "plon:");
  EXPECT_NE(error_of(bad).find("did you mean 'plan'"), std::string::npos) << error_of(bad);
}

// A tenant of 5 requests a second has ~17 measured requests in the 4 s window: too few for any
// p99 verdict (no upper bound below 368 independent samples; more when dependent, as big's
// queueing latencies are). The planner simulates longer windows (doubling the measured one) up to
// plan.max_duration and never ranks a setup on an inconclusive verdict.
TEST(Plan, GrowsTheWindowUntilVerdictsAreConclusiveAndNeverRanksAnInconclusiveOne) {
  std::string yaml = kNode;
  yaml.replace(yaml.find("rate: 100/s"), 11, "rate: 5/s  ");
  // Bounded at 30 s (about 150 of rerank's requests): no setup is decided.
  std::string bounded = yaml;
  bounded.replace(bounded.find("max_gpus: 4"), 11, "max_gpus: 4\n  max_duration: 30s");
  const PlanResult stuck = plan_scenario(load_scenario_text(bounded, "node.yaml"));
  EXPECT_FALSE(stuck.found());
  for (const PlanSetup& setup : stuck.ranked) EXPECT_FALSE(setup.feasible) << setup.label;
  EXPECT_NE(stuck.ranked.front().reason.find(" p99 "), std::string::npos)
      << stuck.ranked.front().reason;
  EXPECT_NE(stuck.ranked.front().reason.find("inconclusive ("), std::string::npos);
  EXPECT_NE(stuck.ranked.front().reason.find(" samples, CI ["), std::string::npos);
  EXPECT_NE(stuck.ranked.front().reason.find("plan.max_duration"), std::string::npos);
  EXPECT_GT(stuck.stats.longer_windows, 0);
  // The answer says that a longer bound could decide them, with the count.
  EXPECT_GT(stuck.stats.inconclusive_at_bound, 0);
  EXPECT_NE(plan_table(stuck).find(fmt::format("note: {} unit(s) stayed inconclusive within "
                                               "plan.max_duration (30 s)",
                                               stuck.stats.inconclusive_at_bound)),
            std::string::npos)
      << plan_table(stuck);
  // With room to grow (the default bound, 16 x 4 s, is not enough either: ask for 10 min) the
  // verdict is decided and the winner runs over the window that decided it.
  std::string roomy = yaml;
  roomy.replace(roomy.find("max_gpus: 4"), 11, "max_gpus: 4\n  max_duration: 10m");
  const PlanResult found = plan_scenario(load_scenario_text(roomy, "node.yaml"));
  ASSERT_TRUE(found.found()) << found.ranked.front().reason;
  const PlanSetup& best = found.ranked.front();
  // The note appears exactly when some unit stayed undecided at the bound.
  EXPECT_EQ(found.stats.inconclusive_at_bound > 0,
            plan_table(found).find("stayed inconclusive") != std::string::npos);
  EXPECT_GT(best.scenario.duration, 4'000'000'000);
  EXPECT_LE(best.scenario.duration, 600'000'000'000);
  for (const PlanSetup& setup : found.ranked) {
    if (!setup.feasible) continue;
    for (const PlanTenantOutcome& o : setup.outcomes) {
      EXPECT_TRUE(o.met) << setup.label << " " << o.name << ": " << o.reason;
      EXPECT_FALSE(o.inconclusive) << setup.label << " " << o.name;
    }
  }
  for (const PlanTenantOutcome& o : best.outcomes) {
    if (o.name == "rerank") {
      EXPECT_GE(o.samples, 368);
      EXPECT_NE(o.worst.find(fmt::format("{} samples", o.samples)), std::string::npos) << o.worst;
    }
  }
  // The written scenario carries that window: `gpumux run best.yaml` reproduces the verdicts.
  const Scenario written = load_scenario_text(found.best_yaml, "best.yaml");
  EXPECT_EQ(written.duration, best.scenario.duration);
}

/// The random instance as a plan on a node platform: machine types instead of single GPUs.
std::string on_nodes(std::string yaml, const std::string& platform, const std::string& machines) {
  yaml.replace(yaml.find("  max_gpus:"), 0,
               "  platform: " + platform + "\n  machines: [" + machines + "]\n");
  return yaml;
}

TEST(Plan, NodePlatformsMatchBruteForceOnRandomSmallInstances) {
  // GKE and the device plugin: nodes of machine types, one configuration per node, the pods
  // balanced over the node's devices. Brute force simulates every balanced split of every group
  // on every machine type as a whole node.
  std::mt19937 rng(20261202);
  int feasible = 0;
  for (int instance = 0; instance < 8; ++instance) {
    const std::string platform = instance % 2 ? "device-plugin" : "gke";
    const std::string yaml = on_nodes(random_instance(rng, 3, 4), platform,
                                      "a3-highgpu-1g, a3-highgpu-2g, a2-highgpu-1g");
    const Scenario scenario = load_scenario_text(yaml, "random.yaml");
    PlanOptions fast;
    fast.jobs = 2;
    fast.refine = false;
    const PlanResult planned = plan_scenario(scenario, fast);
    PlanOptions brute;
    brute.exhaustive = true;
    const PlanResult exhaustive = plan_scenario(scenario, brute);
    std::printf(
        "node instance %d (%s): planner %lld simulations, brute force %lld, cost %g vs %g\n",
        instance, platform.c_str(), static_cast<long long>(planned.stats.simulations),
        static_cast<long long>(exhaustive.stats.simulations),
        planned.found() ? planned.ranked.front().cost_per_hour : -1.0,
        exhaustive.found() ? exhaustive.ranked.front().cost_per_hour : -1.0);
    SCOPED_TRACE(yaml);
    ASSERT_EQ(planned.found(), exhaustive.found());
    if (!planned.found()) continue;
    ++feasible;
    EXPECT_NEAR(planned.ranked.front().cost_per_hour, exhaustive.ranked.front().cost_per_hour,
                1e-9);
    const PlanSetup& best = planned.ranked.front();
    // The price is the nodes': host + GPUs x the GPU model's price; the whole-setup run agrees.
    double nodes = 0;
    for (const PlanNode& node : best.nodes) {
      nodes += node.cost_per_hour;
      EXPECT_NE(node.family, "mig+mps");
    }
    EXPECT_NEAR(nodes, best.cost_per_hour, 1e-9);
    EXPECT_TRUE(best.reason.empty()) << best.reason;
    for (const PlanTenantOutcome& o : best.outcomes)
      EXPECT_TRUE(o.met) << o.name << ": " << o.reason;
  }
  EXPECT_GE(feasible, 3);
}

TEST(Plan, ManyTenantSearchIsBoundedAndItsOptimalClaimHolds) {
  // The scalable search (run above 10 tenants; forced here on small instances): its lower bound
  // never exceeds the true optimum (brute force), its answer never undercuts it, and when it
  // calls its answer optimal (answer = bound) the answer is the optimum. It is a heuristic (no
  // optimality claim beyond the bound's), so how often it finds the optimum is printed, and
  // guarded: at least half of the answers (the refinement's mixed setups made it 5 of 6 here;
  // one-family packings found 4).
  std::mt19937 rng(20261203);
  int compared = 0, proven = 0, optimal = 0;
  for (int instance = 0; instance < 8; ++instance) {
    std::string yaml = random_instance(rng, 4, 4);
    if (instance % 2) yaml = on_nodes(yaml, "gke", "a3-highgpu-1g, a3-highgpu-2g, a2-highgpu-1g");
    // Both searches may grow a window as far (the packing search's default bound is shorter:
    // 4 x the window against 16 x; a unit undecided there is not ranked, which costs answers).
    yaml.replace(yaml.find("  max_gpus:"), 0, "  max_duration: 32s\n");
    const Scenario scenario = load_scenario_text(yaml, "random.yaml");
    PlanOptions brute;
    brute.exhaustive = true;
    const PlanResult exact = plan_scenario(scenario, brute);
    PlanOptions large;
    large.jobs = 2;
    large.exact_tenants = 0;
    const PlanResult packed = plan_scenario(scenario, large);
    SCOPED_TRACE(yaml);
    // The alone checks answer an infeasible plan before either search.
    EXPECT_TRUE(packed.large || !packed.infeasible_alone.empty());
    if (!exact.found()) {
      EXPECT_FALSE(packed.found());
      continue;
    }
    ++compared;
    const double optimum = exact.ranked.front().cost_per_hour;
    EXPECT_LE(packed.lower_bound, optimum + 1e-9);
    if (!packed.found()) continue;
    const double answer = packed.ranked.front().cost_per_hour;
    EXPECT_GE(answer, optimum - 1e-9);
    if (answer <= optimum + 1e-9) ++optimal;
    if (answer <= packed.lower_bound + 1e-9) {
      ++proven;
      EXPECT_NEAR(answer, optimum, 1e-9);
    }
    for (const PlanTenantOutcome& o : packed.ranked.front().outcomes) {
      EXPECT_TRUE(o.met) << o.name << ": " << o.reason;
    }
  }
  EXPECT_GE(compared, 4);
  EXPECT_GE(2 * optimal, compared);
  std::printf(
      "many-tenant search: %d of %d answers are the optimum, %d of them proven by the bound\n",
      optimal, compared, proven);
}

TEST(Plan, PlatformsKeepToWhatTheyRun) {
  for (const std::string platform : {"gke", "device-plugin", "mig-parted"}) {
    std::string yaml = kNode;
    yaml.replace(yaml.find("  max_gpus: 4"), 0, "  platform: " + platform + "\n");
    PlanOptions options;
    options.jobs = 2;
    const PlanResult r = plan_scenario(load_scenario_text(yaml, "node.yaml"), options);
    ASSERT_TRUE(r.found()) << platform;
    EXPECT_EQ(r.platform, platform);
    bool mig_mps_row = false;
    for (const PlanSetup& setup : r.ranked) {
      mig_mps_row = mig_mps_row || setup.label == "mig+mps";
      // Every setup is whole nodes of catalog machine types.
      EXPECT_TRUE(!setup.feasible || !setup.nodes.empty()) << setup.label;
      for (const PlanNode& node : setup.nodes) {
        EXPECT_FALSE(node.machine.empty());
        if (platform != "mig-parted") {
          EXPECT_NE(node.family, "mig+mps");
        }
      }
    }
    // MPS inside MIG only where the platform runs it.
    EXPECT_EQ(mig_mps_row, platform == "mig-parted") << platform;
    if (platform != "mig-parted") {
      ASSERT_FALSE(r.notes.empty());
      EXPECT_NE(r.notes.front().find("mig+mps left out"), std::string::npos);
    }
  }
}

TEST(Plan, RankingOrderIsCostThenMarginThenIsolation) {
  PlanOptions options;
  options.jobs = 2;
  const PlanResult r = plan_scenario(load_scenario_text(kNode, "node.yaml"), options);
  ASSERT_TRUE(r.found());
  EXPECT_EQ(r.ranked.front().label, "best");
  EXPECT_NE(plan_table(r).find("ranked by cost, then SLO margin"), std::string::npos);
  for (std::size_t i = 1; i < r.ranked.size(); ++i) {
    const PlanSetup& a = r.ranked[i - 1];
    const PlanSetup& b = r.ranked[i];
    if (!b.feasible) continue;
    ASSERT_TRUE(a.feasible);
    if (std::abs(a.cost_per_hour - b.cost_per_hour) > 1e-9) {
      EXPECT_LT(a.cost_per_hour, b.cost_per_hour);
    } else if (std::abs(a.worst_ratio - b.worst_ratio) > 1e-12) {
      // Ranked on the per-GPU runs' ratio; the winner's whole-setup run is shown beside it.
      EXPECT_LT(a.worst_ratio, b.worst_ratio) << a.label << " before " << b.label;
    } else {
      EXPECT_GE(a.memory_isolated + a.fault_isolated, b.memory_isolated + b.fault_isolated);
    }
  }
}

TEST(Plan, InfeasibleAnswersFromTheAloneChecks) {
  std::string yaml = kNode;
  yaml.replace(yaml.find("slo: {p99: 60ms}"), 16, "slo: {p99: 9ms} ");
  const PlanResult result = plan_scenario(load_scenario_text(yaml, "node.yaml"));
  EXPECT_FALSE(result.found());
  ASSERT_EQ(result.infeasible_alone, std::vector<std::string>{"big"});
  // One simulation per tenant and GPU model, no search; a verdict an alone check could not
  // decide runs again over a longer window (counted apart).
  EXPECT_EQ(result.stats.simulations - result.stats.longer_windows, 4);
  EXPECT_LE(result.stats.longer_windows, 4);
  EXPECT_EQ(result.tenant_names.size(), 4u);
  const std::string table = plan_table(result);
  EXPECT_NE(table.find("4 tenant(s)"), std::string::npos) << table;
  EXPECT_NE(table.find("big"), std::string::npos) << table;
}

TEST(Plan, SloCheckUsesHeadroomAndFailures) {
  PlanSloInput in;
  in.name = "embed";
  // p99 9.5 ms, 95 % CI [9.3 ms, 9.7 ms] from 5000 samples.
  in.targets = {{"p99", "p99", 10'000'000.0, 9'500'000.0, 9'300'000.0, 9'700'000.0, 5000}};
  EXPECT_TRUE(check_plan_slo(in).met);
  EXPECT_EQ(check_plan_slo(in).worst_samples, 5000);
  EXPECT_NE(check_plan_slo(in).worst.find("5000 samples"), std::string::npos);
  in.headroom = 0.1;
  const PlanSloVerdict tight = check_plan_slo(in);
  EXPECT_FALSE(tight.met);
  EXPECT_FALSE(tight.inconclusive);
  EXPECT_NE(tight.reason.find("embed p99 9.5 ms > 10 ms"), std::string::npos) << tight.reason;
  EXPECT_NEAR(tight.worst_ratio, 0.95, 1e-12);
  // The interval straddles the allowance (9 ms): inconclusive, neither met nor missed.
  in.targets[0].low_ns = 8'800'000.0;
  const PlanSloVerdict straddles = check_plan_slo(in);
  EXPECT_FALSE(straddles.met);
  EXPECT_TRUE(straddles.inconclusive);
  EXPECT_NE(straddles.reason.find("inconclusive"), std::string::npos) << straddles.reason;
  // No upper bound (6 samples: the p99 is their maximum): inconclusive however low.
  in.headroom = 0;
  in.targets = {{"p99", "p99", 10'000'000.0, 6'800'000.0, 3'000'000.0, std::nullopt, 6}};
  EXPECT_TRUE(check_plan_slo(in).inconclusive);
  in.targets[0].low_ns = 3'000'000.0;
  in.headroom = 0;
  in.oom_events = 1;
  EXPECT_FALSE(check_plan_slo(in).met);
  in.oom_events = 0;
  in.targets = {{"ttft_p99", "TTFT p99", 1e9, std::nullopt, std::nullopt, std::nullopt,
                 0}};  // no samples: missed
  EXPECT_FALSE(check_plan_slo(in).met);
  in.best_effort = true;
  EXPECT_TRUE(check_plan_slo(in).met);
}

}  // namespace
}  // namespace gpumux
