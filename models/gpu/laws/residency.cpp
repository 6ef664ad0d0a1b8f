// The "residency" law (sharing_law.hpp): law 1 with block retirement (1b) and block co-residency
// (1c), whole waves, the per-SM HBM ceiling, overlapped phases and the whole GPU's L2 as the
// reference of solo durations (contention_law.hpp has the maths).
#include <algorithm>
#include <cmath>

#include "models/gpu/device_profile.hpp"
#include "models/gpu/sharing_law.hpp"

namespace gpumux {

std::string_view ResidencyLaw::summary() const {
  return "SM residency with block retirement (urgent kernels take SMs at wave boundaries) and "
         "block co-residency (kernels with a known block footprint share SMs' leftover "
         "resources and issue slots), the roofline rate bound with a per-SM HBM ceiling and "
         "whole waves, overlapped compute and memory phases for roofline kernels (a busy share), "
         "the L2 capacity law against the whole GPU's L2 (a MIG slice keeps its own), max-min "
         "HBM sharing";
}

void ResidencyLaw::set_terms(DeviceGeometry& g, const DeviceProfile& profile,
                             double /*slice_fraction*/) const {
  const double hbm = achievable_hbm_bandwidth(profile);
  g.discrete_waves = true;
  g.overlapped_phases = true;
  g.sm_limits = profile.sm_limits;
  g.l2_reference = static_cast<double>(profile.l2_cache);
  g.sm_bandwidth = profile.sm_bandwidth > 0 && hbm > 0 ? profile.sm_bandwidth / hbm : 0.0;
}

bool ResidencyLaw::acts_without_free_sms(const SharingState& s, const DispatchFacts& f) const {
  // Law 1b retires SMs for more urgent kernels, and with interleaved clients for equally urgent
  // kernels of other clients; law 1c places guests without free SMs.
  // With a spread (staggered retirement) a kernel in its last round hands retired SMs to any
  // waiting kernel.
  return f.mixed_priorities || (f.mixed_clients && s.interleave_clients) || f.guest_wanting ||
         retirement_spread() > 0;
}

std::string_view StaggeredLaw::summary() const {
  return "residency with staggered block retirement: a round's blocks end spread over the "
         "round (spread 1, an assumption), so waiting kernels take SMs as they free, in a "
         "kernel's last round too (an option; docs/strategies.md)";
}

void ResidencyLaw::place_guests(SharingState& s, const std::vector<KernelRun*>& order,
                                const DispatchFacts& facts, double epsilon) const {
  // Law 1c (contention_law.hpp), in dispatch order.
  if (!facts.guest_wanting) return;
  const DeviceGeometry& g = s.geometry;
  std::vector<double>& client_held = s.client_held_scratch;
  const bool interleave = s.interleave_clients;
  const auto wants_sms = [&](const KernelRun& k) {
    const double held = k.occupancy + k.co_sms + k.retired_sms;
    return held < k.sm_demand - epsilon && (held <= 0 || contention::dispatching(k, g, epsilon));
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    KernelRun& guest = *order[i];
    if (guest.host != nullptr || !wants_sms(guest) || !contention::co_resident_capable(guest, g))
      continue;
    // Leftover policy: an earlier kernel (as urgent, of its own client or, in launch order, of
    // any) that still wants SMs is dispatched first.
    bool blocked = false;
    for (std::size_t j = 0; j < i && !blocked; ++j) {
      const KernelRun& ahead = *order[j];
      if (ahead.priority < guest.priority || (interleave && ahead.tenant != guest.tenant)) continue;
      blocked = wants_sms(ahead);
    }
    if (blocked) continue;
    KernelRun* host = nullptr;
    double room = 0;
    double usable = 0;  // the host's SMs the guest may take
    for (KernelRun* h : s.running) {
      if (h == &guest || h->host != nullptr || h->occupancy - h->hosted_sms <= epsilon ||
          !contention::co_resident_capable(*h, g))
        continue;
      const contention::GuestRoom fit = contention::guest_room(*h, guest, g);
      const double free_sms = h->occupancy * fit.share - h->hosted_sms;
      if (!(fit.blocks >= 1) || free_sms <= epsilon || fit.blocks <= room) continue;
      const bool yields =
          h->priority < guest.priority ||
          (interleave && h->priority == guest.priority && h->tenant != guest.tenant);
      if (!yields && contention::dispatching(*h, g, epsilon)) {
        h->leftover_wanted = true;  // its last round is the guest's chance (an event then)
        continue;
      }
      host = h;
      room = fit.blocks;
      usable = free_sms;
    }
    if (host == nullptr) continue;
    const double per_sm = room / contention::blocks_per_held_sm(guest, g);
    double& held_by_client = client_held[static_cast<std::size_t>(guest.tenant)];
    const double held = guest.occupancy + guest.co_sms;
    const double want = std::min(guest.sm_demand - held, s.client_cap - held_by_client);
    const double sms = std::min(usable, want / per_sm);
    if (sms <= epsilon) continue;
    if (held <= 0) guest.wave_origin = guest.work - guest.remaining;  // (as grant)
    if (guest.first_start < 0) guest.first_start = s.now;
    guest.host = host;
    guest.guest_sms = sms;
    guest.guest_blocks = room;
    guest.co_sms = sms * per_sm;
    host->hosted_sms += sms;
    held_by_client += guest.co_sms;
  }
}

void ResidencyLaw::retire_for_urgent(SharingState& s, const std::vector<KernelRun*>& order,
                                     const DispatchFacts& facts, double epsilon,
                                     double& free) const {
  // Law 1b (contention_law.hpp). `order` is by priority, most urgent first; a kernel that still
  // wants SMs takes those of less urgent kernels whose resident round retires now, least urgent
  // first, and marks the others so that their next round's end is an event. With interleaved
  // clients an equally urgent kernel of another client that holds more SMs yields too, up to an
  // equal split (the block scheduler alternates between the clients' pending blocks).
  const bool interleave = s.interleave_clients;
  // Staggered retirement (a spread): a holder in its last round also hands the SMs its retired
  // blocks free to any waiting kernel (it has no block left to dispatch), keeping its rate on
  // the round's SMs (retired_sms); a dispatching holder frees the SMs wanted at a share of its
  // round (next_event) instead of at the round's end.
  const bool staggered = retirement_spread() > 0;
  if (!(facts.mixed_priorities || (facts.mixed_clients && interleave) || staggered)) return;
  const DeviceGeometry& g = s.geometry;
  std::vector<double>& client_held = s.client_held_scratch;
  const Nanos now = s.now;
  for (std::size_t i = 0; i < order.size(); ++i) {
    KernelRun& urgent = *order[i];
    const double urgent_round = urgent.occupancy + urgent.co_sms + urgent.retired_sms;
    if (urgent_round >= urgent.sm_demand - epsilon) continue;
    if (urgent_round > 0 && !contention::dispatching(urgent, g, epsilon)) continue;
    for (std::size_t j = order.size(); j-- > 0;) {
      if (j == i) continue;
      KernelRun& holder = *order[j];
      const bool peer =
          interleave && holder.priority == urgent.priority && holder.tenant != urgent.tenant;
      if (holder.occupancy <= epsilon) continue;
      // (staggered: a holder in its last round frees its SMs to any waiting kernel)
      const bool last_round = staggered && !contention::dispatching(holder, g, epsilon);
      if (holder.priority >= urgent.priority && !peer && !last_round) continue;
      const double urgent_held = urgent.occupancy + urgent.co_sms;
      const bool split = peer && !last_round;  // (alternating with its own next blocks)
      if (holder.hosted_sms > 0 || (split && holder.occupancy <= urgent_held + epsilon)) continue;
      const double wanted = urgent.sm_demand - urgent_held - std::max(0.0, free);
      if (holder.retire_at > now) {
        // Its round retires later: an event then, unless this round is its last (it keeps its
        // SMs until it ends; staggered: its blocks free them before).
        if (last_round || contention::dispatching(holder, g, epsilon)) {
          holder.yield_wanted = true;
          if (staggered && wanted > epsilon) {
            const double round_sms = holder.occupancy + holder.retired_sms;
            holder.yield_share =
                std::max(holder.yield_share, (split ? 2.0 : 1.0) * wanted / round_sms);
          }
        }
        continue;
      }
      // Its round has just retired: every block it has left is pending, behind the urgent ones.
      if (wanted <= epsilon) break;
      double taken = std::min(wanted, holder.occupancy);
      if (split) taken = std::min(taken, 0.5 * (holder.occupancy - urgent_held));
      holder.occupancy -= taken;
      client_held[static_cast<std::size_t>(holder.tenant)] -= taken;
      free += taken;
      if (last_round) {
        holder.retired_sms += taken;  // its rate stays that of the round's SMs
      } else {
        holder.wave_origin = holder.work - holder.remaining;  // its next round starts later
      }
      holder.retire_at = kNever;
    }
    if (free > epsilon) {
      grant(urgent, s, epsilon, free, client_held[static_cast<std::size_t>(urgent.tenant)]);
    }
  }
}

}  // namespace gpumux
