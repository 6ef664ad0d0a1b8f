// Output of gpumux plan: PlanGpu::describe, the ranked table with the search statistics
// (plan_table) and everything as one JSON object (plan_json). The winning setup's scenario file
// (best_yaml) is emitted by Planner::run().
#include "models/plan/planner.hpp"

#include <fmt/format.h>

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

std::string plan_table(const PlanResult& r) {
  std::string out;
  const Scenario* s = r.ranked.empty() ? nullptr : &r.ranked.front().scenario;
  std::vector<TenantSpec> tenants;
  for (const PlanSetup& setup : r.ranked) {
    if (!setup.scenario.tenants.empty()) {
      tenants = setup.scenario.tenants;
      break;
    }
  }
  (void)s;
  out += fmt::format("plan: {}  {} tenant(s), up to {} GPU(s), headroom {:.0f} %\n",
                     r.scenario_name, tenants.size(), r.max_gpus, r.headroom * 100);
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
    std::string config;
    for (std::size_t g = 0; g < setup.gpus.size(); ++g) {
      if (g) config += "; ";
      config += fmt::format("gpu{} {}", g, setup.gpus[g].describe(setup.scenario.tenants));
    }
    out +=
        fmt::format("{:<4} {:<17} {:>8.2f} {:<3} {:>4} {:>9.2f} {:>9} {:>9}  {}\n", ++rank,
                    setup.label, setup.cost_per_hour, r.currency, setup.gpus.size(),
                    setup.worst_ratio, fmt::format("{}/{}", setup.memory_isolated, setup.tenants),
                    fmt::format("{}/{}", setup.fault_isolated, setup.tenants), config);
    if (!setup.reason.empty())
      out += fmt::format("{:<4} {:<17} cheaper failed: {}\n", "", "", setup.reason);
  }
  if (r.found()) {
    const PlanSetup& best = r.ranked.front();
    // The samples behind the worst ratio, and the window the verdicts needed.
    const PlanTenantOutcome* worst = nullptr;
    for (const PlanTenantOutcome& o : best.outcomes) {
      if (worst == nullptr || o.worst_ratio > worst->worst_ratio) worst = &o;
    }
    out += fmt::format(
        "\nbest: {:.2f} {}/h on {} GPU(s); headroom {:.0f} % (worst SLO ratio "
        "{:.2f}{}); simulated {:.4g} s\n",
        best.cost_per_hour, r.currency, best.gpus.size(), (1.0 - best.worst_ratio) * 100,
        best.worst_ratio,
        worst != nullptr && worst->worst_ratio > 0
            ? fmt::format(", {} on {} samples", worst->name, worst->samples)
            : std::string(),
        to_seconds(best.scenario.duration));
    out += fmt::format("  {:<20} {:<10} {:>9}  {}\n", "tenant", "device", "SLO ratio",
                       "closest target");
    for (const PlanTenantOutcome& o : best.outcomes) {
      out +=
          fmt::format("  {:<20} {:<10} {:>9}  {}\n", o.name, o.device,
                      o.worst_ratio > 0 ? fmt::format("{:.2f}", o.worst_ratio) : "-",
                      o.met ? (o.worst.empty() ? std::string("best effort") : o.worst) : o.reason);
    }
  }
  const PlanStats& st = r.stats;
  out += fmt::format(
      "\nsearch: {:.4g} setups in the space, {:.4g} left after the bounds ({:.2f} % pruned); "
      "{} units ({} pruned), {} simulations ({} over a longer window for an inconclusive "
      "verdict) on {} worker(s), {} DP rounds, {:.2f} s\n",
      st.setups, st.setups_surviving,
      st.setups > 0 ? 100.0 * (1.0 - st.setups_surviving / st.setups) : 0.0, st.units,
      st.units_pruned, st.simulations, st.longer_windows, st.jobs, st.dp_rounds, st.wall_s);
  return out;
}

nlohmann::ordered_json plan_json(const PlanResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario_name;
  j["currency"] = r.currency;
  j["headroom"] = r.headroom;
  j["max_gpus"] = r.max_gpus;
  j["strategies"] = r.strategies;
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
      e["duration_s"] = to_seconds(s.scenario.duration);
      e["memory_isolated"] = s.memory_isolated;
      e["fault_isolated"] = s.fault_isolated;
      nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
      for (std::size_t g = 0; g < s.gpus.size(); ++g) {
        const PlanGpu& gpu = s.gpus[g];
        nlohmann::ordered_json jg;
        jg["name"] = "gpu" + std::to_string(g);
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
      nlohmann::ordered_json tenants = nlohmann::ordered_json::array();
      for (const PlanTenantOutcome& o : s.outcomes) {
        tenants.push_back({{"tenant", o.name},
                           {"device", o.device},
                           {"met", o.met},
                           {"worst_slo_ratio", o.worst_ratio},
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
  j["search"] = {{"setups", st.setups},
                 {"setups_after_bounds", st.setups_surviving},
                 {"pruned_fraction", st.setups > 0 ? 1.0 - st.setups_surviving / st.setups : 0.0},
                 {"units", st.units},
                 {"units_pruned", st.units_pruned},
                 {"simulations", st.simulations},
                 {"longer_windows", st.longer_windows},
                 {"dp_rounds", st.dp_rounds},
                 {"jobs", st.jobs},
                 {"wall_s", st.wall_s}};
  if (r.found()) j["best_yaml"] = r.best_yaml;
  return j;
}

}  // namespace gpumux
