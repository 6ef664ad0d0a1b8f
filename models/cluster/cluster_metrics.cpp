#include "models/cluster/cluster_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace gpumux::cluster {
namespace {

constexpr double kHoursPerMonth = 730.0;  // 8,760 h / 12
constexpr double kBytesPerGb = 1e9;

// A pending time and whether it is censored (the pod had not started when the replay ended).
struct Wait {
  double seconds;
  bool censored;
  bool operator<(const Wait& o) const {
    // Exact waits before censored ones of the same length: the fewest quantiles are flagged.
    return seconds != o.seconds ? seconds < o.seconds : (!censored && o.censored);
  }
};

// The nearest-rank q-quantile and whether it is a lower bound: some censored wait at or below
// its rank could be longer than the value, which would move the order statistic up.
std::pair<double, bool> nearest_rank(const std::vector<Wait>& sorted, double q) {
  if (sorted.empty()) return {0.0, false};
  const auto n = static_cast<double>(sorted.size());
  const auto i =
      std::min(static_cast<std::size_t>(std::max(1.0, std::ceil(q * n))) - 1, sorted.size() - 1);
  bool censored = false;
  for (std::size_t k = 0; k <= i && !censored; ++k) censored = sorted[k].censored;
  return {sorted[i].seconds, censored};
}

void fill(PendingStats& s, std::vector<Wait>& waits) {
  std::sort(waits.begin(), waits.end());
  std::tie(s.p50_s, s.p50_censored) = nearest_rank(waits, 0.50);
  std::tie(s.p90_s, s.p90_censored) = nearest_rank(waits, 0.90);
  std::tie(s.p99_s, s.p99_censored) = nearest_rank(waits, 0.99);
  s.max_s = waits.empty() ? 0 : waits.back().seconds;
  s.max_censored = s.censored > 0;
}

}  // namespace

ClusterMetrics cluster_metrics(const ClusterResult& r) {
  ClusterMetrics m;
  std::map<std::string, PendingStats> by_class;
  std::map<std::string, std::vector<Wait>> waits;
  std::vector<Wait> all_waits;
  std::map<std::string, int> reasons, admission;
  for (const PodRecord& p : r.pods) {
    PendingStats& s = by_class[p.pod_class];
    s.pod_class = p.pod_class;
    s.pods += 1;
    m.all.pods += 1;
    if (p.admission_failed) {  // phase Failed: neither pending nor started
      admission[p.pending_reason + ": " + p.pending_message] += 1;
      m.admission_failed += 1;
      continue;
    }
    if (!p.pending_reason.empty()) {
      reasons[p.pending_reason] += 1;
      s.waited += 1;
      m.all.waited += 1;
    }
    if (p.failed_at >= 0) m.failed += 1;
    if (p.start < 0) {
      s.never_started += 1;
      m.all.never_started += 1;
      if (p.arrival <= r.end_time) {  // waited from its arrival to the end, at least
        s.censored += 1;
        m.all.censored += 1;
        const Wait w{to_seconds(r.end_time - p.arrival), true};
        waits[p.pod_class].push_back(w);
        all_waits.push_back(w);
      }
      continue;
    }
    s.started += 1;
    m.all.started += 1;
    const Wait w{to_seconds(p.start - p.arrival), false};
    waits[p.pod_class].push_back(w);
    all_waits.push_back(w);
    const Nanos end = p.end >= 0 ? p.end : r.end_time;
    const double hours = std::max(0.0, to_seconds(end - p.start) / 3600.0);
    double share = 0;
    if (p.node_gpu_milli > 0) {
      share = p.node_gpu_share;
    } else if (p.node_cpu_milli > 0) {
      share = static_cast<double>(p.cpu_milli) / static_cast<double>(p.node_cpu_milli);
    }
    const double cost = share * p.node_cost_per_hour * hours;
    s.cost_allocated += cost;
    s.cost_used += cost * p.gpu_utilization;
    s.gpu_hours += p.gpu_milli / 1000.0 * hours;
    m.cost_allocated += cost;
    m.cost_used += cost * p.gpu_utilization;
    m.vram_gb_months_allocated +=
        static_cast<double>(p.vram_allocated_bytes) / kBytesPerGb * hours / kHoursPerMonth;
    m.vram_gb_months_used +=
        static_cast<double>(p.vram_used_bytes) / kBytesPerGb * hours / kHoursPerMonth;
  }
  for (auto& [name, s] : by_class) {
    fill(s, waits[name]);
    m.classes.push_back(s);
    m.all.cost_allocated += s.cost_allocated;
    m.all.cost_used += s.cost_used;
    m.all.gpu_hours += s.gpu_hours;
  }
  m.all.pod_class = "all";
  fill(m.all, all_waits);
  for (const auto& [why, n] : reasons) m.pending_reasons.emplace_back(why, n);
  for (const auto& [why, n] : admission) m.admission_failures.emplace_back(why, n);
  std::stable_sort(m.pending_reasons.begin(), m.pending_reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });

  for (const PoolRecord& p : r.pools) {
    m.cost_total += p.cost;
    if (!p.currency.empty()) m.currency = p.currency;
    if (p.gpus_per_node > 0) {
      m.gpu_pool_cost += p.cost;
      m.vram_gb_months_provisioned += static_cast<double>(p.gpu_memory_bytes) * p.gpus_per_node /
                                      kBytesPerGb * (p.node_seconds / 3600.0) / kHoursPerMonth;
    }
  }
  auto per = [](double cost, double gbm) { return gbm > 0 ? cost / gbm : 0.0; };
  m.usd_per_gb_month_provisioned = per(m.gpu_pool_cost, m.vram_gb_months_provisioned);
  m.usd_per_gb_month_allocated = per(m.gpu_pool_cost, m.vram_gb_months_allocated);
  m.usd_per_gb_month_used = per(m.gpu_pool_cost, m.vram_gb_months_used);

  if (!r.samples.empty()) {
    const ClusterSample& last = r.samples.back();
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    m.allocation_final = ratio(static_cast<double>(last.gpu_milli_allocated),
                               static_cast<double>(last.gpu_milli_total));
    m.gpu_allocation_final = ratio(last.gpus_allocated, last.gpus_total);
    m.fragmentation_final_milli = last.fragmentation_milli;
    m.fragmentation_final_ratio =
        ratio(last.fragmentation_milli,
              static_cast<double>(last.gpu_milli_total - last.gpu_milli_allocated));
    m.unusable_final_milli = last.unusable_milli;
    for (std::size_t i = 0; i < r.resources.size(); ++i) {
      if (i < last.fragmentation_by_resource.size()) {
        m.fragmentation_final_by_resource[r.resources[i]] = last.fragmentation_by_resource[i];
      }
      if (i < last.unusable_by_resource.size()) {
        m.unusable_final_by_resource[r.resources[i]] = last.unusable_by_resource[i];
      }
    }
    // Time-weighted means: each sample holds until the next (the last until end_time).
    double span = 0, alloc = 0, gpus = 0, util = 0, frag = 0, unusable = 0;
    for (std::size_t i = 0; i < r.samples.size(); ++i) {
      const ClusterSample& s = r.samples[i];
      const Nanos until = i + 1 < r.samples.size() ? r.samples[i + 1].time : r.end_time;
      const double dt = to_seconds(std::max<Nanos>(0, until - s.time));
      span += dt;
      alloc += dt * ratio(static_cast<double>(s.gpu_milli_allocated),
                          static_cast<double>(s.gpu_milli_total));
      gpus += dt * ratio(s.gpus_allocated, s.gpus_total);
      util += dt * ratio(s.gpu_milli_used, static_cast<double>(s.gpu_milli_total));
      frag += dt * s.fragmentation_milli;
      unusable += dt * s.unusable_milli;
    }
    if (span > 0) {
      m.allocation_mean = alloc / span;
      m.gpu_allocation_mean = gpus / span;
      m.utilization_mean = util / span;
      m.fragmentation_mean_milli = frag / span;
      m.unusable_mean_milli = unusable / span;
    } else {
      m.allocation_mean = m.allocation_final;
      m.gpu_allocation_mean = m.gpu_allocation_final;
      m.fragmentation_mean_milli = m.fragmentation_final_milli;
      m.unusable_mean_milli = m.unusable_final_milli;
    }
  }
  return m;
}

}  // namespace gpumux::cluster
