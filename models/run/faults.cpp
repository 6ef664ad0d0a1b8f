// Injected faults (`faults:`): a fatal fault in a tenant at a given time kills it — and, under
// MPS, every client of the server it is a client of (one MPS server's failure is shared). Each
// victim restarts after the fault's `recovery`, if any.
#include <algorithm>

#include "models/run/run.hpp"

namespace gpumux::run {

void Run::on_fault(std::size_t index) {
  const FaultSpec& fault = scenario.faults[index];
  int origin = -1;
  for (const auto& t : tenants) {
    if (t->spec().name == fault.tenant) origin = t->index();
  }
  Tenant& tenant = *tenants[static_cast<std::size_t>(origin)];
  // Blast radius: the tenant itself, plus every client of an MPS server it is a client of.
  std::vector<int> affected{origin};
  for (const Device* device : tenant.devices()) {
    if (!device->limits().shared_server) continue;
    for (int c : device->clients()) {
      if (std::find(affected.begin(), affected.end(), c) == affected.end()) affected.push_back(c);
    }
  }
  const Device& device = *tenant.devices().front();
  record_event(EventKind::fault, origin, device.index(),
               "fatal fault in " + fault.tenant + " on " + device.geometry().name +
                   (affected.size() > 1 ? " (MPS: every client of the server fails)" : ""));
  for (int t : affected) {
    Tenant& victim = *tenants[static_cast<std::size_t>(t)];
    victim.kill(EventKind::kill, victim.spec().name + " terminated by the fault in " +
                                     fault.tenant);
    if (fault.recovery) victim.schedule_restart(*fault.recovery);
  }
}

}  // namespace gpumux::run
