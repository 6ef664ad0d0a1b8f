// Collectives of a multi-GPU (data-parallel) tenant: a kernel marked `collective` (e.g. an
// allreduce) starts on every GPU together, once each stream has reached it — a barrier, as NCCL
// collectives behave. Single-GPU tenants never wait.
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

}  // namespace gpumux::run
