// Injected faults (`faults:`): a fatal fault in a tenant at a given time kills it — and, where
// its device's strategy has the device as fault scope (an MPS server: models/strategies/),
// every client of that device. Each victim restarts after the fault's `recovery`, if any.
#include <algorithm>

#include "models/run/run.hpp"
#include "models/strategies/strategy.hpp"

namespace gpumux::run {

void Run::on_fault(std::size_t index) {
  const FaultSpec& fault = scenario.faults[index];
  int origin = -1;
  for (const auto& t : tenants) {
    if (t->spec().name == fault.tenant) origin = t->index();
  }
  Tenant& tenant = *tenants[static_cast<std::size_t>(origin)];
  // Blast radius: the tenant itself, plus every client of a device whose strategy's fault scope
  // is the device (the clients of one MPS server).
  std::vector<int> affected{origin};
  const char* note = "";
  for (const Device* device : tenant.devices()) {
    const Strategy& strategy =
        resolved.devices[static_cast<std::size_t>(device->index())].sharing.strategy();
    if (strategy.fault_scope() != FaultScope::device) continue;
    for (int c : device->clients()) {
      if (std::find(affected.begin(), affected.end(), c) == affected.end()) {
        affected.push_back(c);
        note = strategy.fault_note();
      }
    }
  }
  const Device& device = *tenant.devices().front();
  record_event(EventKind::fault, origin, device.index(),
               "fatal fault in " + fault.tenant + " on " + device.geometry().name +
                   (affected.size() > 1 ? note : ""));
  for (int t : affected) {
    Tenant& victim = *tenants[static_cast<std::size_t>(t)];
    victim.kill(EventKind::kill,
                victim.spec().name + " terminated by the fault in " + fault.tenant);
    if (fault.recovery) victim.schedule_restart(*fault.recovery);
  }
}

}  // namespace gpumux::run
