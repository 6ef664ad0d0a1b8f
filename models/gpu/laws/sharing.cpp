// What every law shares (sharing_law.hpp): law 1's grant in dispatch order, the rate bounds, the
// L2 pass (law 3), the HBM max-min problem (law 4), the events of laws 1b and 1c and the end of a
// kernel's co-residency. A law changes one of them by overriding it (or the hooks of share_sms).
#include <algorithm>
#include <cmath>

#include "models/gpu/sharing_law.hpp"
#include "sim/util/checked.hpp"

namespace gpumux {

bool ContentionLaw::grant(KernelRun& k, const SharingState& s, double epsilon, double& free,
                          double& held_by_client) const {
  const bool granted =
      contention::grant(k, s.geometry, k.sm_demand, s.client_cap, epsilon, free, held_by_client);
  if (!granted) return false;
  if (k.first_start < 0) k.first_start = s.now;  // its first SMs (/kernels)
  k.wave_origin = k.work - k.remaining;          // blocks on the new SMs start a round now (law 1b)
  return true;
}

void ContentionLaw::share_sms(SharingState& s) const {
  const std::vector<KernelRun*>& running = s.running;
  if (running.empty()) return;  // an emptied device: nothing to grant
  const DeviceGeometry& g = s.geometry;
  const double sms = g.sms;
  const double epsilon = 1e-9 * sms;
  if (running.size() == 1 && running.front()->tenant >= 0) {
    // One kernel (the usual exclusive device): the same arithmetic as below without the
    // per-client table (its client holds exactly what the kernel holds).
    KernelRun& k = *running.front();
    k.yield_wanted = false;  // (law 1b: nobody to yield to)
    k.yield_share = 0;
    k.leftover_wanted = false;                                            // (law 1c: no guest)
    k.sm_demand = contention::sm_demand(k.sm_fraction, g, s.client_cap);  // (a session's kernel
                                                                          // may carry another's)
    double free = sms;
    free -= k.occupancy;
    if (free <= epsilon) return;
    double held_by_client = 0.0;
    held_by_client += k.occupancy;
    grant(k, s, epsilon, free, held_by_client);
    return;
  }
  double free = sms;
  DispatchFacts facts;
  bool wanting = false;  // some kernel holds less than its full width (grant's first test)
  int max_tenant = -1;
  for (KernelRun* k : running) {
    free -= k->occupancy;
    k->yield_wanted = false;     // set again below while a more urgent kernel waits (law 1b)
    k->yield_share = 0;          // (with the share of its SMs wanted, under a spread)
    k->leftover_wanted = false;  // set again below while a guest waits for its leftover (1c)
    facts.mixed_priorities |= k->priority != running.front()->priority;
    facts.mixed_clients |= k->tenant != running.front()->tenant;
    if (k->sm_demand < 0) {
      // The same three numbers grant() takes the minimum of, once per start of the kernel.
      k->sm_demand = contention::sm_demand(k->sm_fraction, g, s.client_cap);
    }
    const bool wants = k->occupancy + k->co_sms + k->retired_sms < k->sm_demand - epsilon;
    wanting |= wants;
    facts.guest_wanting |= wants && contention::co_resident_capable(*k, g);
    max_tenant = std::max(max_tenant, k->tenant);
  }
  // Nothing to grant: grant() would refuse every kernel at its first test (co-running clients
  // that all hold their width, the usual state between arrivals), so skip the client table,
  // unless the law's own rules act without free SMs (law 1b retires SMs, law 1c places guests).
  if (!wanting || (free <= epsilon && !acts_without_free_sms(s, facts))) return;
  const std::vector<KernelRun*>* order = &running;
  if (facts.mixed_priorities) {
    s.order_scratch.assign(running.begin(), running.end());
    std::stable_sort(
        s.order_scratch.begin(), s.order_scratch.end(),
        [](const KernelRun* a, const KernelRun* b) { return a->priority > b->priority; });
    order = &s.order_scratch;
  }
  std::vector<double>& client_held = s.client_held_scratch;
  client_held.assign(static_cast<std::size_t>(max_tenant + 1), 0.0);
  for (const KernelRun* k : running)
    client_held[static_cast<std::size_t>(k->tenant)] += k->occupancy + k->co_sms;
  for (KernelRun* k : *order) {
    if (free <= epsilon) break;
    if (k->occupancy + k->co_sms + k->retired_sms >= k->sm_demand - epsilon)
      continue;  // grant's refusal
    double& held_by_client = client_held[static_cast<std::size_t>(k->tenant)];
    grant(*k, s, epsilon, free, held_by_client);
  }
  place_guests(s, *order, facts, epsilon);
  retire_for_urgent(s, *order, facts, epsilon, free);
}

namespace {

// Law 1c: the per-SM port (contention law 2's ceiling s) of one SM a host shares with a guest
// that places `guest_blocks` L there. Every byte a block moves passes through its SM's port, so
// host and guest share that SM's s as they share its issue slots (contention::issue_shares): in
// proportion to resident warps (the misses each keeps in flight, assumption: equal per warp),
// each bounded by its port demand, the share of one SM's s its memory phase draws alone,
//     p_k = m_k u_k / (f_k S_gpu s)      (u_k = min(1, f_k S_gpu s): 1 at the per-SM ceiling),
// the guest's times its residency L / beta_G. Returns the SM equivalents of memory progress
// {host, guest}: a_H / p_H (1 when its demand is met) and a_G / p_G (L / beta_G when met), so
// the two together never move more than the one port passes. No ceiling (s = 0): {1, L / beta_G}.
contention::IssueShares co_resident_memory(const KernelRun& host, const KernelRun& guest,
                                           double guest_blocks, const DeviceGeometry& g) {
  const double residency = guest_blocks / contention::blocks_per_held_sm(guest, g);
  if (!(g.sm_bandwidth > 0)) return {1.0, residency};
  const auto demand = [&g](const KernelRun& k) {
    const double width = std::max(1e-12, k.sm_fraction * g.gpu_sms * g.sm_bandwidth);
    return std::min(1.0, k.memory_bound * contention::hbm_draw(k.sm_fraction, g) / width);
  };
  const double p_h = demand(host);
  const double p_g = demand(guest);
  const contention::IssueShares a = contention::issue_shares(
      contention::blocks_per_held_sm(host, g) * contention::block_warps(host.footprint), p_h,
      guest_blocks * contention::block_warps(guest.footprint), p_g * residency);
  // (A met demand gives exactly 1 and L / beta_G: results without port contention are bit for
  // bit those of the law before the port was shared.)
  return {a.host < p_h ? a.host / p_h : 1.0, a.guest < p_g * residency ? a.guest / p_g : residency};
}

// Laws 1c and 2: the rate bound of a co-resident kernel (contention::co_resident_bound) from the
// SMs it sits on as a guest and those of its own that carry guests.
double co_resident_bound(const KernelRun& k, const SharingState& s) {
  const DeviceGeometry& g = s.geometry;
  // (retired_sms: law 1b's last round, whose remaining blocks end as on the round's SMs)
  double whole = k.occupancy + k.retired_sms;
  double compute = whole;
  double memory = whole;
  if (k.host != nullptr) {
    const contention::IssueShares p =
        contention::co_resident_progress(*k.host, k, k.guest_blocks, g);
    whole += k.guest_sms;
    compute += k.guest_sms * p.guest;
    const double met = co_resident_memory(*k.host, k, k.guest_blocks, g).guest;
    memory +=
        met < k.guest_blocks / contention::blocks_per_held_sm(k, g) ? k.guest_sms * met : k.co_sms;
  }
  if (k.hosted_sms > 0) {
    for (const KernelRun* guest : s.running) {
      if (guest->host != &k) continue;
      const contention::IssueShares p =
          contention::co_resident_progress(k, *guest, guest->guest_blocks, g);
      compute -= guest->guest_sms * (1.0 - p.host);
      const contention::IssueShares q = co_resident_memory(k, *guest, guest->guest_blocks, g);
      if (q.host < 1.0) memory -= guest->guest_sms * (1.0 - q.host);
    }
  }
  return contention::co_resident_bound(k.sm_fraction, k.memory_bound, k.busy_share, k.l2_factor,
                                       whole, std::max(0.0, compute), memory, g, k.grid, k.blocks,
                                       k.throughput_share);
}

double bound_on_held(const KernelRun& k, const DeviceGeometry& g) {
  return contention::rate_bound(k.sm_fraction, k.memory_bound, k.busy_share, k.l2_factor,
                                k.occupancy + k.retired_sms, g, k.grid, k.blocks,
                                k.throughput_share);
}

// Law 3 from the sums over kernels holding SMs: sum of m u phi rate_max over the memory-touching
// ones, their count, and whether any re-reads a working set. Returns whether it applied (else
// every l2_factor stays the lone one).
bool apply_l2_factors(const SharingState& s, double traffic, int memory_kernels, bool any_reuse) {
  const DeviceGeometry& g = s.geometry;
  if (!contention::l2_law_applies(g, memory_kernels, any_reuse)) return false;
  for (KernelRun* k : s.running) {
    if (k->memory_bound <= 0 || k->rate_max <= 0 || k->working_set <= 0) continue;
    k->l2_factor =
        contention::l2_factor(contention::hbm_use(*k, k->rate_max, g), traffic, k->working_set, g);
    k->rate_max = co_resident(*k) ? co_resident_bound(*k, s) : bound_on_held(*k, g);
  }
  return true;
}

}  // namespace

void ContentionLaw::set_lone_bound(KernelRun& k, const SharingState& s) const {
  k.l2_factor = contention::lone_l2_factor(k, s.geometry);
  if (co_resident(k)) {
    k.rate_max = co_resident_bound(k, s);  // (law 1c: depends on its neighbour; not cached)
    return;
  }
  const double round_sms = k.occupancy + k.retired_sms;  // (law 1b: its last round's SMs)
  if (round_sms > 0) {
    // rate_bound with the lone l2_factor depends only on the occupancy (the kernel's f, m and
    // working set and the geometry are fixed while it runs): computed again only when its SMs
    // changed.
    if (k.solo_bound_occupancy != round_sms) {
      k.solo_bound = bound_on_held(k, s.geometry);
      k.solo_bound_occupancy = round_sms;
    }
    k.rate_max = k.solo_bound;
  } else {
    k.rate_max = 0.0;
  }
}

bool ContentionLaw::share_rates(SharingState& s) const {
  const DeviceGeometry& g = s.geometry;
  int active = 0;
  // The L2 law's inputs (apply_l2_factors), summed in the same pass and order.
  double traffic = 0;
  int memory_kernels = 0;
  bool any_reuse = false;
  for (KernelRun* k : s.running) {
    set_lone_bound(*k, s);
    if (k->rate_max > 0) {
      ++active;
      if (k->memory_bound > 0) {
        traffic += contention::hbm_use(*k, k->rate_max, g);  // (lone l2_factor here)
        ++memory_kernels;
        any_reuse |= k->working_set > 0;
      }
    }
  }
  const bool l2_applied = active > 1 && apply_l2_factors(s, traffic, memory_kernels, any_reuse);
  if (active <= 1) {
    // At most one kernel holds SMs: no sharing, it runs at its bound on what it holds.
    for (KernelRun* k : s.running) k->rate = k->rate_max;
    return true;
  }
  // HBM not saturated: the max-min solution is every kernel at its bound (the solver's own
  // result without the O(k x steps) solve; contention::hbm_room_at_bounds).
  if (g.bandwidth > 0) {
    double demand = 0;
    for (const KernelRun* k : s.running) demand += contention::hbm_use(*k, k->rate_max, g);
    if (contention::hbm_room_at_bounds(demand, g)) {
      for (KernelRun* k : s.running) k->rate = k->rate_max;
      return !l2_applied;
    }
  }
  MaxMinProblem& problem = s.problem;
  problem.clear();
  const int bw_constraint = problem.add_constraint(g.bandwidth);
  for (KernelRun* k : s.running) {
    const int v = problem.add_variable(1.0, k->rate_max);
    problem.add_consumption(v, bw_constraint, contention::hbm_use(*k, 1.0, g));
  }
  problem.solve();
  for (std::size_t i = 0; i < s.running.size(); ++i) {
    s.running[i]->rate = problem.rate(static_cast<int>(i));
  }
  return false;
}

Nanos ContentionLaw::next_event(SharingState& s) const {
  const DeviceGeometry& g = s.geometry;
  const Nanos now = s.now;
  Nanos next = kNever;
  for (const KernelRun* k : s.running) {
    // Law 1c: a guest waits for the leftover of this kernel's last round: its start is an event.
    if (!k->leftover_wanted || !(k->rate > 0) || !(k->work > 0)) continue;
    const double last_round = (k->occupancy + k->co_sms + k->retired_sms) * k->work /
                              std::max(1e-12, k->waves * k->sm_fraction * g.gpu_sms);
    const double to_go = k->remaining - last_round;
    if (!(to_go > 0)) continue;
    const Nanos wait = std::max<Nanos>(1, checked::ceil_nanos_saturating(to_go / k->rate));
    if (wait < kNever - now) next = std::min(next, now + wait);
  }
  for (KernelRun* k : s.running) {
    // Law 1b: the end of the resident round of a kernel a more urgent one waits for.
    if (!k->yield_wanted) {
      k->retire_at = kNever;
      continue;
    }
    if (k->rate <= 0) continue;
    const double round = contention::round_work(*k, g);
    if (round <= 0) continue;
    const double done = std::max(0.0, (k->work - k->remaining) - k->wave_origin);
    double to_go = round - std::fmod(done, round);
    const double spread = retirement_spread();
    if (spread > 0) {
      // Staggered retirement (contention_law.hpp): the round's blocks end uniformly over its
      // last `spread` of a round, so the wanted share q of its SMs is free at round progress
      // max(p, 1 - spread) + spread q (capped at the round's end) while it dispatches (the SMs
      // freed before the wait began went to its own next blocks), and at 1 - spread + spread q
      // in its last round (those freed before stayed free).
      const double p = std::fmod(done, round) / round;
      const double q = std::min(1.0, k->yield_share);
      const double at = contention::dispatching(*k, g, 1e-9 * g.sms)
                            ? std::min(1.0, std::max(p, 1.0 - spread) + spread * q)
                            : std::max(p, 1.0 - spread + spread * q);
      to_go = (at - p) * round;
    }
    Nanos wait = checked::ceil_nanos_saturating(to_go / k->rate);
    if (spread > 0) {
      // At least 1 ns, and an earlier pass's time stands while the wait goes on (a later event
      // does not push it back).
      wait = std::max<Nanos>(1, wait);
      if (k->retire_at > now && k->retire_at != kNever) wait = std::min(wait, k->retire_at - now);
    }
    if (wait < kNever - now) {
      k->retire_at = now + wait;
      next = std::min(next, k->retire_at);
    }
  }
  return next;
}

void ContentionLaw::leave(KernelRun& k, const std::vector<KernelRun*>& running) const {
  if (k.host != nullptr) {
    k.host->hosted_sms = std::max(0.0, k.host->hosted_sms - k.guest_sms);
    k.host = nullptr;
    k.guest_sms = k.guest_blocks = k.co_sms = 0;
  }
  if (k.hosted_sms > 0) {
    for (KernelRun* guest : running) {
      if (guest->host != &k) continue;
      guest->occupancy += guest->co_sms;  // its blocks stay where they are
      guest->host = nullptr;
      guest->guest_sms = guest->guest_blocks = guest->co_sms = 0;
    }
    k.hosted_sms = 0;
  }
}

}  // namespace gpumux
