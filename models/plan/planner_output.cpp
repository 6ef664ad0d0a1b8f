// Output of gpumux plan: PlanGpu::describe, the ranked table with the search statistics
// (plan_table) and everything as one JSON object (plan_json). The winning setup's scenario file
// (best_yaml) is emitted by Planner::run().
#include "models/plan/planner.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpumux {

std::string PlanGpu::describe(const std::vector<TenantSpec>& tenants) const {
  std::string out = model + " " + family;
  if (replicas > 0 && family.find("mps") != std::string::npos)
    out += fmt::format(" (replicas {})", replicas);
  out += " ";
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (b) out += '+';
    if (!mig.empty()) out += mig[b];
    out += '{';
    for (std::size_t i = 0; i < blocks[b].size(); ++i) {
      if (i) out += ',';
      out += tenants[static_cast<std::size_t>(blocks[b][i])].name;
    }
    out += '}';
  }
  return out;
}

namespace {

/// The configuration column of a setup: per GPU, or per node on a node platform.
std::string describe_setup(const PlanSetup& setup) {
  std::string config;
  if (setup.nodes.empty()) {
    for (std::size_t g = 0; g < setup.gpus.size(); ++g) {
      if (g) config += "; ";
      config += fmt::format("gpu{} {}", g, setup.gpus[g].describe(setup.scenario.tenants));
    }
    return config;
  }
  for (std::size_t n = 0; n < setup.nodes.size(); ++n) {
    const PlanNode& node = setup.nodes[n];
    if (n) config += "; ";
    config += fmt::format("{} {} {}{}{}:", node.name, node.machine, node.family,
                          node.partition.empty() ? "" : " " + node.partition,
                          node.clients > 0 ? fmt::format(" x{}", node.clients) : "");
    for (std::size_t k = 0; k < node.gpus.size(); ++k) {
      const PlanGpu& gpu = setup.gpus[static_cast<std::size_t>(node.gpus[k])];
      std::string devices;
      for (std::size_t b = 0; b < gpu.blocks.size(); ++b) {
        devices += '{';
        for (std::size_t i = 0; i < gpu.blocks[b].size(); ++i) {
          if (i) devices += ',';
          devices += setup.scenario.tenants[static_cast<std::size_t>(gpu.blocks[b][i])].name;
        }
        devices += '}';
      }
      config += fmt::format(" gpu{}{}", k, devices);
    }
  }
  return config;
}

}  // namespace

std::string plan_table(const PlanResult& r) {
  std::string out;
  out +=
      fmt::format("plan: {}  {} tenant(s), platform {}, up to {} GPU(s), headroom {:.0f} %\n",
                  r.scenario_name, r.tenant_names.size(), r.platform, r.max_gpus, r.headroom * 100);
  out += fmt::format("ranked by {}\n", r.ranking);
  if (!r.prices.empty()) {
    out += fmt::format("host prices: {}; --prices FILE replaces them\n", r.prices);
  }
  for (const std::string& note : r.notes) out += "note: " + note + "\n";
  out += fmt::format("{:<4} {:<17} {:>12} {:>4} {:>9} {:>9} {:>9}  {}\n", "rank", "setup", "cost/h",
                     "GPUs", "worst SLO", "mem iso", "fault iso", "configuration");
  int rank = 0;
  for (const PlanSetup& setup : r.ranked) {
    if (!setup.feasible) {
      out += fmt::format("{:<4} {:<17} {:>12} {:>4} {:>9} {:>9} {:>9}  {}\n", "-", setup.label, "-",
                         "-", "-", "-", "-",
                         setup.reason.empty() ? std::string("no feasible setup") : setup.reason);
      continue;
    }
    const std::string config = describe_setup(setup);
    out +=
        fmt::format("{:<4} {:<17} {:>8.2f} {:<3} {:>4} {:>9.2f} {:>9} {:>9}  {}\n", ++rank,
                    setup.label, setup.cost_per_hour, r.currency, setup.gpus.size(),
                    setup.worst_ratio, fmt::format("{}/{}", setup.memory_isolated, setup.tenants),
                    fmt::format("{}/{}", setup.fault_isolated, setup.tenants), config);
    if (!setup.reason.empty()) {
      // The winner's own note (its whole-setup run, Planner::run) reads as it is; a family
      // row's reason is why its cheaper setups failed.
      const bool own_note = setup.reason.rfind("verification run", 0) == 0;
      out += fmt::format("{:<4} {:<17} {}{}\n", "", "",
                         own_note ? "" : "cheaper failed: ", setup.reason);
    }
  }
  if (r.found()) {
    const PlanSetup& best = r.ranked.front();
    // The samples behind the worst ratio, and the window the verdicts needed.
    const PlanTenantOutcome* worst = nullptr;
    for (const PlanTenantOutcome& o : best.outcomes) {
      if (worst == nullptr || o.worst_ratio > worst->worst_ratio) worst = &o;
    }
    // The tenant table below is the verification run's when there is one: its worst ratio is
    // the one quoted (the ranked per-GPU value beside it when they differ).
    const double shown = best.verified_worst_ratio.value_or(best.worst_ratio);
    // Headroom from the intervals: what the worst upper bound leaves (the point estimate would
    // claim more than the samples show).
    double bound = 0;
    for (const PlanTenantOutcome& o : best.outcomes) bound = std::max(bound, o.worst_bound_ratio);
    out += fmt::format(
        "\nbest: {:.2f} {}/h on {} GPU(s); headroom {:.0f} % at the confidence intervals' upper "
        "bounds (worst SLO ratio {:.2f}{}{}); simulated {:.4g} s\n",
        best.cost_per_hour, r.currency, best.gpus.size(), (1.0 - bound) * 100, shown,
        worst != nullptr && worst->worst_ratio > 0
            ? fmt::format(", {} on {} samples", worst->name, worst->samples)
            : std::string(),
        best.verified_worst_ratio && std::abs(*best.verified_worst_ratio - best.worst_ratio) > 5e-3
            ? fmt::format("; {:.2f} in the per-GPU runs ranked", best.worst_ratio)
            : std::string(),
        to_seconds(best.scenario.duration));
    // The device column is as wide as its longest name (a node's MIG instance, node1-gpu0/0,
    // is wider than the 10 columns a bare GPU's name needs).
    std::size_t device_width = 10;
    for (const PlanTenantOutcome& o : best.outcomes) {
      device_width = std::max(device_width, o.device.size());
    }
    out += fmt::format("  {:<20} {:<{}} {:>9}  {}\n", "tenant", "device", device_width, "SLO ratio",
                       "closest target");
    for (const PlanTenantOutcome& o : best.outcomes) {
      out +=
          fmt::format("  {:<20} {:<{}} {:>9}  {}\n", o.name, o.device, device_width,
                      o.worst_ratio > 0 ? fmt::format("{:.2f}", o.worst_ratio) : "-",
                      o.met ? (o.worst.empty() ? std::string("best effort") : o.worst) : o.reason);
    }
  }
  const PlanStats& st = r.stats;
  if (!r.infeasible_alone.empty()) {
    out += fmt::format(
        "\nsearch: none: {} not shown to meet every SLO even alone ({} simulations on {} "
        "worker(s), {:.2f} s)\n",
        fmt::join(r.infeasible_alone, ", "), st.simulations, st.jobs, st.wall_s);
    return out;
  }
  if (r.large) {
    const double best = r.found() ? r.ranked.front().cost_per_hour : 0;
    out += fmt::format(
        "\nsearch: {} tenants, more than the exact search's {}: first-fit decreasing per family "
        "and partition size, the best's bins re-packed; lower bound {:.2f} {}/h{}; {} units ({} "
        "pruned), {} simulations on "
        "{} worker(s), {:.2f} s\n",
        r.tenant_names.size(), kPlanExactTenants, r.lower_bound, r.currency,
        r.found()
            ? (best <= r.lower_bound + 1e-9 ? std::string(": the answer is optimal")
                                            : fmt::format(": the answer is {:.1f} % above it",
                                                          100.0 * (best / r.lower_bound - 1.0)))
            : std::string(),
        st.units, st.units_pruned, st.simulations, st.jobs, st.wall_s);
    return out;
  }
  out += fmt::format(
      "\nsearch: {:.4g} setups in the space, {:.4g} left after the bounds ({:.2f} % pruned); "
      "{} units ({} pruned), {} simulations ({} over a longer window for an inconclusive "
      "verdict) on {} worker(s), {} DP rounds, {:.2f} s; the answer is optimal {}\n",
      st.setups, st.setups_surviving,
      st.setups > 0 ? 100.0 * (1.0 - st.setups_surviving / st.setups) : 0.0, st.units,
      st.units_pruned, st.simulations, st.longer_windows, st.jobs, st.dp_rounds, st.wall_s,
      // Units left undecided (the header's note) are neither ranked nor ruled out.
      st.inconclusive_at_bound > 0 ? "among the units decided within plan.max_duration"
                                   : "(proven)");
  return out;
}

nlohmann::ordered_json plan_json(const PlanResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario_name;
  j["currency"] = r.currency;
  j["headroom"] = r.headroom;
  j["max_gpus"] = r.max_gpus;
  j["strategies"] = r.strategies;
  j["platform"] = r.platform;
  if (!r.prices.empty()) j["prices"] = r.prices;
  j["ranking"] = r.ranking;
  j["tenants"] = r.tenant_names;
  j["notes"] = r.notes;
  j["infeasible_alone"] = r.infeasible_alone;
  j["found"] = r.found();
  nlohmann::ordered_json ranked = nlohmann::ordered_json::array();
  for (const PlanSetup& s : r.ranked) {
    nlohmann::ordered_json e;
    e["setup"] = s.label;
    e["feasible"] = s.feasible;
    if (s.feasible) {
      e["cost_per_hour"] = s.cost_per_hour;
      e["gpus"] = s.gpus.size();
      e["worst_slo_ratio"] = s.worst_ratio;
      if (s.verified_worst_ratio) e["verified_worst_slo_ratio"] = *s.verified_worst_ratio;
      e["duration_s"] = to_seconds(s.scenario.duration);
      e["memory_isolated"] = s.memory_isolated;
      e["fault_isolated"] = s.fault_isolated;
      nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
      for (std::size_t g = 0; g < s.gpus.size(); ++g) {
        const PlanGpu& gpu = s.gpus[g];
        nlohmann::ordered_json jg;
        jg["name"] = gpu.name.empty() ? "gpu" + std::to_string(g) : gpu.name;
        jg["model"] = gpu.model;
        jg["family"] = gpu.family;
        jg["cost_per_hour"] = gpu.cost_per_hour;
        jg["replicas"] = gpu.replicas;
        jg["mig"] = gpu.mig;
        nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
        for (const auto& b : gpu.blocks) {
          nlohmann::ordered_json names = nlohmann::ordered_json::array();
          for (int t : b) names.push_back(s.scenario.tenants[static_cast<std::size_t>(t)].name);
          blocks.push_back(names);
        }
        jg["tenants"] = blocks;
        jg["describe"] = gpu.describe(s.scenario.tenants);
        gpus.push_back(jg);
      }
      e["configuration"] = gpus;
      nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
      for (const PlanNode& node : s.nodes) {
        nlohmann::ordered_json pods = nlohmann::ordered_json::array();
        for (int t : node.pod_order)
          pods.push_back(s.scenario.tenants[static_cast<std::size_t>(t)].name);
        nodes.push_back({{"name", node.name},
                         {"machine", node.machine},
                         {"model", node.model},
                         {"cost_per_hour", node.cost_per_hour},
                         {"family", node.family},
                         {"partition", node.partition},
                         {"instances", node.instances},
                         {"clients", node.clients},
                         {"gpus", node.gpus.size()},
                         {"pod_order", pods}});
      }
      if (!s.nodes.empty()) e["nodes"] = nodes;
      nlohmann::ordered_json tenants = nlohmann::ordered_json::array();
      for (const PlanTenantOutcome& o : s.outcomes) {
        tenants.push_back({{"tenant", o.name},
                           {"device", o.device},
                           {"met", o.met},
                           {"worst_slo_ratio", o.worst_ratio},
                           {"worst_slo_bound_ratio", o.worst_bound_ratio},
                           {"closest", o.worst},
                           {"samples", o.samples},
                           {"inconclusive", o.inconclusive},
                           {"reason", o.reason}});
      }
      e["tenants"] = tenants;
    }
    e["reason"] = s.reason;
    ranked.push_back(e);
  }
  j["ranked"] = ranked;
  const PlanStats& st = r.stats;
  j["search"] = {{"exact", !r.large},
                 {"lower_bound_per_hour", r.lower_bound},
                 {"setups", st.setups},
                 {"setups_after_bounds", st.setups_surviving},
                 {"pruned_fraction", st.setups > 0 ? 1.0 - st.setups_surviving / st.setups : 0.0},
                 {"units", st.units},
                 {"units_pruned", st.units_pruned},
                 {"simulations", st.simulations},
                 {"longer_windows", st.longer_windows},
                 {"inconclusive_at_bound", st.inconclusive_at_bound},
                 {"projected_at_bound", st.projected_at_bound},
                 {"batches", st.batches},
                 {"dp_rounds", st.dp_rounds},
                 {"jobs", st.jobs},
                 {"wall_s", st.wall_s}};
  if (r.found()) j["best_yaml"] = r.best_yaml;
  return j;
}

}  // namespace gpumux
