#pragma once
// Board power and the clock a power cap leaves (docs/strategies.md, "Power and clocks").
//
// Law. One board (a whole GPU, all its MIG instances together: they share its power) draws
//     P(x) = P_idle + (P_sm a + E_t R_t) x^e + E_byte b,        x = f / f_boost in [x_base, 1],
// a = the board's busy SM fraction (SMs held by resident blocks / the board's SMs, summed over
// its instances: DCGM's SM_ACTIVE of the board), b = its HBM traffic in bytes/s, P_sm = the
// dynamic draw of every SM busy at boost, E_byte = the energy per HBM byte moved, and e the
// clock exponent: dynamic power ~ activity C V^2 f, with the voltage proportional to the clock
// in the DVFS range (V ~ f, an assumption and a parameter) e = 3. The memory term does not
// scale with the SM clock (HBM has its own clock). R_t = the board's FP16/BF16 tensor FLOP rate
// at boost (FLOP/s) and E_t = the energy of one such FLOP at the boost voltage (J): what a busy
// SM does matters, a tensor-core GEMM's operands switch its multipliers, an SM waiting on memory
// switches none; the FLOP rate goes as x and the energy per FLOP as V^2 ~ x^2, so the term
// scales as x^e with P_sm's (E_t = 0: the term is off).
// When P(1) <= TDP the board runs at boost (x = 1). Otherwise the power manager lowers the clock
// to the x where P(x) = TDP (closed form for the power law):
//     x = ((TDP - P_idle - E_byte b) / (P_sm a + E_t R_t))^(1/e),
// floored at the base clock (x_base = f_base / f_boost; also where the bracket is <= 0).
// Effect on a kernel: its SM phase (its compute / latency-bound share) runs at x of its speed at
// boost, its memory phase is unchanged (contention law 2's sigma times x: DeviceGeometry::
// clock_ratio). So a compute-bound kernel takes 1/x longer, a memory-bound one no longer.
//
// Cost: every function is O(1).
#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

namespace gpumux {

/// A profile's power terms (`tdp:` and `power:` in a profile; a scenario's gpus[].power
/// overrides them). Units: W, J per byte. Not modelled (power never caps the clock) when tdp,
/// sm_dynamic or the clocks are unknown (0).
struct PowerParams {
  double tdp_w = 0;                   ///< board power limit (TDP), W
  double idle_w = 0;                  ///< P_idle: the board's draw with nothing running, W
  double sm_dynamic_w = 0;            ///< P_sm: every SM busy at boost, dynamic draw, W
  double hbm_joules_per_byte = 0;     ///< E_byte, J/B
  double clock_exponent = 3;          ///< e: dynamic power ~ f^e (3 when V ~ f)
  double tensor_joules_per_flop = 0;  ///< E_t: one FP16/BF16 tensor FLOP at boost, J (0: off)
  double base_clock_mhz = 0;          ///< the floor of a capped clock
  double boost_clock_mhz = 0;         ///< f_boost
  bool modelled() const { return tdp_w > 0 && sm_dynamic_w > 0 && boost_clock_mhz > 0; }
  /// x_base = f_base / f_boost (0 when the base clock is unknown: no floor but x > 0).
  double min_clock_ratio() const {
    return boost_clock_mhz > 0 ? std::clamp(base_clock_mhz / boost_clock_mhz, 0.0, 1.0) : 0.0;
  }
};

/// A scenario's `power:` in a gpus[] entry: `none` (off) or values replacing the profile's.
struct PowerOverrides {
  bool off = false;
  /// As written (W, pJ/B, a number), so the scenario writes back the same text.
  std::optional<double> tdp_w, idle_w, sm_dynamic_w, hbm_picojoules_per_byte, clock_exponent,
      tensor_picojoules_per_flop;
  bool any() const {
    return off || tdp_w || idle_w || sm_dynamic_w || hbm_picojoules_per_byte || clock_exponent ||
           tensor_picojoules_per_flop;
  }
  PowerParams apply(PowerParams p) const {
    if (tdp_w) p.tdp_w = *tdp_w;
    if (idle_w) p.idle_w = *idle_w;
    if (sm_dynamic_w) p.sm_dynamic_w = *sm_dynamic_w;
    if (hbm_picojoules_per_byte) p.hbm_joules_per_byte = *hbm_picojoules_per_byte * 1e-12;
    if (clock_exponent) p.clock_exponent = *clock_exponent;
    if (tensor_picojoules_per_flop) p.tensor_joules_per_flop = *tensor_picojoules_per_flop * 1e-12;
    if (off) p.tdp_w = 0;
    return p;
  }
};

/// The number of a value written with `unit` after it ("300W", "1410MHz", "31pJ/B"), nullopt
/// when the text is not a finite number followed by exactly that unit. O(length).
inline std::optional<double> parse_with_unit(const std::string& text, std::string_view unit) {
  if (text.size() <= unit.size() || text.compare(text.size() - unit.size(), unit.size(), unit))
    return std::nullopt;
  const std::string number = text.substr(0, text.size() - unit.size());
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != number.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

/// The clock-scaled dynamic draw at boost, P_sm a + E_t R_t, W.
inline double dynamic_power_at_boost(const PowerParams& p, double activity,
                                     double tensor_flops_per_s) {
  return p.sm_dynamic_w * activity + p.tensor_joules_per_flop * tensor_flops_per_s;
}

/// P(x), W: the board's draw at busy SM fraction `activity`, HBM traffic `hbm_bytes_per_s`,
/// clock ratio `x` and FP16/BF16 tensor FLOP rate at boost `tensor_flops_per_s`.
inline double board_power(const PowerParams& p, double activity, double hbm_bytes_per_s, double x,
                          double tensor_flops_per_s = 0) {
  return p.idle_w +
         dynamic_power_at_boost(p, activity, tensor_flops_per_s) * std::pow(x, p.clock_exponent) +
         p.hbm_joules_per_byte * hbm_bytes_per_s;
}

/// x: the clock ratio f / f_boost the cap leaves (1 when P(1) <= TDP or power is not modelled).
inline double capped_clock_ratio(const PowerParams& p, double activity, double hbm_bytes_per_s,
                                 double tensor_flops_per_s = 0) {
  if (!p.modelled() ||
      board_power(p, activity, hbm_bytes_per_s, 1.0, tensor_flops_per_s) <= p.tdp_w)
    return 1.0;
  const double room = p.tdp_w - p.idle_w - p.hbm_joules_per_byte * hbm_bytes_per_s;
  const double floor = p.min_clock_ratio();
  if (!(room > 0)) return std::max(floor, 1e-3);
  const double x = std::pow(room / dynamic_power_at_boost(p, activity, tensor_flops_per_s),
                            1.0 / p.clock_exponent);
  return std::clamp(x, std::max(floor, 1e-3), 1.0);
}

}  // namespace gpumux
