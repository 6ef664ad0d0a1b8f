#pragma once
// SLO verdicts of a cluster replay's workload pods: the same verdicts as a single-node run
// (models/run/slo.hpp: met / missed / inconclusive from each target's confidence interval),
// computed in the device simulation of the pods (models/cluster/workload_pods.hpp) from the
// targets of each pod's `workload: {slo: ...}`. Read by the replay's table and JSON
// (cluster_output.hpp) and by `gpumux run CLUSTER.yaml --fail-on-slo`. Cost: linear in the pods.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/cluster/cluster_run.hpp"
#include "models/run/slo.hpp"

namespace gpumux::cluster {

/// The verdicts of every workload pod that carries an SLO, in pod order (TenantSlo::tenant is
/// the pod's name).
std::vector<TenantSlo> pod_slos(const ClusterResult& result);

/// A pod's verdict for the table: "met", "missed", "inconclusive", or "-" without an SLO.
std::string pod_verdict_text(const PodRecord& pod);

/// One line over the pods' verdicts (models/output/slo_tally.hpp), e.g. "3 met, 0 missed,
/// 1 inconclusive (run longer: --set cluster.duration=80s)"; "" when no pod has an SLO.
std::string pod_slo_tally(const ClusterResult& result, double confidence);

namespace wire {
/// The workload workers' pipe (workload_pods.cpp): VALUE's bytes appended to OUT, and a T read
/// from IN at AT (advanced; std::runtime_error on a short answer). Same process image, so raw
/// bytes.
template <class T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}
template <class T>
T take(const std::string& in, std::size_t& at) {
  T value{};
  if (at + sizeof value > in.size()) throw std::runtime_error("workload worker: short answer");
  std::memcpy(&value, in.data() + at, sizeof value);
  at += sizeof value;
  return value;
}
/// TEXT as its length and its bytes; read back by take_text (std::runtime_error when IN is
/// shorter than the length it declares).
inline void put_text(std::string& out, const std::string& text) {
  put(out, static_cast<std::uint64_t>(text.size()));
  out += text;
}
inline std::string take_text(const std::string& in, std::size_t& at) {
  const auto size = static_cast<std::size_t>(take<std::uint64_t>(in, at));
  if (at > in.size() || size > in.size() - at) {
    throw std::runtime_error("workload worker: short answer");
  }
  std::string text = in.substr(at, size);
  at += size;
  return text;
}
}  // namespace wire

/// The checks as bytes (the workload workers' pipe, workload_pods.cpp), appended to OUT; and
/// back, read from IN at AT (advanced). Throws std::runtime_error on a short answer.
void append_slo_checks(std::string& out, const std::vector<SloCheck>& checks);
std::vector<SloCheck> read_slo_checks(const std::string& in, std::size_t& at);

}  // namespace gpumux::cluster
