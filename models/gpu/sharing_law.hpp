#pragma once
// The contention law as a library chosen by name, as SimGrid builds its sharing solver with
// System::build(name): a law is a class (ContentionLaw) that says how the kernels resident on one
// device (a whole GPU or a MIG instance) share it, and the device only keeps the books.
//
// A law does two things:
//  - it puts its terms on a device's geometry (set_terms: the per-SM HBM ceiling, whole waves,
//    the reference L2, overlapped phases, the SMs' resources for co-residency), the numbers its
//    O(1) per-kernel formulas read (contention_law.hpp; the planner's bounds read the same);
//  - it shares the device among its running kernels at each full recompute (share_sms: law 1's
//    grant order and the law's own SM rules; share_rates: the rate bounds, the L2 pass and the
//    HBM max-min problem; next_event: the times its rules want an event, such as a round's end
//    an urgent kernel waits for).
// Device (device.hpp) calls these and does no law arithmetic itself; its fast paths (the lazy
// incremental path, the solo cache) take their shortcut only where the law's predicates
// (contention_law.hpp, "Shortcuts and when they are exact") say it is exact.
//
// Laws by name (contention_laws(); the scenario key `contention_law:`, docs/strategies.md):
//  - "residency" (ResidencyLaw, the default): laws 1-4 of contention_law.hpp with block
//    retirement (1b), block co-residency (1c), whole waves, the per-SM HBM ceiling, overlapped
//    phases for kernels with a busy share, and L_ref = the whole GPU's L2;
//  - "fluid" (FluidLaw, the law of the last release): whole-SM residency only (no retirement, no
//    co-residency), no per-SM ceiling, serial phases, L_ref = the device's own L2.
// Adding a law: one file (a class deriving from ContentionLaw, or from one of these two to change
// one rule) plus one line in contention_laws() (contention_law.cpp); CONTRIBUTING.md.
//
// Cost: share_sms O(k log k) for k running kernels (one stable sort when priorities differ;
// co-residency and retirement O(k^2) while a kernel waits for SMs); share_rates O(k), plus the
// max-min solve O(k x steps) only while HBM is saturated at the kernels' bounds.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpu/contention_law.hpp"
#include "sim/core/max_min.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

struct DeviceProfile;

/// The kernels resident on one device as a law's sharing pass sees them (built by Device at each
/// full recompute; references into the device's own state and scratch).
struct SharingState {
  const DeviceGeometry& geometry;
  const std::vector<KernelRun*>& running;  ///< in launch order
  double client_cap = 0;                   ///< SMs all kernels of one client may hold together
  bool interleave_clients = false;         ///< SharingLimits::interleave_clients
  Nanos now = 0;
  std::vector<KernelRun*>& order_scratch;    ///< the dispatch order, when priorities differ
  std::vector<double>& client_held_scratch;  ///< SMs held per tenant index
  MaxMinProblem& problem;                    ///< law 4's max-min problem
};

/// Law 1c: true when `k` is a guest or hosts one (its bound depends on its neighbour).
inline bool co_resident(const KernelRun& k) { return k.host != nullptr || k.hosted_sms > 0; }

/// What share_sms' first pass found, for the law's own SM rules.
struct DispatchFacts {
  bool mixed_priorities = false;  ///< the running kernels' priorities differ
  bool mixed_clients = false;     ///< they belong to more than one client
  bool guest_wanting = false;     ///< a kernel wanting SMs could be a guest (law 1c)
};

/// A contention law: how the kernels resident on one device share it. Stateless; one instance
/// per law, found by name.
class ContentionLaw {
 public:
  virtual ~ContentionLaw() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;  ///< one line, for docs and listings
  /// Puts the law's terms on a device of `profile` whose MIG memory slices are `slice_fraction`
  /// of the GPU's (1 for a whole GPU): L2 capacity and rho (the same for every law), and the
  /// terms the law has. O(1).
  virtual void set_terms(DeviceGeometry& g, const DeviceProfile& profile,
                         double slice_fraction) const = 0;
  /// Whether a kernel's HBM draw is capped by the SMs it holds (law 2's s): the workload catalog
  /// times its kernels with the same ceiling (catalog_timing_profile).
  virtual bool per_sm_bandwidth() const = 0;

  // --- sharing among the running kernels (Device's full recompute) ---
  /// SMs: law 1's grant in dispatch order (priority, then launch order), then the law's own SM
  /// rules. Sets each kernel's occupancy (and sm_demand, first_start, wave_origin, the co-
  /// residency fields and the yield/leftover marks where the law has them).
  virtual void share_sms(SharingState& s) const;
  /// Rates on the SMs held: every kernel's rate_max (law 2, with law 3's L2 factor) and rate
  /// (law 4's max-min HBM sharing). True when every kernel runs at its bound with its lone L2
  /// factor (the lazy path may follow).
  virtual bool share_rates(SharingState& s) const;
  /// The earliest time one of the law's rules wants an event after share_rates (kNever: none);
  /// sets each kernel's retire_at.
  virtual Nanos next_event(SharingState& s) const;
  /// `k` leaves the running set `running` (finished, stopped, removed): the co-residency it
  /// takes part in ends (law 1c; nothing under a law without it).
  virtual void leave(KernelRun& k, const std::vector<KernelRun*>& running) const;

  /// Law 1's grant of one kernel (its sm_demand computed) from `free` SMs, its client holding
  /// `held_by_client`: updates both and the kernel's occupancy, first_start and wave_origin.
  /// True when it granted something. The lazy path grants its new kernels with it.
  bool grant(KernelRun& k, const SharingState& s, double epsilon, double& free,
             double& held_by_client) const;
  /// The kernel's lone L2 factor and its rate_max on the SMs it holds (law 2; a co-resident
  /// kernel's from its neighbours, law 1c).
  void set_lone_bound(KernelRun& k, const SharingState& s) const;

 protected:
  // share_sms' hooks, after law 1's grant in dispatch order `order` (s.client_held_scratch:
  // SMs held per tenant; `epsilon`: SMs below which nothing counts).
  /// Law 1c: kernels still wanting SMs become guests on a host's SMs. Default: none.
  virtual void place_guests(SharingState& /*s*/, const std::vector<KernelRun*>& /*order*/,
                            const DispatchFacts& /*facts*/, double /*epsilon*/) const {}
  /// Law 1b: urgent kernels take SMs at less urgent kernels' round ends (`free` SMs left).
  /// Default: none.
  virtual void retire_for_urgent(SharingState& /*s*/, const std::vector<KernelRun*>& /*order*/,
                                 const DispatchFacts& /*facts*/, double /*epsilon*/,
                                 double& /*free*/) const {}
  /// Whether the hooks may act although no SM is free. Default: never.
  virtual bool acts_without_free_sms(const SharingState& /*s*/,
                                     const DispatchFacts& /*facts*/) const {
    return false;
  }

 public:
  /// Law 1b's retirement spread s in [0, 1] (contention_law.hpp, "Staggered retirement"): the
  /// share of a round over which its blocks' ends are spread. 0 = lock-step rounds (every
  /// shipped law but "staggered").
  virtual double retirement_spread() const { return 0.0; }
};

/// The default law: laws 1-4 with block retirement, co-residency, whole waves, the per-SM
/// ceiling, overlapped phases and the whole GPU's L2 as reference (models/gpu/laws/residency.cpp).
class ResidencyLaw : public ContentionLaw {
 public:
  std::string_view name() const override { return "residency"; }
  std::string_view summary() const override;
  void set_terms(DeviceGeometry& g, const DeviceProfile& profile,
                 double slice_fraction) const override;
  bool per_sm_bandwidth() const override { return true; }

 protected:
  void place_guests(SharingState& s, const std::vector<KernelRun*>& order,
                    const DispatchFacts& facts, double epsilon) const override;
  void retire_for_urgent(SharingState& s, const std::vector<KernelRun*>& order,
                         const DispatchFacts& facts, double epsilon, double& free) const override;
  bool acts_without_free_sms(const SharingState& s, const DispatchFacts& facts) const override;
};

/// "residency" with staggered block retirement (law 1b with a spread s > 0; an option, not the
/// default: docs/strategies.md has the measurements): a round's blocks end spread over its last
/// s of a round, so waiting kernels take SMs as they free, in the holder's last round too
/// (models/gpu/laws/residency.cpp).
class StaggeredLaw : public ResidencyLaw {
 public:
  /// `spread` in (0, 1]; `name` for a law registered with another spread (tests).
  explicit StaggeredLaw(double spread, std::string_view name = "staggered")
      : spread_(spread), name_(name) {}
  std::string_view name() const override { return name_; }
  std::string_view summary() const override;
  double retirement_spread() const override { return spread_; }

 private:
  double spread_;
  std::string_view name_;
};

/// The law of the last release: whole-SM residency (resident blocks hold their SMs until the
/// kernel ends), no per-SM ceiling, serial phases, the device's own L2 as reference
/// (models/gpu/laws/fluid.cpp).
class FluidLaw : public ContentionLaw {
 public:
  std::string_view name() const override { return "fluid"; }
  std::string_view summary() const override;
  void set_terms(DeviceGeometry& g, const DeviceProfile& profile,
                 double slice_fraction) const override;
  bool per_sm_bandwidth() const override { return false; }
};

/// The registered laws, the default first (contention_law.cpp). O(1).
const std::vector<const ContentionLaw*>& contention_laws();
/// Their names, in that order ("residency, fluid, staggered"), for validation and listings.
std::vector<std::string> contention_law_names();
/// The law of that name, or nullptr. O(number of laws).
const ContentionLaw* find_contention_law(std::string_view name);
/// The default law ("residency").
const ContentionLaw& default_contention_law();
/// A scenario's `contention_law:` value: the default law when empty, else the law of that name,
/// or nullptr when none has it. O(number of laws).
const ContentionLaw* contention_law_or_default(std::string_view name);
/// Registers one more law by name (tests and extensions; before any run reads the list). The
/// law must outlive every run; a name already registered is refused (false).
bool register_contention_law(const ContentionLaw& law);

}  // namespace gpumux
