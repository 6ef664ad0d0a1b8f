// The search space of gpumux plan: the MIG layouts that fit each GPU model, the variants
// (family, replicas) a group may take, how a variant maps to a sharing mode, and the size of the
// space (set partitions x per-GPU configurations, before and after the bounds: PlanStats).
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "models/gpu/device_profile.hpp"
#include "models/gpu/mig_layout.hpp"

namespace gpumux {
namespace planner_detail {

// ---------------------------------------------------------------------------------------------
// The space

void Planner::build_layouts(ModelInfo& m) {
  const DeviceProfile& p = *m.profile;
  for (std::size_t i = 0; i < p.mig_profiles.size(); ++i) {
    if (p.mig_profiles[i].name.find('+') == std::string::npos) m.mig.push_back(static_cast<int>(i));
  }
  std::sort(m.mig.begin(), m.mig.end(), [&p](int a, int b) {
    const MigProfileSpec& x = p.mig_profiles[static_cast<std::size_t>(a)];
    const MigProfileSpec& y = p.mig_profiles[static_cast<std::size_t>(b)];
    return std::tie(x.sms, x.memory) > std::tie(y.sms, y.memory);
  });
  std::map<std::vector<int>, int> id;
  m.layouts.push_back({});
  id[{}] = 0;
  for (std::size_t l = 0; l < m.layouts.size(); ++l) {
    m.next.emplace_back(m.mig.size(), -1);
    for (std::size_t k = 0; k < m.mig.size(); ++k) {
      std::vector<int> grown = m.layouts[l];
      grown.push_back(static_cast<int>(k));
      std::sort(grown.begin(), grown.end());
      const auto found = id.find(grown);
      if (found != id.end()) {
        m.next[l][k] = found->second;
        continue;
      }
      std::vector<std::string> names;
      for (int g : grown)
        names.push_back(
            p.mig_profiles[static_cast<std::size_t>(m.mig[static_cast<std::size_t>(g)])].name);
      if (!fit_mig_layout(p, names).fits) continue;
      const int new_id = static_cast<int>(m.layouts.size());
      id[grown] = new_id;
      m.layouts.push_back(grown);
      m.next[l][k] = new_id;
    }
  }
}

std::vector<Variant> Planner::variants(Mask group, const std::vector<bool>& families) const {
  std::vector<Variant> out;
  const int size = popcount(group);
  if (size == 1) {
    out.push_back({kDedicated, 0});
    return out;
  }
  if (families[kTimeSlicing]) out.push_back({kTimeSlicing, size});
  if (families[kMps]) {
    out.push_back({kMps, 0});
    out.push_back({kMps, size});
  }
  if (families[kMig] && size <= 7) out.push_back({kMig, 0});
  if (families[kMigTs]) out.push_back({kMigTs, 0});
  if (families[kMigMps]) {
    out.push_back({kMigMps, 0});
    for (int r = 2; r <= std::min(size, 7); ++r) out.push_back({kMigMps, r});
  }
  return out;
}

const Strategy& Planner::strategy_of(const Variant& v) const {
  switch (v.family) {
    case kTimeSlicing:
    case kMigTs:
      return time_slicing_strategy();
    case kMps:
    case kMigMps:
      return mps_strategy();
    default:
      return exclusive_strategy();
  }
}

int Planner::unit_replicas(const Variant& v, Mask block) const {
  if (&strategy_of(v) == &time_slicing_strategy()) return popcount(block);
  if (&strategy_of(v) == &mps_strategy()) return v.replicas;
  return 0;
}

double Planner::count_configs(Mask group, int model, const Variant& v, bool surviving) {
  if (node_mode()) return count_node_configs(group, model, v, surviving);
  if (!is_mig(v)) {
    if (!surviving) return 1;
    const UnitInfo& info = unit(unit_key(group, model, -1, v));
    return info.verdict == Verdict::pruned ? 0 : 1;
  }
  // Assignments of blocks to instances whose layout fits: recursion over (remaining, layout).
  const ModelInfo& m = models_[static_cast<std::size_t>(model)];
  std::map<std::pair<Mask, int>, double> memo;
  std::function<double(Mask, int)> count = [&](Mask remaining, int layout) -> double {
    if (remaining == 0) return 1;
    const auto key = std::pair{remaining, layout};
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
    const int f = lowest(remaining);
    const Mask rest = remaining & ~(Mask{1} << f);
    double total = 0;
    for (Mask s = rest;; s = (s - 1) & rest) {
      const Mask block = s | (Mask{1} << f);
      const bool ok_size =
          (v.family != kMig || s == 0) && (v.replicas == 0 || popcount(block) <= v.replicas);
      if (ok_size) {
        for (std::size_t k = 0; k < m.mig.size(); ++k) {
          const int grown = m.next[static_cast<std::size_t>(layout)][k];
          if (grown < 0) continue;
          if (surviving && unit(unit_key(block, model, m.mig[k], v)).verdict == Verdict::pruned) {
            continue;
          }
          total += count(remaining & ~block, grown);
        }
      }
      if (s == 0) break;
    }
    memo[key] = total;
    return total;
  };
  return count(group, 0);
}

double Planner::count_setups(bool surviving) {
  std::vector<bool> families(kFamilies, false);
  for (int f = 0; f < kFamilies; ++f) families[static_cast<std::size_t>(f)] = allowed_[f];
  const std::size_t size = std::size_t{1} << n_;
  std::vector<double> c(size, 0);
  for (Mask g = 1; g < size; ++g) {
    for (int m = 0; m < options(); ++m) {
      for (const Variant& v : variants_for(g, m, families)) {
        c[g] += count_configs(g, m, v, surviving);
      }
    }
  }
  const Mask full = (Mask{1} << n_) - 1;
  // Set partitions into at most max_gpus groups (on nodes: at most max_gpus nodes, an upper
  // bound of the space: a node may hold several GPUs).
  const int kmax = std::min(plan_.max_gpus, n_);
  std::vector<double> prev(size, 0), cur(size, 0);
  prev[0] = 1;
  double total = 0;
  for (int k = 1; k <= kmax; ++k) {
    std::fill(cur.begin(), cur.end(), 0.0);
    for (Mask mask = 1; mask <= full; ++mask) {
      const Mask low = mask & (~mask + 1);
      const Mask rest = mask & ~low;
      double sum = 0;
      for (Mask s = rest;; s = (s - 1) & rest) {
        const Mask g = s | low;
        if (c[g] > 0 && prev[mask & ~g] > 0) sum += c[g] * prev[mask & ~g];
        if (s == 0) break;
      }
      cur[mask] = sum;
    }
    total += cur[full];
    std::swap(prev, cur);
  }
  return total;
}

}  // namespace planner_detail
}  // namespace gpumux
