#include "models/gpu/contention_law.hpp"

#include "models/gpu/device_profile.hpp"

namespace gpumux {

const std::vector<ContentionLaw>& contention_laws() {
  static const std::vector<ContentionLaw> laws = {
      {"residency",
       "SM residency with block retirement (urgent kernels take SMs at wave boundaries) and "
       "block co-residency (kernels with a known block footprint share SMs' leftover "
       "resources and issue slots), the roofline rate bound with a per-SM HBM ceiling and "
       "whole waves, overlapped compute and memory phases for roofline kernels (a busy share), "
       "the L2 capacity law against the whole GPU's L2 (a MIG slice keeps its own), max-min "
       "HBM sharing",
       true, true, true, true, true, true},
      {"fluid",
       "the law of the last release: as residency without the per-SM HBM ceiling (a kernel on "
       "any number of SMs may draw the device's whole HBM bandwidth), whole-SM residency only, "
       "every kernel's compute and memory phases serial, and with a lone kernel keeping the L2 "
       "of its solo run on a MIG slice",
       false, false, false, false, false, false},
  };
  return laws;
}

const ContentionLaw* find_contention_law(std::string_view name) {
  for (const ContentionLaw& law : contention_laws()) {
    if (law.name == name) return &law;
  }
  return nullptr;
}

const ContentionLaw& default_contention_law() { return contention_laws().front(); }

const ContentionLaw* contention_law_or_default(std::string_view name) {
  return name.empty() ? &default_contention_law() : find_contention_law(name);
}

void set_law_terms(DeviceGeometry& g, const DeviceProfile& profile, double slice_fraction,
                   const ContentionLaw& law) {
  g.l2_bytes = static_cast<double>(profile.l2_cache) * slice_fraction;
  const double hbm = achievable_hbm_bandwidth(profile);
  g.l2_cost_ratio = profile.l2_bandwidth > 0 ? std::min(1.0, hbm / profile.l2_bandwidth) : 1.0;
  g.discrete_waves = law.discrete_waves;
  g.block_retirement = law.block_retirement;
  g.co_residency = law.co_residency;
  g.overlapped_phases = law.overlapped_phases;
  g.sm_limits = law.co_residency ? profile.sm_limits : SmLimits{};
  g.l2_reference = law.own_l2 ? static_cast<double>(profile.l2_cache) : 0.0;
  g.sm_bandwidth = law.per_sm_bandwidth && profile.sm_bandwidth > 0 && hbm > 0
                       ? profile.sm_bandwidth / hbm
                       : 0.0;
}

DeviceGeometry make_geometry(std::string name, std::string profile_name, const DeviceProfile& gpu,
                             int sms, double slice_fraction, std::int64_t memory,
                             double reserved_fraction, const ContentionLaw& law) {
  DeviceGeometry g;
  g.name = std::move(name);
  g.profile = std::move(profile_name);
  g.gpu_sms = gpu.sms;
  g.sms = sms;
  g.bandwidth = slice_fraction;
  g.memory = memory;
  g.reserved_fraction = reserved_fraction;
  set_law_terms(g, gpu, slice_fraction, law);
  return g;
}

}  // namespace gpumux
