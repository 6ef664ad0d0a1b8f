// Provenance: what a result was made from — scenario name, seed, simulated time and event
// count, the resolved scenario as YAML, the content hash of every device profile used — and the
// notes on which of the profile defaults this run relied on are assumptions, not measurements.
#include <algorithm>

#include "models/gpu/device_profile.hpp"
#include "models/run/run.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux::run {

void Run::fill_provenance(Nanos end) {
  result.scenario_name = scenario.name;
  result.seed = scenario.seed;
  result.sim_time_ns = end;
  result.warmup_ns = scenario.warmup;
  result.duration_ns = scenario.duration;
  result.events = events_processed();
  result.events_inline = events_inline();
  result.components = components_.size();
  // The resolved scenario's YAML (result.scenario_yaml) is emitted by execute() after wall_s is
  // taken: it is output, not simulation (issue 12).
  for (const DeviceProfile* p : resolved.gpu_profiles)
    result.calibration[p->name] = p->content_hash;
  add_assumption_notes();
}

// Only the parameters the run's strategies use, and only those the scenario did not set itself.
void Run::add_assumption_notes() {
  std::vector<int> noted;
  for (const ResolvedDevice& d : resolved.devices) {
    if (std::find(noted.begin(), noted.end(), d.gpu) != noted.end()) continue;
    const DeviceProfile& profile = *resolved.gpu_profiles[static_cast<std::size_t>(d.gpu)];
    const GpuSpec& gpu = scenario.gpus[static_cast<std::size_t>(d.gpu)];
    auto assumed = [&profile](const std::string& key) {
      return std::find(profile.assumed.begin(), profile.assumed.end(), key) !=
             profile.assumed.end();
    };
    // (profile key, scenario `sharing:` key) of the parameters each strategy uses.
    const std::vector<std::pair<std::string, std::string>> relevant =
        d.sharing.strategy().profile_keys();
    std::string used;
    int count = 0;
    for (const auto& [profile_key, scenario_key] : relevant) {
      if (std::find(d.profile_defaults.begin(), d.profile_defaults.end(), profile_key) ==
              d.profile_defaults.end() ||
          !assumed(profile_key)) {
        continue;
      }
      used += (used.empty() ? "" : ", ") + scenario_key;
      ++count;
    }
    if (!used.empty()) {
      result.notes.push_back(
          gpu.name + " (" + profile.name + ", " + d.sharing.mode_name() + "): " + used +
          " from the profile " + (count > 1 ? "are assumptions" : "is an assumption") +
          ", not measured; sweep with --set " + gpu.where.key_path + ".sharing.KEY=VALUE");
    }
    if (d.mig_instance >= 0) {
      std::string note = mig_partition().assumption_note(gpu.name, profile);
      if (!note.empty()) result.notes.push_back(std::move(note));
    }
    noted.push_back(d.gpu);
  }
}

}  // namespace gpumux::run
