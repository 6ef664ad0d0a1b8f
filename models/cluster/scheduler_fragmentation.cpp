// The scheduler's fragmentation measure (FGD, Weng et al., ATC 2023): per node, the expected GPU
// capacity that the typical pods cannot use, cached per (pool, CPU free, units free).
#include "models/cluster/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace gpumux::cluster {

const double* Scheduler::frag_of(int pool, std::int64_t cpu, const int* frees) {
  const PoolTemplate& tpl = templates_[static_cast<std::size_t>(pool)];
  const int n = static_cast<int>(tpl.units.size());
  const std::size_t nres = static_cast<std::size_t>(std::max(1, names_.size()));
  // Key: pool, CPU, the sorted (resource, free) codes (units of one resource are alike).
  std::uint32_t codes[256];
  const int m = std::min(n, 256);
  for (int i = 0; i < m; ++i) {
    codes[i] = (static_cast<std::uint32_t>(tpl.units[static_cast<std::size_t>(i)].resource) << 16) |
               static_cast<std::uint32_t>(frees[i] & 0xffff);
  }
  std::sort(codes, codes + m);
  key_buffer_.resize(sizeof(int) + sizeof(std::int64_t) + m * sizeof(std::uint32_t));
  char* k = key_buffer_.data();
  std::memcpy(k, &pool, sizeof(int));
  std::memcpy(k + sizeof(int), &cpu, sizeof(std::int64_t));
  std::memcpy(k + sizeof(int) + sizeof(std::int64_t), codes, m * sizeof(std::uint32_t));
  auto it = memo_index_.find(key_buffer_);
  if (it != memo_index_.end()) return memo_values_.data() + it->second;

  const std::size_t off = memo_values_.size();
  memo_values_.resize(off + 2 * nres, 0.0);
  double* vals = memo_values_.data() + off;  // [0, nres): FGD's measure; [nres, 2 nres): report
  const std::size_t typical = typical_.size();
  if (tpl.fractional) {
    // The reference's own arithmetic (pkg/utils/frag.go NodeGpuShareFragAmount): per typical
    // pod, in order, freq x the integer milli-GPUs into its quadrant; F = the quadrants summed
    // in index order except Q3. The same doubles as the reference, so that an unchanged F
    // gives a gain of exactly 0 and the integer scores round alike.
    enum { kQ1, kQ2, kQ3, kQ4, kXL, kXR, kNA, kQuadrants };
    double quadrant[kQuadrants] = {};
    std::int64_t left_total = 0;
    for (int i = 0; i < n; ++i) left_total += frees[i];  // slots are milli-GPUs here
    for (const auto& [shape, p] : typical_) {
      const Demand& d = demand(shape, pool);
      const bool cpu_fits = cpu >= d.cpu_milli;
      if (d.needs.empty() && d.possible) {  // a CPU pod
        quadrant[cpu_fits ? kXL : kXR] += p * static_cast<double>(left_total);
        continue;
      }
      if (d.model_mismatch) {
        quadrant[kNA] += p * static_cast<double>(left_total);
        continue;
      }
      if (d.needs.empty()) {  // asks for something the pool does not advertise
        quadrant[cpu_fits ? kQ2 : kQ1] += p * static_cast<double>(left_total);
        continue;
      }
      const Need& need = d.needs[0];
      std::int64_t hosts = 0, frag = 0;
      for (int i = 0; i < n; ++i) {
        if (frees[i] >= need.per_unit) {
          ++hosts;
        } else {
          frag += frees[i];
        }
      }
      if (d.possible && hosts >= need.count) {
        if (cpu_fits) {
          quadrant[kQ2] += p * static_cast<double>(frag);
          quadrant[kQ3] += p * static_cast<double>(left_total - frag);
        } else {
          quadrant[kQ4] += p * static_cast<double>(left_total);
        }
      } else {
        quadrant[cpu_fits ? kQ2 : kQ1] += p * static_cast<double>(left_total);
      }
    }
    double f = 0;
    for (int q = 0; q < kQuadrants; ++q) {
      if (q != kQ3) f += quadrant[q];
    }
    vals[tpl.units.empty() ? 0 : static_cast<std::size_t>(tpl.units[0].resource)] = f;
  }
  for (std::size_t t = 0; t < typical; ++t) {
    const auto& [shape, p] = typical_[t];
    const Demand& d = demand(shape, pool);
    const bool fits = fits_raw(d, tpl, cpu, kNoMemoryLimit, frees);
    const double report_p = report_weight_[static_cast<std::size_t>(pool) * typical + t];
    for (int i = 0; i < n; ++i) {
      const UnitTemplate& u = tpl.units[static_cast<std::size_t>(i)];
      if (frees[i] == 0) continue;
      bool asked = false, usable = false;
      for (const Need& need : d.needs) {
        if (need.resource != u.resource) continue;
        asked = true;
        usable |= fits && frees[i] >= (need.spread ? 1 : need.per_unit);
      }
      if (usable) continue;
      const double free_milli = static_cast<double>(frees[i]) * u.gpu_milli / u.slots;
      if (!tpl.fractional) vals[u.resource] += p * free_milli;
      if (asked && report_p > 0) vals[nres + u.resource] += report_p * free_milli;
    }
  }
  memo_index_.emplace(key_buffer_, off);
  return vals;
}

void Scheduler::refresh_frag(int node) {
  const std::size_t nres = frag_by_resource_.size();
  double* mine = node_frag_.data() + static_cast<std::size_t>(node) * nres;
  double* report = node_report_.data() + static_cast<std::size_t>(node) * nres;
  for (std::size_t r = 0; r < nres; ++r) frag_by_resource_[r] -= report[r];
  if (state_.active[static_cast<std::size_t>(node)]) {
    const int pool = state_.pool[static_cast<std::size_t>(node)];
    const double* v = frag_of(pool, state_.cpu_free[static_cast<std::size_t>(node)],
                              state_.slot_free.data() + state_.unit_begin[node]);
    for (std::size_t r = 0; r < nres; ++r) {
      mine[r] = v[r];
      report[r] = v[nres + r];
    }
  } else {
    for (std::size_t r = 0; r < nres; ++r) mine[r] = report[r] = 0;
  }
  for (std::size_t r = 0; r < nres; ++r) frag_by_resource_[r] += report[r];
}

double Scheduler::fgd_measure(int node) const {
  const std::size_t nres = frag_by_resource_.size();
  double sum = 0;
  for (std::size_t r = 0; r < nres; ++r)
    sum += node_frag_[static_cast<std::size_t>(node) * nres + r];
  return sum;
}

double Scheduler::node_fragmentation(int node) const {
  const std::size_t nres = frag_by_resource_.size();
  double sum = 0;
  for (std::size_t r = 0; r < nres; ++r)
    sum += node_report_[static_cast<std::size_t>(node) * nres + r];
  return sum;
}

double Scheduler::fragmentation_total() const {
  // Summed afresh from the per-node values so rounding does not accumulate.
  double sum = 0;
  for (double v : node_report_) sum += v;
  return sum;
}

std::vector<double> Scheduler::fragmentation_by_resource() const {
  const std::size_t nres = frag_by_resource_.size();
  std::vector<double> out(nres, 0.0);
  for (std::size_t i = 0; i < node_report_.size(); ++i) out[i % nres] += node_report_[i];
  return out;
}

}  // namespace gpumux::cluster
