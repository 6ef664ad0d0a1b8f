#pragma once
// The tenant body of a cluster pod's `workload:` (issue 8; models/cluster/cluster_loader.hpp):
// the keys of a `tenants[]` entry without the placement, which the cluster scheduler decides.
// Read by the scenario loader's own readers (workload, slo, isolation), so a pod's workload is
// written and checked exactly as a tenant's. Cost: linear in the block.
#include <string>

#include "models/config/yaml_reader.hpp"
#include "models/scenario/scenario.hpp"

namespace gpumux {

/// Reads `field` as a tenant without `device`, `replicas` and `gpus` (each refused with the
/// pod-level key that replaces it: the scheduler places the pod, `count:` copies it, the GPU
/// requests say how many GPUs). `name` defaults to `pod_name`. The result has no devices;
/// `gpus` is 1 (the engine sets both at placement). Throws InputError.
TenantSpec read_pod_workload(yaml::Context& ctx, const yaml::Field& field,
                             const std::string& pod_name);

}  // namespace gpumux
