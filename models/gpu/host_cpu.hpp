#pragma once
// The host CPU beside a GPU, as one number: its single-thread speed relative to a reference
// host (docs/workloads.md, "Host CPU"). The host time a model fits on one machine (an eager
// engine's dispatch per kernel, an engine's CPU per iteration, a runtime's dispatch per operator,
// a serving front end) is single-thread CPU work, so on another host it takes
//
//   t_host = t_ref x s_fit / s                                                          [ns]
//
// where t_ref is the time fitted or assumed on a host of speed s_fit (1 for every value in
// kernel-families.yaml and engine_cpu.hpp: they are fitted on DGX A100 hosts, the reference;
// a profile's `host_per_request` on the profile's own host, s_fit = the profile's speed) and s
// the speed of the host the tenant runs on: its GPU profile's `host_cpu:` unless the tenant's
// `host: {cpu_speed: ...}` names another. A time the user measured (`host: {per_op: ...}`,
// `host_per_op: 30us`, `engine_cpu: {per_iteration: ...}`) is their host's: never scaled.
//
// The speed law: s = (f_max / f_max,ref) x (IPC / IPC_ref), the core's highest boost clock
// times its instructions per clock, both relative to the reference's (AMD EPYC 7742: Zen 2 at
// 3.4 GHz). A Python dispatch loop or an engine's scheduler runs on one core while the others
// are mostly idle, so the core reaches its single-core boost (assumption).
//
// Named hosts:
//   dgx-a100  2x AMD EPYC 7742, 3.4 GHz max boost, Zen 2: the reference, s = 1.
//             source: NVIDIA DGX A100 User Guide, "Hardware Overview": "Dual AMD Rome 7742, 128
//             cores total, 2.25 GHz (base), 3.4 GHz (max boost)"
//             (https://docs.nvidia.com/dgx/dgxa100-user-guide/introduction-to-dgxa100.html)
//   dgx-h100  2x Intel Xeon Platinum 8480C, 3.8 GHz max turbo, Golden Cove:
//             s = 3.8 / 3.4 x 1.19 x 1.19 = 1.583.
//             source: NVIDIA DGX H100 User Guide, "Hardware Overview": "2x Intel Xeon Platinum
//             8480C PCIe Gen5 CPU with 56 cores each 2.0/2.9/3.8 GHz (base/all core turbo/Max
//             turbo)"
//             (https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html);
//             source: AMD's Zen 3 launch (October 2020): +19 % instructions per clock over Zen 2
//             (AnandTech, "AMD Zen 3 Ryzen Deep Dive Review",
//             https://www.anandtech.com/show/16214/amd-zen-3-ryzen-deep-dive-review-5950x-5900x-5800x-and-5700x-tested);
//             source: Intel Architecture Day 2021: Golden Cove (Sapphire Rapids' core) +19 % IPC
//             over Cypress Cove at iso frequency (AnandTech, "A Deep Dive into Intel's Alder Lake
//             Microarchitectures", https://www.anandtech.com/show/16881);
//             assumption: Cypress Cove's IPC equals Zen 3's (the two were within a few per cent
//             per clock in AnandTech's SPEC2017 runs, Rocket Lake review, 2021).
//             Check, not fit: the eager vLLM dispatch fitted on each DGX alone differs by 1.52x
//             (calibration/fit/LLM-DISPATCH.md), 4 % from 1.583.
//   generic   a server whose CPU the profile does not name: s = 1 (assumption: a host of the
//             DGX A100's generation; Vidur's A40 server ran the same engine 1.34-1.69x slower,
//             calibration/fit/ENGINE-CPU.md: measure yours and write `host: {cpu_speed: ...}`).
// Cost: O(1) per look-up.
#include <cmath>
#include <string>

#include "sim/core/time.hpp"

namespace gpumux {

/// One named host CPU: its relative single-thread speed and where the number comes from.
struct NamedHostCpu {
  const char* name;        ///< "dgx-a100", "dgx-h100", "generic"
  const char* cpu;         ///< the processor, e.g. "2x AMD EPYC 7742"
  double speed;            ///< single-thread speed relative to the DGX A100's host (law above)
  const char* provenance;  ///< one line: the figures it is made of
};

/// The reference host's name (speed 1).
inline constexpr const char* kReferenceHostCpu = "dgx-a100";
/// A profile that names no host: generic (speed 1, assumption above).
inline constexpr const char* kDefaultHostCpu = "generic";

inline constexpr NamedHostCpu kNamedHostCpus[] = {
    {"dgx-a100", "2x AMD EPYC 7742 (Zen 2, 3.4 GHz max boost)", 1.0,
     "source: NVIDIA DGX A100 User Guide (3.4 GHz max boost); the reference"},
    {"dgx-h100", "2x Intel Xeon Platinum 8480C (Golden Cove, 3.8 GHz max turbo)",
     3.8 / 3.4 * 1.19 * 1.19,
     "source: NVIDIA DGX H100 User Guide (3.8 GHz max turbo), AMD Zen 3 +19 % IPC over Zen 2, "
     "Intel Golden Cove +19 % IPC over Cypress Cove; assumption: Cypress Cove IPC = Zen 3's"},
    {"generic", "a server CPU the profile does not name", 1.0,
     "assumption: a host of the DGX A100's generation (measure yours: host: {cpu_speed: ...})"},
};

/// The named host `name`, or nullptr. O(1).
inline const NamedHostCpu* named_host_cpu(const std::string& name) {
  for (const NamedHostCpu& h : kNamedHostCpus) {
    if (name == h.name) return &h;
  }
  return nullptr;
}

/// The names named_host_cpu() knows, comma separated (for messages).
inline std::string named_host_cpu_list() {
  std::string out;
  for (const NamedHostCpu& h : kNamedHostCpus)
    out += (out.empty() ? "" : ", ") + std::string(h.name);
  return out;
}

/// Bounds of a relative speed a scenario or profile may give: a host 20x slower or faster than
/// the reference is not a server CPU (assumption; the bound keeps t_host finite).
inline constexpr double kMinHostCpuSpeed = 0.05;
inline constexpr double kMaxHostCpuSpeed = 20.0;

/// t_host = t_ref x fitted_speed / speed (law above), rounded to whole ns. Precondition: both
/// speeds > 0. speed == fitted_speed returns t_ref exactly. O(1).
inline Nanos host_cpu_time(Nanos t_ref, double fitted_speed, double speed) {
  if (speed == fitted_speed) return t_ref;
  return static_cast<Nanos>(std::llround(static_cast<double>(t_ref) * fitted_speed / speed));
}

/// The same law on seconds (no rounding). O(1).
inline double host_cpu_seconds(double t_ref, double fitted_speed, double speed) {
  return speed == fitted_speed ? t_ref : t_ref * fitted_speed / speed;
}

}  // namespace gpumux
