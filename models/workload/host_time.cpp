#include "models/workload/host_time.hpp"

#include <cmath>

#include "models/gpu/device_profile.hpp"

namespace gpumux {

HostTerms request_host_terms(const DeviceProfile& gpu, const std::string& runtime,
                             double runtime_per_op_s, double input_bytes, double output_bytes,
                             const HostOverrides& overrides, const ServingFrontEnd& front_end,
                             const std::string& harness) {
  HostTerms t;
  t.cpu_speed = tenant_host_cpu_speed(gpu, overrides);
  t.cpu = overrides.cpu_speed ? overrides.cpu_name : gpu.host_cpu;
  t.cpu_origin = overrides.cpu_speed ? "user" : "profile";
  if (overrides.per_request) {
    t.per_request = *overrides.per_request;
    t.per_request_origin = "user";
  } else {
    // Fitted on the profile's own host: T_req x s_profile / s.
    const auto fitted = gpu.host_per_request.find(runtime);
    t.per_request = fitted != gpu.host_per_request.end()
                        ? host_cpu_time(fitted->second, gpu.host_cpu_speed, t.cpu_speed)
                        : 0;
    t.per_request_origin = "profile";
  }
  t.harness = harness;
  if (!harness.empty()) {
    // The harness's fitted time, on the profile's own host like T_req: T_h x s_profile / s.
    const auto fitted = gpu.harness_per_request.find(harness);
    t.harness_time = fitted != gpu.harness_per_request.end()
                         ? host_cpu_time(fitted->second, gpu.host_cpu_speed, t.cpu_speed)
                         : 0;
  }
  t.input_bytes = overrides.input_bytes.value_or(input_bytes);
  t.output_bytes = overrides.output_bytes.value_or(output_bytes);
  t.bytes_origin = overrides.input_bytes || overrides.output_bytes ? "user" : "catalog";
  t.link_bandwidth = overrides.link_bandwidth.value_or(gpu.pcie_bandwidth);
  t.link_origin = overrides.link_bandwidth ? "user" : "profile";
  t.copy_time = t.link_bandwidth > 0
                    ? std::llround((t.input_bytes + t.output_bytes) / t.link_bandwidth * 1e9)
                    : 0;
  t.per_op_s = host_per_op_seconds(gpu, runtime_per_op_s, overrides);
  t.per_op_origin = overrides.per_op ? "user" : "runtime";
  t.serving = front_end.name;
  if (!front_end.name.empty()) {
    // T_fe = L_fe + (B_in + B_out) / W_fe; W_fe = 0: the payload costs no front-end time.
    t.front_end_latency = overrides.front_end_latency.value_or(front_end.latency);
    t.front_end_latency_origin = overrides.front_end_latency ? "user" : "serving";
    t.front_end_bandwidth = overrides.front_end_bandwidth.value_or(front_end.bandwidth);
    t.front_end_bandwidth_origin = overrides.front_end_bandwidth ? "user" : "serving";
    // The kernel-families values are the reference host's (s_fit = 1); the user's are theirs.
    const Nanos latency = overrides.front_end_latency
                              ? t.front_end_latency
                              : host_cpu_time(t.front_end_latency, 1.0, t.cpu_speed);
    double payload =
        t.front_end_bandwidth > 0 ? (t.input_bytes + t.output_bytes) / t.front_end_bandwidth : 0;
    if (!overrides.front_end_bandwidth) payload = host_cpu_seconds(payload, 1.0, t.cpu_speed);
    t.front_end_time = latency + std::llround(payload * 1e9);
  }
  return t;
}

std::vector<std::string> profile_harness_names(const DeviceProfile& gpu) {
  std::vector<std::string> names;
  for (const auto& [name, ns] : gpu.harness_per_request) names.push_back(name);
  return names;
}

double tenant_host_cpu_speed(const DeviceProfile& gpu, const HostOverrides& overrides) {
  return overrides.cpu_speed.value_or(gpu.host_cpu_speed);
}

double host_per_op_seconds(const DeviceProfile& gpu, double runtime_per_op_s,
                           const HostOverrides& overrides) {
  if (overrides.per_op) return static_cast<double>(*overrides.per_op) * 1e-9;
  return host_cpu_seconds(runtime_per_op_s, 1.0, tenant_host_cpu_speed(gpu, overrides));
}

Nanos host_gap_per_launch(double ops, double per_op_s, std::size_t kernels, bool cuda_graph) {
  if (cuda_graph || kernels == 0) return 0;
  return std::llround(ops * per_op_s * 1e9 / static_cast<double>(kernels));
}

}  // namespace gpumux
