#pragma once
// Device: one schedulable GPU — a whole GPU, or one MIG instance (an instance is a device with
// its own SMs, memory and bandwidth share, isolated from its neighbours). A sharing strategy
// (exclusive, time-slicing, MPS) is a subclass that decides which submitted kernels hold the
// device and what each may consume; the fluid arithmetic, memory accounting and statistics are
// shared here.
//
// Physics (docs/strategies.md; every law below is tested in tests/unit/test_contention.cpp). The
// laws' arithmetic is models/gpu/contention_law.hpp and the sharing passes between kernels are the
// law class of the device's geometry (models/gpu/sharing_law.hpp, built by name); the device keeps
// the books (running set, memory, integrals, events) and calls them. This summary says what the
// default law ("residency") does:
//
// 1. SM residency. A kernel's resident thread blocks hold their SMs for as long as the kernel
//    runs, whatever its bottleneck; concurrent kernels (MPS clients, a tenant's concurrent
//    requests, streams of one process) never hold the same SMs:  sum_k h_k <= S_dev.
//    A kernel wants w_k = min(f_k S_gpu, S_dev, its client's cap c) SMs (c = active thread
//    percentage x S_dev under MPS). SMs freed by a finishing kernel (and SMs nobody holds) go to
//    the kernels still dispatching blocks, in block-dispatch order: priority (higher first),
//    then launch order (the hardware block scheduler is first-come, first-served). A kernel is
//    still dispatching while it holds nothing or its remaining blocks do not fit on what it holds:
//        (remaining / work) * W_k * f_k * S_gpu  >  h_k          (W_k = waves alone)
//    Blocks of one wave run in lockstep (equal block times, a preempted block resumes where it
//    stopped), so held SMs are released when the kernel ends; a kernel in its last wave takes no
//    more. A kernel holding no SMs waits.
//    Consequence: two full-grid kernels do not co-run (the second waits for the first), and a
//    short kernel beside a long full-grid one waits for the long one's residual time.
//    Co-residency (law 1c): a kernel with a known block footprint that finds no free SM becomes
//    a guest in the leftover resources of a host kernel's SMs (the host in its last round, or
//    yielding to it: more urgent, or another MPS client with interleaved client order); guests
//    hold no SMs of their own (occupancy), their blocks' SM equivalents are KernelRun::co_sms,
//    and host and guest share each SM's issue slots. Blocks of different MPS clients interleave
//    (SharingLimits::interleave_clients): at an equally urgent holder's round end a waiting
//    client takes SMs up to an equal split.
//
// 2. Rates on held SMs: each kernel at most its rate bound on the SMs it holds (contention law 2,
//    with the per-SM HBM ceiling where the law has one).
//
// 3. HBM bandwidth, aggregate conserved: kernels share the device's bandwidth max-min fairly
//    (SimGrid lmm, sim/core/max_min.hpp) under contention law 4; the only interference beyond
//    fair sharing is L2 capacity (law 3: phi_k >= 1, bounded by 1/rho). A streaming kernel has
//    phi = 1, so n streaming clients together always move exactly B_dev, whatever n.
//
// Cost per event (a kernel's submission or completion), k running kernels. Each kernel keeps
// its remaining work at the time its rate last changed (`KernelRun::since`) and is brought up to
// now only when needed. While every kernel holds the SMs it wants and runs at its bound on them
// (HBM not saturated at the bounds, the L2 law not in play: the usual state of capped MPS
// clients, no co-residency), an event touches only the kernels that started or finished: a
// per-device heap of projected finish times gives the next completion, and the SMs held, HBM rate
// and per-client SM totals behind the utilization integrals are kept as running sums; O(changed x
// log k). Otherwise (SMs to re-grant, HBM saturated, the L2 law, preemption, a removed client, one
// running kernel) the full recompute runs: every kernel advanced to now, O(k log k) (one sort
// when priorities differ), plus the max-min solve only while HBM is saturated at the kernels'
// bounds (O(k x steps), steps <= k); a kernel's rate bound is computed again only when its SMs
// changed. One running kernel: O(1), the same arithmetic as before the lazy path. The lazy path
// changes results in the last bits only (one step r (t2 - t0) instead of r (t1 - t0) +
// r (t2 - t1), sums kept incrementally; a finish time can move by 1 ns): set_eager (a run's
// RunOptions::eager_device) forces the full recompute at every event, the test oracle.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/gpu/contention_law.hpp"
#include "models/gpu/kernel_run.hpp"
#include "models/gpu/sharing_law.hpp"
#include "models/gpu/sharing_limits.hpp"
#include "sim/core/max_min.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/statistics.hpp"

namespace gpumux {

struct DeviceProfile;
class RandomStream;

/// Receives memory and failure notices from a device (implemented by the runner).
class DeviceObserver {
 public:
  /// A client could not be attached (e.g. MPS client limit). `reason` is one line.
  virtual void on_client_rejected(int tenant, const std::string& reason) = 0;

 protected:
  ~DeviceObserver() = default;
};

class Device {
 public:
  Device(Simulator& sim, DeviceGeometry geometry, SharingLimits limits);
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceGeometry& geometry() const { return geometry_; }
  /// The law that shares this device (its geometry's; whole-SM residency when it has none).
  const ContentionLaw& law() const { return *law_; }
  const SharingLimits& limits() const { return limits_; }
  int index() const { return index_; }
  void set_index(int index) { index_ = index; }

  /// Registers a tenant as a client (before the run). Returns false when the strategy refuses
  /// it (reported through the observer by the caller).
  virtual bool attach_client(int tenant, std::string& reason);
  const std::vector<int>& clients() const { return clients_; }
  /// Position of `tenant` in clients() (its first attachment), or -1. O(1).
  int client_position(int tenant) const {
    const auto t = static_cast<std::size_t>(tenant);
    return tenant >= 0 && t < client_of_tenant_.size() ? client_of_tenant_[t] : -1;
  }

  /// A kernel is ready to run (stream order satisfied). The device owns when it runs.
  virtual void submit(KernelRun& kernel) = 0;
  /// A kernel of `tenant` has been issued and only its launch overhead is left before submit()
  /// (`on`), or it has now been submitted (`!on`). Time-slicing counts such a context as busy:
  /// the kernel already sits in its channel. Default: ignored. Forgotten for a removed client.
  virtual void kernel_launching(int /*tenant*/, bool /*on*/) {}
  /// Called once after every client attached, before the run: a strategy with a round robin
  /// draws its start from `rng` (a named stream of the run's seed). Default: ignored.
  virtual void seed_round_robin(RandomStream& /*rng*/) {}
  /// Drops every kernel of `tenant` (running, queued or preempted) without notifying owners.
  virtual void remove_client_kernels(int tenant) = 0;

  // --- memory (bytes); no isolation between clients of one device -------------------------
  /// Tries to allocate; false (nothing allocated) when the device or the client's own limit
  /// would be exceeded. `why` then says which.
  bool allocate(int tenant, std::int64_t bytes, std::string& why);
  /// Which of allocate()'s two limits `bytes` more for `tenant` would exceed, allocating
  /// nothing: the client's own (MPS pinned memory limit) or the device's. O(clients).
  enum class MemoryRefusal { none, client_limit, device_full };
  MemoryRefusal refusal(int tenant, std::int64_t bytes) const;
  void release(int tenant, std::int64_t bytes);
  std::int64_t memory_used() const { return memory_used_; }
  std::int64_t memory_peak() const { return memory_peak_; }
  std::int64_t client_memory(int tenant) const;

  // --- statistics ---------------------------------------------------------------------------
  /// Integral over [0, now] of the fraction of the device's SMs held by resident blocks (DCGM's
  /// SM_ACTIVE; a switch or preemption period counts as fully busy), in ns.
  double busy_integral(Nanos now) const { return statistics_ ? busy_.integral(now) : 0.0; }
  /// Same, excluding context-switch and preemption overhead.
  double useful_integral(Nanos now) const { return statistics_ ? useful_.integral(now) : 0.0; }
  /// Integral over [0, now] of the fraction of the device's HBM bandwidth in use (DCGM's
  /// DRAM_ACTIVE), in ns.
  double dram_integral(Nanos now) const { return statistics_ ? dram_.integral(now) : 0.0; }
  std::int64_t context_switches() const { return context_switches_; }
  Nanos switch_overhead() const { return switch_overhead_; }
  /// SM-ns attributed to a client so far (occupancy integral), for cost attribution.
  double client_sm_integral(int tenant, Nanos now) const;

  /// Work accounting (solo-ns), for the conservation invariant  progressed = completed +
  /// discarded + (work - remaining) of kernels still on the device: the integral of every
  /// kernel's rate, the work of the kernels that finished (less the sub-ns completion
  /// tolerance), and the progress of kernels removed unfinished (a killed client).
  double work_progressed() const { return work_progressed_; }
  double work_completed() const { return work_completed_; }
  double work_discarded() const { return work_discarded_; }

  /// A tenant alone on this device runs the device's events itself, without the event queue,
  /// inside a SoloSession (models/gpu/device_solo.hpp; models/run/direct.cpp).
  class SoloSession;

  /// true: the full recompute at every event (no lazy path; the results of the code before
  /// it, bit for bit). Default false; a run sets it from RunOptions::eager_device. Set before
  /// the run.
  void set_eager(bool eager) { eager_ = eager; }
  bool eager() const { return eager_; }
  /// false: no utilization statistics (busy_integral, useful_integral, dram_integral and
  /// client_sm_integral read 0): no update at each recompute or overhead change (the direct
  /// path's sessions and the lazy path's sums still set theirs, unread). Nothing the simulation
  /// decides reads them: every kernel's and request's times are the same either way; only the
  /// utilization outputs (DeviceResult's fractions, the timeseries, gpu_seconds) are lost. For
  /// a caller that reads only latencies, failures and memory (RunOptions::device_statistics:
  /// `gpumux plan`'s unit runs). Default true. Set before the run.
  void set_statistics(bool on) { statistics_ = on; }
  /// Recomputes the lazy path has done so far (0 when eager), for tests and profiling.
  std::int64_t lazy_recomputes() const { return lazy_recomputes_; }

 protected:
  /// Strategy hook: called at the start of recompute(), before variables are built.
  virtual void prepare_recompute() {}
  /// Strategy hook: SMs all kernels of one client may hold together (default: the device's).
  virtual double client_sm_cap() const;
  /// Strategy hook: called after finished kernels were removed and their owners told.
  virtual void after_completions() {}
  /// Strategy trait: every submitted kernel joins the running set at once and the device has no
  /// timers or hooks of its own (the fluid laws alone decide): inline operation is then exact.
  /// A strategy answering true must keep submit() = start_running() + recompute_soon() and the
  /// default prepare_recompute(), after_completions() and kernel_launching() (the solo session
  /// and the single-launch loop in models/run/direct.cpp rely on it; test_direct_path checks
  /// every such strategy against queued operation).
  virtual bool submits_at_once() const { return false; }
  /// Strategy trait: `tenant`'s context holds the device, and until an event of the device's own
  /// (already queued: a slice end) or of another tenant, that tenant's kernels alone run on it:
  /// its submissions join the running set at once and schedule nothing, and its completions
  /// schedule nothing while it still has work (issued kernels count). Then that tenant's kernel
  /// events may run inline with the device's own code (Device::SoloSession's holder mode,
  /// models/run/direct.cpp), checked again before each submission. Default false; time-slicing
  /// answers for the context running its slice. O(1).
  virtual bool holds_device(int /*tenant*/) const { return false; }

  // Fluid pool operations for strategies.
  void start_running(KernelRun& kernel);  ///< joins the running set (call recompute() after)
  /// Leaves the running set keeping its remaining work (preemption). Call recompute() after.
  void stop_running(KernelRun& kernel);
  void remove_running_of(int tenant);
  /// Brings remaining work up to now, re-solves rates, reschedules the completion wake-up.
  void recompute();
  /// recompute(), unless completions are being delivered (then it runs once at the end).
  void recompute_soon() {
    if (!batching_) recompute();
  }
  /// Advances remaining work of running kernels to now (no re-solve).
  void advance();
  const std::vector<KernelRun*>& running() const { return running_; }
  /// Overhead periods (switching, preemption): the device counts as busy but not useful.
  void set_overhead(bool in_overhead);
  void count_switch(Nanos overhead) {
    ++context_switches_;
    switch_overhead_ += overhead;
  }

  Simulator& sim_;

 private:
  // What every event on the device reads or writes, together (a few cache lines): a run over
  // hundreds of devices visits each one's state cold, and a field per line was a miss per field.
  DeviceGeometry geometry_;  // (its numbers: SMs and bandwidth, for the utilization levels)
  const ContentionLaw* law_;
  std::vector<KernelRun*> running_;
  EventId completion_event_;
  Nanos last_advance_ = 0;
  Nanos inline_next_ = kNever;  // (inline operation) the next completion time
  std::uint64_t next_run_seq_ = 0;
  bool batching_ = false;
  bool in_overhead_ = false;
  bool inline_ = false;  // a SoloSession is open: finish_recompute hands the next completion to
                         // inline_next_
  bool eager_ = false;
  bool statistics_ = true;
  bool lazy_ = false;  // the lazy state below is valid
  // The kernel's rate bound (contention::rate_bound, its current l2_factor) on `held_sms` SMs.
  double rate_bound(const KernelRun& kernel, double held_sms) const {
    return contention::rate_bound(kernel.sm_fraction, kernel.memory_bound, kernel.busy_share,
                                  kernel.l2_factor, held_sms, geometry_, kernel.grid, kernel.blocks,
                                  kernel.throughput_share);
  }
  // What a new kernel of the only client gets alone on this device: the occupancy grant_sms()
  // gives it, its rate bound (its lone l2_factor) and its HBM use at that rate, for one
  // contention::solo_key (the fields the law reads for a lone kernel).
  struct SoloCache {
    contention::SoloKey key;
    double occupancy = 0, bound = 0, l2_factor = 1, bandwidth = 0;
  };
  // The values update_busy_single() sets while one kernel holds `occupancy` SMs and uses
  // `bandwidth` of HBM (m x rate), or while the device is idle.
  struct SoloLevels {
    double busy = 0, useful = 0, dram = 0, client = 0;
  };
  // The same arithmetic as set_device_integrals and the client's sum from 0.
  SoloLevels solo_levels(double occupancy, double bandwidth) const {
    double occupied = 0;
    double used = 0;
    double client_value = 0.0;
    occupied += occupancy;
    used += bandwidth;
    client_value += occupancy;
    const double sms = std::max(1, geometry_.sms);
    const double fraction = std::min(1.0, occupied / sms);
    return SoloLevels{in_overhead_ ? 1.0 : fraction, in_overhead_ ? 0.0 : fraction,
                      geometry_.bandwidth > 0 ? std::min(1.0, used / geometry_.bandwidth) : 0.0,
                      client_value};
  }
  // The lone grants and bounds of the kernels seen on this device (SoloSession::lone_rate(),
  // inline_recompute_solo() and recompute()'s lone-kernel path), in a direct-mapped table of
  // kSoloCacheEntries slots indexed by a hash of the key's bits: a slot holds the last key that
  // hashed there. Each entry is exactly what the miss would compute again, so a collision costs
  // a recompute, never a different value. 128 slots: a time-sliced whisper decoder cycles
  // through 74 distinct keys and hits 99 % (round robin over 4 entries hit 7 %;
  // docs/performance.md, "The planner"). 9 KiB per device.
  static constexpr std::size_t kSoloCacheEntries = 128;
  std::array<SoloCache, kSoloCacheEntries> solo_cache_{};
  static std::size_t solo_slot(const contention::SoloKey& key) {
    // splitmix64's finaliser over the five doubles' bits.
    const auto mix = [](std::uint64_t x) {
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
      return x ^ (x >> 31);
    };
    std::uint64_t h = 0;
    for (const double v :
         {key.sm_fraction, key.memory_bound, key.busy_share, key.working_set, key.grid}) {
      h = mix(h ^ std::bit_cast<std::uint64_t>(v));
    }
    return static_cast<std::size_t>(h & (kSoloCacheEntries - 1));
  }
  const SoloCache* find_solo(const contention::SoloKey& key) const {
    const SoloCache& entry = solo_cache_[solo_slot(key)];
    return entry.key == key ? &entry : nullptr;
  }
  const SoloCache& remember_solo(const SoloCache& entry) {
    SoloCache& slot = solo_cache_[solo_slot(entry.key)];
    slot = entry;
    return slot;
  }
  TimeWeightedValue busy_, useful_, dram_;
  double work_progressed_ = 0, work_completed_ = 0, work_discarded_ = 0;
  std::vector<TimeWeightedValue> client_sm_;  // parallel to clients_
  std::vector<int> client_of_tenant_;         // tenant index -> position in clients_, or -1
  int first_client_tenant_ = -1;  // clients_[0]'s tenant (client_of_tenant_ says 0 for it)
  // update_busy touches only the clients holding SMs now or at the last update (a client at 0
  // staying at 0 adds exactly nothing to its integral), so a recompute costs O(running kernels).
  std::vector<std::uint32_t> busy_clients_;  // positions whose client_sm_ value is not 0
  std::vector<KernelRun*> finished_scratch_;

 private:
  void on_completion();  // event: the earliest running kernel finishes now
  void update_busy();
  // The running kernels as the law's passes see them (now, the client cap, the scratch).
  SharingState sharing_state();
  // contention::sm_demand of `k` under its client's cap.
  double sm_demand_of(const KernelRun& k) const {
    return contention::sm_demand(k.sm_fraction, geometry_, client_sm_cap());
  }
  void update_busy_single();  // update_busy for at most one running kernel
  // The device's busy, useful and DRAM integrals from the SMs held and the HBM rate in use now
  // (the part both update_busy paths share).
  void set_device_integrals(Nanos now, double occupied_sms, double bandwidth) {
    const double sms = std::max(1, geometry_.sms);
    const double fraction = std::min(1.0, occupied_sms / sms);
    busy_.set(now, in_overhead_ ? 1.0 : fraction);
    useful_.set(now, in_overhead_ ? 0.0 : fraction);
    dram_.set(now, geometry_.bandwidth > 0 ? std::min(1.0, bandwidth / geometry_.bandwidth) : 0.0);
  }
  void complete_finished();
  /// recompute() inline when nothing or one new kernel runs: the next completion (kNever: none).
  Nanos inline_recompute_solo();
  // update_busy_single() for the only client (position 0), inline operation, from the levels
  // solo_levels() computes: the same values, the same sets, without looking the client up.
  void set_solo_running(Nanos now, const SoloLevels& running) {
    busy_.set(now, running.busy);
    useful_.set(now, running.useful);
    dram_.set(now, running.dram);
    client_sm_.front().set(now, running.client);
    busy_clients_.clear();
    if (running.client != 0.0) busy_clients_.push_back(0);
  }
  void set_solo_idle(Nanos now, const SoloLevels& idle) {
    busy_.set(now, idle.busy);
    useful_.set(now, idle.useful);
    dram_.set(now, idle.dram);
    if (!busy_clients_.empty()) {  // it held SMs at the last update: back to 0
      client_sm_.front().set(now, 0.0);
      busy_clients_.clear();
    }
  }
  // The solo cache entry of `k`, which holds its lone grant and its lone l2_factor.
  SoloCache solo_of(const KernelRun& k) const;

  // Schedules the next completion (or `law_event`, the law's next event, if earlier), updates
  // utilization.
  void finish_recompute(bool at_bounds, Nanos law_event);
  // Brings one kernel's remaining work from its `since` up to `now` (lazy state).
  void advance_kernel(KernelRun& k, Nanos now);
  // Lazy path (header comment, "Cost per event"). recompute_lazy returns false when the state
  // after this event needs the full recompute (nothing it changed is then wrong, only partial).
  bool recompute_lazy();
  void complete_finished_lazy();
  // The tail of both: FINISHED (out of the running set) counted as completed work, each owner
  // told (one recompute for them all), then the strategy's hook and the recompute.
  void deliver_finished(const std::vector<KernelRun*>& finished);
  // After a full recompute: enters the lazy state when every kernel holds its SMs and runs at
  // its bound (`at_bounds`), at least two kernels run and each belongs to an attached client.
  void enter_lazy(bool at_bounds);
  void leave_lazy();  // drops the lazy state's sums and heap (the next recompute is full)
  struct Finish {
    Nanos at;
    KernelRun* kernel;
  };
  void push_finish(Nanos at, KernelRun* kernel);
  void pop_finish();

  SharingLimits limits_;
  int index_ = -1;
  std::vector<int> clients_;
  std::vector<std::int64_t> client_memory_;  // parallel to clients_
  MaxMinProblem problem_;

  // Lazy state, valid while lazy_: every running kernel holds its SM demand and runs at its
  // bound with its lone l2_factor; every running kernel has a finish entry in finish_heap_ (if it
  // finishes before the int64 horizon). Outside it, client_held_ and client_kernels_ are 0.
  std::int64_t lazy_recomputes_ = 0;
  double occupied_sum_ = 0;          // sum of occupancy
  double bandwidth_sum_ = 0;         // sum of memory_bound * rate (the HBM demand at the bounds)
  int active_ = 0;                   // kernels with rate_max > 0
  int memory_kernels_ = 0;           // ... of them touching memory (memory_bound > 0)
  int reuse_kernels_ = 0;            // ... of those re-reading a working set (the L2 law's trigger)
  std::vector<double> client_held_;  // by client position: SMs its kernels hold
  std::vector<int> client_kernels_;  // by client position: its running kernels
  std::vector<char> client_listed_;  // by client position: in busy_clients_
  std::vector<std::uint32_t> touched_;  // client positions whose SM integral to set
  std::vector<KernelRun*> started_;     // kernels started since the last recompute
  std::vector<Finish> finish_heap_;     // min-heap of projected finish times

  std::int64_t memory_used_ = 0;
  std::int64_t memory_peak_ = 0;
  std::vector<std::uint32_t> touched_scratch_;    // positions to set in this update
  std::vector<double> client_occupancy_scratch_;  // by position; all 0 between updates
  std::vector<char> client_touched_scratch_;      // by position; all 0 between updates
  std::vector<KernelRun*> order_scratch_;
  std::vector<double> client_held_scratch_;  // by tenant index
  std::int64_t context_switches_ = 0;
  Nanos switch_overhead_ = 0;
};

}  // namespace gpumux
