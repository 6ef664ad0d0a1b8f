// Many tenants in gpumux plan (more than kMaxExactTenants; docs/plan.md, "Many tenants"): the
// subset DP (3^n) is out of reach, so the search builds setups and bounds them.
//
//  * Packing. For every option (GPU model on bare, machine type on a node platform) and every
//    family with one device kind (dedicated; time-slicing; mps; mig and mig+time-slicing with
//    each MIG partition size), the tenants are packed first-fit decreasing (by their largest share
//    of a device: memory, SM time, HBM time) into bins (a GPU, or a node) of that one
//    configuration: a tenant goes to the first bin with a device that takes it, trying the
//    least-filled devices first (on a node that is the device plugin's balance, planner_nodes.cpp),
//    and a placement holds when its unit (the device's tenants with the newcomer) passes the bounds
//    and its simulation; a tenant no bin takes opens a bin. A packing stops as soon as it costs
//    more than the best so far; a family stops at its first packing that reaches the lower bound
//    (partition sizes largest first). Placements are decided `jobs` at a time: the next placements
//    are predicted as if their units passed, simulated as one batch, and kept up to the first that
//    failed (the sequential first-fit's result). MPS is packed with fixed replicas, so a unit
//    does not change as its bin fills (packing_variants: no limits on bare GPUs; on nodes the
//    fewest replicas that hold the tenants in b nodes, for each b); mig+mps is not packed.
//  * Each family's cheapest packing is its row. The answer starts as the first row by
//    kRankingRule (cost, then SLO margin, then isolation) and is refined bin by bin: a bin's
//    tenants are packed again on their own, on every cheaper option and every family (within the
//    GPUs the other bins leave), and the cheapest such re-packing replaces the bin. Bins share no
//    device, so the other bins' units stand. The answer may then mix machine types, GPU models
//    and families (e.g. the last node's few tenants on a smaller or cheaper machine).
//  * Lower bound. Each tenant holds at least its static memory, its SM time per second and its
//    HBM time per second of whatever GPU it is on (bounds.hpp), so for each of the three a setup
//    costs at least the sum over tenants of the cheapest price per GPU times that share of the
//    GPU; the largest of the three sums (and the cheapest option) is the bound. When the answer
//    equals it, the answer is proven optimal; else the table states the gap.
// Cost: per packing O(n x bins) unit look-ups, each simulated at most once (the unit cache), in
// batches of up to `jobs` candidate devices; F x O x V packings of all n tenants (families,
// options, variants: MIG sizes, MPS replicas), then the same per bin of the answer on its own
// tenants.
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include <fmt/format.h>

#include "models/gpu/device_profile.hpp"

namespace gpumux {
namespace planner_detail {

double Planner::lower_bound_cost() const {
  double memory = 0, sm = 0, hbm = 0, cheapest = kInf;
  for (int o = 0; o < options(); ++o) cheapest = std::min(cheapest, option_price(o));
  for (int t = 0; t < n_; ++t) {
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    const TenantDemand& demand = demands_[static_cast<std::size_t>(t)];
    const bool load = !spec.best_effort && demand.open_loop;
    double m = kInf, s = kInf, h = kInf;
    for (int o = 0; o < options(); ++o) {
      const double per_gpu = option_price(o) / option_gpus(o);
      const DeviceCapacity cap =
          capacity(UnitKey{Mask{1} << t, option_model(o), -1, &exclusive_strategy(), 0});
      m = std::min(m, per_gpu * static_cast<double>(spec.memory) / static_cast<double>(cap.memory));
      s = std::min(s, load ? per_gpu * sm_load_per_s(demand, cap) / cap.sms : 0.0);
      h = std::min(h, load ? per_gpu * hbm_load_per_s(demand, cap) / cap.bandwidth : 0.0);
    }
    memory += m;
    sm += s;
    hbm += h;
  }
  return std::max({memory, sm, hbm, cheapest});
}

bool Planner::pack(int option, const Variant& v, Mask tenants, int max_gpus, double stop_at,
                   std::vector<Config>& bins) {
  bins.clear();
  const int count = popcount(tenants);
  const int model = option_model(option);
  const int gpus = option_gpus(option);
  const int per_gpu = v.profile < 0 ? 1 : instances_per_gpu(model, v.profile);
  if (per_gpu == 0) return false;
  const int devices = gpus * per_gpu;
  const bool exclusive = &strategy_of(v) == &exclusive_strategy();
  // Clients per device: GKE's cap; under MPS with replicas R at most R (each pinned to 1/R).
  int max_clients = platform_ == Platform::gke ? kGkeMaxSharedClients : 1 << 20;
  if (&strategy_of(v) == &mps_strategy() && v.replicas > 0)
    max_clients = std::min(max_clients, v.replicas);
  const int max_bins = max_gpus / gpus;
  if (exclusive && count > max_bins * devices) return false;
  // First-fit decreasing: the largest share of one device first.
  const DeviceCapacity cap = capacity(UnitKey{1, model, v.profile, &strategy_of(v), 0});
  std::vector<double> share(static_cast<std::size_t>(n_), 0.0);
  std::vector<int> order;
  for (int t = 0; t < n_; ++t) {
    if (!(tenants >> t & 1u)) continue;
    order.push_back(t);
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    const TenantDemand& d = demands_[static_cast<std::size_t>(t)];
    double x = static_cast<double>(spec.memory) / static_cast<double>(cap.memory);
    if (!spec.best_effort && d.open_loop) {
      x = std::max({x, sm_load_per_s(d, cap) / cap.sms, hbm_load_per_s(d, cap) / cap.bandwidth});
    } else if (!d.open_loop) {
      x = std::max(x, 1.0);  // closed loop or batched: it keeps a device busy
    }
    share[static_cast<std::size_t>(t)] = x;
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return share[static_cast<std::size_t>(a)] > share[static_cast<std::size_t>(b)];
  });
  std::vector<std::vector<Mask>> open;  // per bin, per device: its tenants
  const auto key_of = [&](Mask block) { return unit_key(block, model, v.profile, v); };
  // Where tenant t goes given the bins (first-fit: the first bin with a device that may take it,
  // its least filled devices in index order; a unit known to fail is skipped, an unknown one
  // is taken as it may pass). {bin, device}; bin == bins.size(): a new bin; {-1, -1}: nowhere.
  const auto place = [&](const std::vector<std::vector<Mask>>& bins_now,
                         int t) -> std::pair<int, int> {
    const Mask bit = Mask{1} << t;
    for (std::size_t b = 0; b < bins_now.size(); ++b) {
      const auto& bin = bins_now[b];
      int fill = 1 << 30;
      for (const Mask d : bin) fill = std::min(fill, popcount(d));
      if (exclusive && fill > 0) continue;
      if (!exclusive && fill + 1 > max_clients) continue;
      for (int d = 0; d < devices; ++d) {
        if (popcount(bin[static_cast<std::size_t>(d)]) != fill) continue;
        const Verdict verdict = unit(key_of(bin[static_cast<std::size_t>(d)] | bit)).verdict;
        if (verdict == Verdict::feasible || verdict == Verdict::unknown) {
          return {static_cast<int>(b), d};
        }
        if (fill == 0) break;  // empty devices are alike
      }
    }
    const Verdict alone = unit(key_of(bit)).verdict;
    if (alone == Verdict::pruned || alone == Verdict::infeasible) return {-1, -1};
    return {static_cast<int>(bins_now.size()), 0};
  };
  // Speculative rounds: the next `width` placements are predicted as if every unknown unit
  // passed, their units simulated as one batch (threads or Dask), and the placements kept up to
  // the first whose unit failed; the next round predicts again from there. The result is the
  // sequential first-fit's, with `width` simulations at a time.
  const int width = options_.batch_runner ? std::max(jobs_, 16) : jobs_;
  std::size_t pos = 0;
  while (pos < order.size()) {
    std::vector<std::vector<Mask>> predicted = open;
    std::vector<std::pair<int, int>> where;
    std::vector<UnitKey> batch;
    for (std::size_t i = pos; i < order.size() && static_cast<int>(batch.size()) < width; ++i) {
      const int t = order[i];
      const auto [b, d] = place(predicted, t);
      if (b < 0) break;
      if (b == static_cast<int>(predicted.size())) {
        predicted.emplace_back(static_cast<std::size_t>(devices), Mask{0});
      }
      Mask& device = predicted[static_cast<std::size_t>(b)][static_cast<std::size_t>(d)];
      device |= Mask{1} << t;
      const UnitKey key = key_of(device);
      if (unit(key).verdict == Verdict::unknown) batch.push_back(key);
      where.emplace_back(b, d);
    }
    simulate_units(batch);
    if (where.empty()) return false;  // the next tenant fits nowhere, not even alone
    for (const auto& [b, d] : where) {
      const int t = order[pos];
      if (b == static_cast<int>(open.size())) {
        if (static_cast<int>(open.size()) + 1 > max_bins) return false;
        if ((static_cast<double>(open.size()) + 1) * option_price(option) > stop_at + 1e-9) {
          return false;
        }
        open.emplace_back(static_cast<std::size_t>(devices), Mask{0});
      }
      Mask& device = open[static_cast<std::size_t>(b)][static_cast<std::size_t>(d)];
      if (unit(key_of(device | Mask{1} << t)).verdict != Verdict::feasible) break;
      device |= Mask{1} << t;
      ++pos;
    }
  }
  for (const auto& bin : open) {
    Config c;
    c.model = model;
    c.variant = v;
    c.machine = node_mode() ? option : -1;
    int fullest = 0;
    for (const Mask d : bin) {
      if (d == 0) continue;
      c.blocks.push_back({d, v.profile, 0});
      fullest = std::max(fullest, popcount(d));
    }
    // Time-slicing: the fullest device's clients (GKE's max-shared-clients-per-gpu and the
    // device plugin's replicas take 2 at least; a device's limit does not change its runs).
    if (!exclusive && &strategy_of(v) != &mps_strategy()) c.variant.replicas = std::max(fullest, 2);
    if (node_mode()) place_blocks(c);
    bins.push_back(c);
  }
  return true;
}

std::vector<Variant> Planner::packing_variants(int family, int option, Mask tenants,
                                               int max_gpus) const {
  std::vector<Variant> out;
  const int model = option_model(option);
  const int count = popcount(tenants);
  std::vector<int> profiles = {-1};
  if (family == kMig || family == kMigTs) {
    // Partition sizes largest first, without the dominated ones: a size is skipped when a larger
    // one (more SMs and memory) gives at least as many partitions per GPU.
    profiles.clear();
    int most = 0;
    for (const int p : models_[static_cast<std::size_t>(model)].mig) {
      const int instances = instances_per_gpu(model, p);
      if (instances <= most) continue;
      most = instances;
      // One partition per GPU time-shared is the whole GPU time-shared, with less: left to the
      // time-slicing family when it is searched.
      if (family == kMigTs && instances == 1 && allowed_[kTimeSlicing]) continue;
      profiles.push_back(p);
    }
  }
  // MPS replicas are fixed per packing: a unit's pinned memory and thread share depend on them.
  // Bare GPUs: no limits (and, for tenants that need memory isolation, the pinned ones below).
  // Nodes (every client pinned to 1/replicas): for b bins of D devices the fewest replicas that
  // can hold the tenants, ceil(count / (b D)), fewest bins first.
  std::vector<int> replicas = {0};
  if (family == kMps) {
    bool pinned = node_mode();
    for (int t = 0; t < n_; ++t) {
      if (tenants >> t & 1u)
        pinned = pinned || scenario_.tenants[static_cast<std::size_t>(t)].isolation.memory;
    }
    if (node_mode()) replicas.clear();
    if (pinned) {
      const int devices = option_gpus(option);
      const int max_clients = platform_ == Platform::gke ? kGkeMaxSharedClients : 1 << 20;
      for (int b = 1; b <= max_gpus / option_gpus(option); ++b) {
        const int r = std::max(2, (count + b * devices - 1) / (b * devices));
        if (r > max_clients) continue;
        if (std::find(replicas.begin(), replicas.end(), r) == replicas.end()) replicas.push_back(r);
        if (r == 2) break;
      }
    }
  }
  for (const int p : profiles) {
    for (const int r : replicas) out.push_back(Variant{family, r, p});
  }
  return out;
}

double Planner::config_price(const Config& c) const {
  return c.machine >= 0 ? option_price(c.machine)
                        : models_[static_cast<std::size_t>(c.model)].spec.cost_per_hour;
}

int Planner::config_gpus(const Config& c) const {
  return c.machine >= 0 ? option_gpus(c.machine) : 1;
}

namespace {

/// kRankingRule on two feasible setups: cheaper, then the smaller worst SLO ratio, then more
/// tenants isolated.
bool ranks_before(const PlanSetup& a, const PlanSetup& b) {
  if (std::abs(a.cost_per_hour - b.cost_per_hour) > 1e-9) return a.cost_per_hour < b.cost_per_hour;
  if (std::abs(a.worst_ratio - b.worst_ratio) > 1e-12) return a.worst_ratio < b.worst_ratio;
  return a.memory_isolated + a.fault_isolated > b.memory_isolated + b.fault_isolated;
}

}  // namespace

void Planner::run_large(PlanResult& result) {
  result.large = true;
  result.lower_bound = lower_bound_cost();
  const Mask all = n_ >= 64 ? ~Mask{0} : (Mask{1} << n_) - 1;
  const std::vector<int> families = {kDedicated, kTimeSlicing, kMps, kMigTs, kMig};
  std::map<int, PlanSetup> rows;                // family -> its cheapest packing
  std::map<int, std::vector<Config>> row_bins;  // ... and its bins
  double best_cost = kInf;
  for (const int f : families) {
    if (!allowed_[f]) continue;
    for (int o = 0; o < options(); ++o) {
      for (const Variant& v : packing_variants(f, o, all, plan_.max_gpus)) {
        // A family that already reached the lower bound cannot get cheaper: its other variants
        // are not packed (the answer is proven; margins are not compared).
        if (rows.count(f) && rows[f].cost_per_hour <= result.lower_bound + 1e-9) break;
        // A family's later variants must be cheaper than its row (ties are not packed); its
        // first packing may tie the best so far (the row is then that packing).
        std::vector<Config> bins;
        const double stop = rows.count(f) ? rows[f].cost_per_hour - 1e-6 : best_cost;
        if (!pack(o, v, all, plan_.max_gpus, stop, bins)) continue;
        PlanSetup setup = setup_of(kFamilyNames[f], bins);
        if (!rows.count(f) || ranks_before(setup, rows[f])) {
          rows[f] = setup;
          row_bins[f] = bins;
        }
        best_cost = std::min(best_cost, setup.cost_per_hour);
      }
    }
  }
  PlanSetup best;
  best.label = "best";
  best.tenants = n_;
  std::vector<Config> best_bins;
  bool found = false;
  for (const auto& [f, setup] : rows) {
    result.ranked.push_back(setup);
    if (!found || ranks_before(setup, best)) {
      best = setup;
      best_bins = row_bins[f];
      found = true;
    }
  }
  if (found && best.cost_per_hour > result.lower_bound + 1e-9) {
    // Refinement: each bin of the best packing is packed again on its own, its tenants on every
    // option and family (within the GPUs the other bins leave), and replaced when that costs
    // less: a mixed setup (e.g. the last node's few tenants on a smaller machine type, or on a
    // cheaper GPU model). Bins share no device, so the rest of the setup is unchanged.
    bool improved = false;
    int gpus_used = 0;
    for (const Config& c : best_bins) gpus_used += config_gpus(c);
    std::vector<Config> refined;
    for (std::size_t b = 0; b < best_bins.size(); ++b) {
      const Config& bin = best_bins[b];
      Mask tenants = 0;
      for (const Block& block : bin.blocks) tenants |= block.tenants;
      const int budget = plan_.max_gpus - gpus_used + config_gpus(bin);
      double price = config_price(bin);
      std::vector<Config> replacement = {bin};
      bool replaced = false;
      for (const int f : families) {
        if (!allowed_[f]) continue;
        for (int o = 0; o < options(); ++o) {
          if (option_price(o) > price - 1e-6) continue;  // one bin of it costs as much already
          for (const Variant& v : packing_variants(f, o, tenants, budget)) {
            std::vector<Config> bins;
            if (!pack(o, v, tenants, budget, price - 1e-6, bins)) continue;
            double cost = 0;
            for (const Config& c : bins) cost += config_price(c);
            if (cost > price - 1e-6) continue;
            price = cost;
            replacement = bins;
            replaced = true;
          }
        }
      }
      if (replaced) {
        improved = true;
        gpus_used -= config_gpus(bin);
        for (const Config& c : replacement) gpus_used += config_gpus(c);
      }
      refined.insert(refined.end(), replacement.begin(), replacement.end());
    }
    if (improved) {
      best = setup_of("best", refined);
      best_bins = refined;
    }
  }
  for (const int f : families) {
    if (!allowed_[f] || rows.count(f)) continue;
    PlanSetup none;
    none.label = kFamilyNames[f];
    none.tenants = n_;
    none.reason = found
                      ? fmt::format("no packing within {} GPUs at or below the best's {:.2f} {}/h",
                                    plan_.max_gpus, best.cost_per_hour, result.currency)
                      : fmt::format("no packing within {} GPUs", plan_.max_gpus);
    result.ranked.push_back(none);
  }
  if (found) {
    best.label = "best";
  } else {
    best.reason = fmt::format("no packing within {} GPUs meets every SLO", plan_.max_gpus);
  }
  result.ranked.insert(result.ranked.begin(), best);
}

}  // namespace planner_detail
}  // namespace gpumux
