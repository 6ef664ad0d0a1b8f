// Collectives of a multi-GPU (data-parallel) tenant: a kernel marked `collective` (e.g. an
// allreduce) starts on every GPU together, once each stream has reached it — a barrier, as NCCL
// collectives behave — and ends on every GPU together, when the last rank's kernel has done its
// work: no rank has the reduced result before every rank contributed, so each stream records
// the collective's end (/kernels finish_ns) and goes on at end = max over ranks. Single-GPU
// tenants never wait.
// assumption: a rank that finished its share first leaves its device while it waits (its SMs go
// to its neighbours). A real NCCL kernel spins on its channels' blocks until the peers' data
// arrives, holding those SMs; no measurement of what it holds while spinning is modelled.
#include "models/run/tenant.hpp"

namespace gpumux::run {

bool Tenant::barrier(Stream& stream) {
  LaunchSequence& sequence = *stream.sequence;
  const int streams = static_cast<int>(sequence.streams.size());
  if (!sequence.specs[stream.next_kernel]->collective) return false;
  if (++sequence.at_barrier < streams) return true;  // others are still on their way
  sequence.at_barrier = 0;
  for (Stream& s : sequence.streams) issue_next_kernel(s);
  return true;
}

bool Tenant::wait_at_collective_end(Stream& stream, Nanos now) {
  LaunchSequence& sequence = *stream.sequence;
  if (devices_.size() < 2 || !sequence.specs[stream.next_kernel]->collective) return false;
  if (++sequence.collective_done < static_cast<int>(sequence.streams.size())) return true;
  sequence.collective_done = 0;
  // Every stream ends it now. Only the last stream's end can finish the sequence (the others
  // stand at this collective), so the sequence outlives the loop.
  for (Stream& s : sequence.streams) end_kernel(s, now);
  return true;
}

}  // namespace gpumux::run
