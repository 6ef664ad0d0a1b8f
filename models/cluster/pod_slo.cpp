#include "models/cluster/pod_slo.hpp"

#include "models/output/slo_tally.hpp"

namespace gpumux::cluster {
namespace {

using wire::put;
using wire::put_text;
using wire::take;
using wire::take_text;

// An optional int64 as a presence byte and the value.
void put_optional(std::string& out, const std::optional<std::int64_t>& v) {
  put(out, static_cast<std::uint8_t>(v.has_value()));
  put(out, v.value_or(0));
}
std::optional<std::int64_t> take_optional(const std::string& in, std::size_t& at) {
  const auto present = take<std::uint8_t>(in, at);
  const auto value = take<std::int64_t>(in, at);
  return present ? std::optional<std::int64_t>(value) : std::nullopt;
}

}  // namespace

std::vector<TenantSlo> pod_slos(const ClusterResult& result) {
  std::vector<TenantSlo> out;
  for (const PodRecord& p : result.pods) {
    if (p.workload_slo.empty()) continue;
    out.push_back(TenantSlo{p.name, p.workload_slo});
  }
  return out;
}

std::string pod_verdict_text(const PodRecord& pod) {
  if (pod.workload_slo.empty()) return "-";
  return verdict_name(TenantSlo{pod.name, pod.workload_slo}.verdict());
}

std::string pod_slo_tally(const ClusterResult& result, double confidence) {
  return slo_tally_text(tally_slos(pod_slos(result), confidence), result.workload_duration,
                        result.workload_warmup, "cluster.duration");
}

void append_slo_checks(std::string& out, const std::vector<SloCheck>& checks) {
  put(out, static_cast<std::uint64_t>(checks.size()));
  for (const SloCheck& c : checks) {
    put_text(out, c.key);
    put_text(out, c.label);
    put(out, c.target_ns);
    put_optional(out, c.value_ns);
    put(out, c.samples);
    put_optional(out, c.low_ns);
    put_optional(out, c.high_ns);
    put(out, c.dependence);
    put(out, static_cast<std::uint8_t>(c.verdict));
  }
}

std::vector<SloCheck> read_slo_checks(const std::string& in, std::size_t& at) {
  std::vector<SloCheck> checks(static_cast<std::size_t>(take<std::uint64_t>(in, at)));
  for (SloCheck& c : checks) {
    c.key = take_text(in, at);
    c.label = take_text(in, at);
    c.target_ns = take<std::int64_t>(in, at);
    c.value_ns = take_optional(in, at);
    c.samples = take<std::int64_t>(in, at);
    c.low_ns = take_optional(in, at);
    c.high_ns = take_optional(in, at);
    c.dependence = take<double>(in, at);
    const auto verdict = take<std::uint8_t>(in, at);
    if (verdict > static_cast<std::uint8_t>(SloVerdict::inconclusive)) {
      throw std::runtime_error("workload worker: bad SLO verdict");
    }
    c.verdict = static_cast<SloVerdict>(verdict);
  }
  return checks;
}

}  // namespace gpumux::cluster
