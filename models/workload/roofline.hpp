#pragma once
// The roofline's phase split, one definition for every modelled kernel (the workload catalog's,
// catalog_model.hpp "Boundedness", and an LLM card's KernelRoofline, kernel_spec.hpp): a kernel
// whose busy phase (compute, or the busiest SM's latency-bound path) of t_busy seconds overlaps
// its memory phase of t_memory seconds (Williams et al., "Roofline", CACM 2009) lasts
// t = max(t_busy, t_memory); of that time its memory phase is m = t_memory / t (memory_bound)
// and its busy phase c = t_busy / t (busy_share), the larger 1. The device physics stretches
// each phase on a shared GPU (models/gpu/contention_law.hpp, law 2). O(1).
#include <algorithm>

namespace gpumux {

struct RooflinePhases {
  double memory_bound = 0;  ///< t_memory / max(t_busy, t_memory); 0 when both are 0
  double busy_share = 1;    ///< t_busy / max(t_busy, t_memory); 1 when both are 0
};

inline RooflinePhases roofline_phases(double t_busy, double t_memory) {
  RooflinePhases p;
  const double longer = std::max(t_busy, t_memory);
  p.memory_bound = longer > 0 ? t_memory / longer : 0.0;
  p.busy_share = longer > 0 ? t_busy / longer : 1.0;
  return p;
}

}  // namespace gpumux
