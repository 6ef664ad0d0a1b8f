#pragma once
// A sharing strategy as one unit: the descriptor every strategy registers (registry.hpp), and
// the only thing the rest of gpumux knows about it. A descriptor has
//   * its name and the spellings `sharing.mode` accepts (`time-slicing`, `time_slicing`, ...);
//   * its parameter block (a StrategyParams subclass of its own): the `sharing:` keys it owns,
//     read with file:line:column errors, defaulted from the device profile, fitted to each
//     device (memory, MIG compute slices, the clients placed on it) and emitted — only its keys;
//   * the device it builds (a models/gpu Device subclass with the physics-side SharingLimits
//     it fills: client cap, SM share, memory limit, time-slicing timings);
//   * its fault scope (what a fatal fault in one client takes down);
//   * its `gpumux compare` variants (the whole-GPU variant and `mig+NAME`);
//   * the profile keys it relies on (a result's notes name those that are assumptions).
// `mode` and `replicas` are common to every strategy and read by the loader (SharingSpec).
// Adding a strategy: a folder models/strategies/NAME/ with its descriptor, plus one line in
// registry.cpp (CONTRIBUTING.md, "Adding a strategy").
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/config/yaml_reader.hpp"
#include "models/gpu/device.hpp"
#include "models/gpu/sharing_limits.hpp"
#include "models/strategies/params.hpp"

namespace gpumux {

struct DeviceProfile;
class Simulator;

/// What a fatal fault in one client takes down on the devices it uses.
enum class FaultScope {
  client,  ///< only the faulting client (its own context; exclusive, time-slicing, MIG)
  device,  ///< every client of the device (one MPS server: a fault kills all its clients)
};

/// One device a strategy's parameter block is fitted to (after tenants are placed).
struct DeviceFit {
  std::int64_t memory = 0;     ///< bytes of the device (the whole GPU or the MIG instance)
  int compute_slices = 0;      ///< of the MIG instance; 0 for a whole GPU
  int gpu_compute_slices = 0;  ///< of the whole GPU
  int clients = 0;             ///< tenants placed on the device
  int replicas = 0;            ///< `sharing.replicas` (0 = not set)
  /// Profile keys the strategy's fill_defaults used (a limit taken from the profile may be
  /// scaled to the device; an explicit one is not).
  const std::vector<std::string>* profile_defaults = nullptr;
};

/// One `sharing:` key of a strategy, declared once (as ns-3's AddAttribute and SST's
/// SST_ELI_DOCUMENT_PARAMS declare a parameter): its name, unit, default, valid values and one
/// line of doc, and the three functions that read it from YAML (file:line:column errors), write
/// it when set and copy it between two blocks of the strategy. The strategy's parameters() table
/// is the only place a key is spelled: keys(), read(), emit(), copy_key(), `gpumux strategies`,
/// the misplaced-key hints of a `gpus:` entry and docs/strategies.md's reference tables come
/// from it.
struct ParamSpec {
  std::string key;           ///< the `sharing:` key
  std::string unit;          ///< "%", "bytes", "duration", "count", "choice", "version"
  std::string default_text;  ///< what an unset key means, e.g. "100" or "profile `timeslice`"
  std::string range;         ///< valid values, e.g. "(0, 100]"
  std::string doc;           ///< one line
  void (*read)(yaml::Context& ctx, const yaml::Field& field, StrategyParams& params);
  void (*emit)(YAML::Emitter& out, const std::string& key, const StrategyParams& params);
  void (*copy)(const StrategyParams& from, StrategyParams& to);
};

/// ParamSpec::copy for the block member `Member` (e.g. &MpsParams::max_clients).
template <typename Pointer>
struct MemberOf;
template <typename Block, typename Value>
struct MemberOf<Value Block::*> {
  using block = Block;
};

/// What a strategy allows on one device: the questions validate's capacity check
/// (models/plan/capacity_check.cpp) and the planner (models/plan/planner_prune.cpp,
/// planner_rank.cpp) ask the strategy (Strategy::limits) instead of naming strategies or
/// restating their caps.
struct DeviceLimits {
  /// What the device itself applies (Strategy::sharing_limits): its client limit (the MPS
  /// server's; exclusive: 1), each client's SM share (client_sm_cap) and memory limit.
  SharingLimits device;
  /// The most clients the device takes: the device's client limit and `sharing.replicas`, the
  /// smaller of those set; 0 = no limit.
  int max_clients = 0;
  /// Clients take turns holding the whole device (time slices) instead of running at once.
  bool time_sliced = false;
  /// A fatal fault in one client takes down every client of the device (FaultScope::device).
  bool shared_fault_domain = false;
  /// Several clients allocate from one pool with no per-client cap: memory is not isolated.
  bool clients_share_memory() const {
    return max_clients != 1 && !device.client_memory_limit.has_value();
  }
};

/// How `gpumux compare` offers a strategy (built by models/scenario/strategy_variants.cpp).
struct CompareVariants {
  /// Names of the whole-GPU variant: every GPU shared whole under this strategy (MIG layouts
  /// dropped, tenants on "gpuX/i" move to "gpuX", replicas lifted). Empty: none.
  std::vector<std::string> whole_gpu;
  /// The whole-GPU variant gives every tenant a GPU of its own instead (exclusive: the
  /// dedicated baseline, more GPUs).
  bool dedicated = false;
  /// Offers `mig+NAME`: the scenario's MIG layouts with this strategy inside every instance.
  bool inside_mig = true;
};

class Strategy {
 public:
  virtual ~Strategy() = default;

  // --- identity ---
  /// The canonical `sharing.mode` value, e.g. "time-slicing".
  virtual const char* name() const = 0;
  /// Every spelling `mode:` accepts, the canonical one first.
  virtual std::vector<std::string> spellings() const { return {name()}; }
  /// One line for `gpumux strategies`.
  virtual const char* summary() const = 0;

  // --- parameter block ---
  /// The `sharing:` keys this strategy owns (besides `mode` and `replicas`), each declared once
  /// (ParamSpec), in the order they are read and emitted.
  virtual const std::vector<ParamSpec>& parameters() const;
  /// The names of parameters(). O(keys).
  std::vector<std::string> keys() const;
  /// A block with nothing set (what `mode: NAME` alone means before resolution).
  virtual std::unique_ptr<StrategyParams> make_params() const = 0;
  /// Reads this strategy's keys from a `sharing:` mapping into `params` (each ParamSpec::read).
  void read(yaml::Context& ctx, const yaml::MapReader& map, StrategyParams& params) const;
  /// Writes the keys that are set (inside the `sharing:` mapping, after mode and replicas).
  void emit(YAML::Emitter& out, const StrategyParams& params) const;
  /// Copies one key (of keys()) from `from` to `to`; false for a key it does not own.
  bool copy_key(const std::string& key, const StrategyParams& from, StrategyParams& to) const;

  // --- resolution ---
  /// Fills unset values from the device profile; returns the profile keys it used.
  virtual std::vector<std::string> fill_defaults(StrategyParams& /*params*/, int /*replicas*/,
                                                 const DeviceProfile& /*profile*/) const {
    return {};
  }
  /// Fits the (filled) block to one device; called once per device after placement.
  virtual void fit_device(StrategyParams& /*params*/, const DeviceFit& /*device*/) const {}
  /// Why `clients` tenants may not share the device (one line), or "" when they may.
  virtual std::string placement_error(const std::string& /*device*/, int /*clients*/) const {
    return "";
  }
  /// Why a tenant asking for `gpus` GPUs may not use this device, or "" when it may.
  virtual std::string multi_gpu_error(int /*gpus*/) const { return ""; }

  // --- the device ---
  /// The limits the physics takes from a (filled, fitted) block: the client limit, each
  /// client's SM share and memory limit, the time-slicing timings. make_device builds its device
  /// with them, and validate's capacity check reads the same (models/plan/capacity_check.cpp),
  /// so neither restates a strategy's caps. O(1).
  virtual SharingLimits sharing_limits(const StrategyParams& params) const = 0;
  virtual std::unique_ptr<Device> make_device(Simulator& sim, DeviceGeometry geometry,
                                              const StrategyParams& params) const = 0;
  /// Clients take turns holding the device (a TimeSlicingDevice) rather than running at once.
  virtual bool time_sliced() const { return false; }
  /// What this strategy allows on `device` with the (filled, fitted) block `params`: the
  /// device's limits (sharing_limits), the most clients (those and `device.replicas`), time
  /// slicing, the fault domain. Validate's capacity check and the planner ask this. O(1).
  DeviceLimits limits(const StrategyParams& params, const DeviceFit& device) const;

  // --- faults, notes, compare ---
  virtual FaultScope fault_scope() const { return FaultScope::client; }
  /// Appended to the fault event when the scope took down more than the faulting client.
  virtual const char* fault_note() const { return ""; }
  /// (profile key, `sharing:` key) of the profile values this strategy relies on; a result's
  /// notes name those the profile marks as assumptions and the scenario did not set.
  virtual std::vector<std::pair<std::string, std::string>> profile_keys() const { return {}; }
  virtual CompareVariants compare() const { return {{name()}, false, true}; }
};

/// The limits of `strategy` on one device of GPU `profile` when a scenario writes only its
/// `mode` and `replicas` (what the planner's configurations write): a fresh block filled from
/// the profile and fitted to `device` (resolve_scenario's steps), then Strategy::limits. O(keys).
DeviceLimits default_limits(const Strategy& strategy, const DeviceProfile& profile,
                            DeviceFit device);

/// The parameter block of `params` as the strategy's own type (a logic_error if it is not).
template <typename Params>
const Params& params_as(const StrategyParams& params) {
  const auto* typed = dynamic_cast<const Params*>(&params);
  if (typed == nullptr) throw std::logic_error("strategy parameter block of another strategy");
  return *typed;
}
template <typename Params>
Params& params_as(StrategyParams& params) {
  auto* typed = dynamic_cast<Params*>(&params);
  if (typed == nullptr) throw std::logic_error("strategy parameter block of another strategy");
  return *typed;
}

/// ParamSpec::copy of the block member `Member` (&MpsParams::max_clients, ...).
template <auto Member>
void copy_member(const StrategyParams& from, StrategyParams& to) {
  using Block = typename MemberOf<decltype(Member)>::block;
  params_as<Block>(to).*Member = params_as<Block>(from).*Member;
}

/// A parameter block type with value semantics (clone) — derive blocks from this.
template <typename Derived>
struct ParamsOf : StrategyParams {
  std::unique_ptr<StrategyParams> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

}  // namespace gpumux
