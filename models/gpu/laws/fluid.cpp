// The "fluid" law (sharing_law.hpp), the law of the last release: resident blocks hold their SMs
// until the kernel ends (law 1 alone: no retirement, no co-residency), no per-SM HBM ceiling,
// every kernel's phases serial (an overlapped kernel read as m_s = m / (c + m)), and L_ref = the
// device's own L2, so a lone kernel never feels a MIG slice's smaller L2.
#include "models/gpu/sharing_law.hpp"

namespace gpumux {

std::string_view FluidLaw::summary() const {
  return "the law of the last release: as residency without the per-SM HBM ceiling (a kernel on "
         "any number of SMs may draw the device's whole HBM bandwidth), whole-SM residency only, "
         "every kernel's compute and memory phases serial, and with a lone kernel keeping the L2 "
         "of its solo run on a MIG slice";
}

void FluidLaw::set_terms(DeviceGeometry& g, const DeviceProfile& /*profile*/,
                         double /*slice_fraction*/) const {
  g.discrete_waves = false;
  g.overlapped_phases = false;
  g.sm_limits = SmLimits{};
  g.l2_reference = 0.0;
  g.sm_bandwidth = 0.0;
}

}  // namespace gpumux
