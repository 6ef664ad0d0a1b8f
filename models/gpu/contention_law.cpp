#include "models/gpu/contention_law.hpp"

#include <utility>

#include "models/gpu/device_profile.hpp"
#include "models/gpu/sharing_law.hpp"

namespace gpumux {

namespace {

std::vector<const ContentionLaw*>& registered_laws() {
  // The factory: one line per law, the default first (sharing_law.hpp, "Adding a law").
  static const ResidencyLaw residency;
  static const FluidLaw fluid;
  // assumption: spread 1, the fully desynchronised limit (a round's blocks end uniformly over the
  // whole round); no source publishes per-block end times of these kernels, and 1 bounds the
  // effect from above (0 is "residency"). Not fitted (docs/strategies.md).
  static const StaggeredLaw staggered(1.0);
  static std::vector<const ContentionLaw*> laws = {&residency, &fluid, &staggered};
  return laws;
}

}  // namespace

const std::vector<const ContentionLaw*>& contention_laws() { return registered_laws(); }

std::vector<std::string> contention_law_names() {
  std::vector<std::string> names;
  for (const ContentionLaw* law : contention_laws()) names.emplace_back(law->name());
  return names;
}

const ContentionLaw* find_contention_law(std::string_view name) {
  for (const ContentionLaw* law : contention_laws()) {
    if (law->name() == name) return law;
  }
  return nullptr;
}

const ContentionLaw& default_contention_law() { return *contention_laws().front(); }

const ContentionLaw* contention_law_or_default(std::string_view name) {
  return name.empty() ? &default_contention_law() : find_contention_law(name);
}

bool register_contention_law(const ContentionLaw& law) {
  if (find_contention_law(law.name()) != nullptr) return false;
  registered_laws().push_back(&law);
  return true;
}

void set_law_terms(DeviceGeometry& g, const DeviceProfile& profile, double slice_fraction,
                   const ContentionLaw& law) {
  // Law 3's capacity and rho, the same under every law.
  g.l2_bytes = static_cast<double>(profile.l2_cache) * slice_fraction;
  const double hbm = achievable_hbm_bandwidth(profile);
  g.l2_cost_ratio = profile.l2_bandwidth > 0 ? std::min(1.0, hbm / profile.l2_bandwidth) : 1.0;
  law.set_terms(g, profile, slice_fraction);
  g.law = &law;
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
