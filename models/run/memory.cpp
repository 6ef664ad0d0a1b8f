// Tenant memory: `memory` while the tenant runs, `memory_per_request` (+ `memory_per_token` x
// tokens: the KV cache) while each request runs, the same bytes on every GPU of the tenant. An
// allocation that does not fit its device (or its MPS pinned limit) is an OOM: an event, and the
// tenant is killed (its requests fail, its memory is freed, neighbours are untouched). Batched
// serving asks first (try_allocate) and waits or rejects instead.
#include <algorithm>

#include "models/run/run.hpp"
#include "models/run/tenant.hpp"
#include "models/workload/batching_policy.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::run {

std::int64_t Tenant::request_bytes(const Request& r) const {
  // Saturating: a request whose KV cache exceeds int64 bytes fits nowhere, as INT64_MAX does not.
  return whole_request_bytes(spec_.workload, r.input_tokens, r.output_tokens);
}

int Tenant::try_allocate(std::int64_t bytes, std::string& why) {
  if (bytes <= 0) return -1;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    if (devices_[d]->allocate(index_, bytes, why)) continue;
    for (std::size_t undo = 0; undo < d; ++undo) devices_[undo]->release(index_, bytes);
    return static_cast<int>(d);
  }
  return -1;
}

bool Tenant::allocate(std::int64_t bytes, const char* what) {
  if (bytes <= 0) return true;
  std::string why;
  const int refused = try_allocate(bytes, why);
  if (refused < 0) return true;
  const Device& device = *devices_[static_cast<std::size_t>(refused)];
  run_.record_event(EventKind::oom, index_, device.index(), spec_.name + ": " + what + " " + why);
  kill(EventKind::kill, spec_.name + " OOM-killed on " + device.geometry().name);
  return false;
}

void Tenant::release(std::int64_t bytes) {
  if (bytes <= 0) return;
  for (Device* d : devices_) d->release(index_, bytes);
}

void Tenant::release_all() {
  for (Device* d : devices_) {
    const std::int64_t held = d->client_memory(index_);
    if (held > 0) d->release(index_, held);
  }
}

}  // namespace gpumux::run
