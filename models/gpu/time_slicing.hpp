#pragma once
// Time-slicing: software context switching between the clients (CUDA contexts) of one device.
//
// One context holds the device at a time; its ready kernels run concurrently through the fluid
// model on the whole device; the others' kernels wait. Round-robin among contexts with pending
// work, idle contexts skipped:
//  * A context that gets the device gets a slice of T (timeslice). At the end of a slice, if
//    another context has pending work, the holder is preempted; otherwise it keeps the device
//    for another slice. A newly busy context waits for the running slice to expire. (Slices
//    run back to back from when the holder got the device; no timer runs while nobody waits.)
//  * Contexts are in the runlist in the order they attached (the runner attaches tenants in name
//    order). An idle device picks, once every event of the instant of a submission has run, the
//    first context with a kernel waiting in round-robin order after the last context that ran
//    (it comes last); before any ran, after a position drawn from the run's seed
//    (seed_round_robin). So contexts submitting at the same instant are served in runlist order,
//    from a seeded start, not in the order their events happen to run.
//  * instruction preemption: at slice end running kernels stop (their progress is kept), then
//    P (preemption_latency, saving state; only when some kernel was resident: a holder whose
//    next kernel is still in its launch overhead has no state to save) + C (context_switch) +
//    R (cache_refill, when the next context differs from the last one that ran) pass before the
//    next context runs.
//  * kernel-boundary preemption: at slice end the holder launches nothing new, its running
//    kernels finish (a long kernel makes everyone wait), then C + R pass.
//  * When the holder runs out of work and another context has some, the device switches at once
//    (no preemption needed). A context whose next kernel is issued and only waits for its
//    launch overhead is not out of work: the kernel sits in its channel. A device left idle keeps
//    the last context loaded.
//  * C charges in full only when the incoming context has preempted state to restore. Restoring
//    moves the same SM state the save moved, so a context with nothing preempted pays C - P
//    (the profiles derive P as save time and C as restore time plus a fixed switch cost).
// Closed forms (tests): two saturating contexts each get T / (2 (T + P + C)) of the device; a
// short kernel arriving at a random time beside a saturating neighbour waits on average
// T/2 + P + (C - P) (instruction; its own context had nothing preempted) or the residual of the
// neighbour's kernel + C - P (kernel-boundary); a server that issues each query after the
// previous one returned yields at every query end, so beside a saturating neighbour a query of
// W (T < W < 2 T) takes (C + T - think) + C + T + (P + C) + T + (P + C) + (W - T), whatever the
// neighbour runs (test_sharing_models; the mechanism behind Tally's 2.7x for every trainer).
// Switch and preemption time count as busy but not useful (DeviceResult::useful_fraction).
// Memory is not isolated: all contexts allocate from the same device memory (device.hpp).
#include <deque>
#include <vector>

#include "models/gpu/device.hpp"
#include "sim/core/random.hpp"

namespace gpumux {

class TimeSlicingDevice : public Device {
 public:
  /// Takes T, C, P, R and the preemption mode from `limits`.
  TimeSlicingDevice(Simulator& sim, DeviceGeometry geometry, SharingLimits limits);

  bool attach_client(int tenant, std::string& reason) override;
  void submit(KernelRun& kernel) override;
  void remove_client_kernels(int tenant) override;
  void kernel_launching(int tenant, bool on) override;
  /// The round robin's start before any context ran: uniform over the attached contexts.
  void seed_round_robin(RandomStream& rng) override;

 protected:
  void after_completions() override;
  /// `tenant`'s context is running its slice (no switch or idle pick pending): its submissions go
  /// straight to the running set, and its completions schedule nothing while it has work (a
  /// holder out of work switches or goes idle); the slice's end is an event already queued (or
  /// none while no other context has work), and no other context changes the holder's state
  /// but through an event of its own. O(1).
  bool holds_device(int tenant) const override;

 private:
  enum class State { idle, running, draining, switching };
  struct Context {
    int tenant = -1;
    std::deque<KernelRun*> waiting;  // ready or preempted, not holding the device
    int running = 0;                 // kernels of this context in the running set
    bool preempted = false;          // holds instruction-preempted kernels (state to restore)
    int launching = 0;               // kernels issued, in their launch overhead
    bool has_work() const { return !waiting.empty() || running > 0 || launching > 0; }
  };

  // contexts_ is parallel to clients(): the first context of a tenant is at its client position
  // (inline: four calls per kernel of a time-sliced holder).
  Context& context_of(int tenant) {
    const int position = client_position(tenant);
    if (position >= 0) return contexts_[static_cast<std::size_t>(position)];
    return find_context(tenant);
  }
  Context& find_context(int tenant);  // context_of's fallback: a linear search (or throws)
  int next_context_with_work(int after) const;  // -1 if none (excluding `after`)
  // The first context after `after` (>= -1) with a kernel waiting, `after` itself last; -1: none.
  int next_context_waiting(int after) const;
  void on_idle_pick();  // event: an idle device loads a context with submitted kernels
  void begin_slice();
  void arm_slice_end();  // schedule the yield at the next slice boundary if someone waits
  void begin_switch(int next, Nanos overhead);
  void on_holder_idle();
  void on_slice_end();    // event: the holder's slice is over
  void on_switch_done();  // event: the context switch finished
  void launch_waiting();
  Nanos switch_cost(int next) const;  // C, or C - P when `next` has nothing to restore
  // ++ctx.running, remembering in counted_ a context whose count leaves 0.
  void count_running(Context& ctx) {
    if (ctx.running++ == 0) counted_.push_back(static_cast<int>(&ctx - contexts_.data()));
  }

  Nanos timeslice_, context_switch_, preemption_latency_, cache_refill_;
  std::vector<Context> contexts_;
  std::vector<int> counted_;  // every context whose `running` may be nonzero (repeats allowed)
  State state_ = State::idle;
  int holder_ = -1;             // context index holding (or being switched to) the device
  int last_ran_ = -1;           // context whose state is loaded
  int round_robin_start_ = -1;  // the idle pick's start before any context ran (seeded)
  Nanos slice_start_ = 0;       // when the holder got the device; slices follow back to back
  EventId slice_event_;
  EventId switch_event_;
  EventId pick_event_;  // on_idle_pick, pending at the instant of a submission to an idle device
};

}  // namespace gpumux
