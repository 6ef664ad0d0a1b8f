#pragma once
// What `gpumux plan -o DIR` writes: the winning setup as the files a user applies on its
// platform (docs/plan.md, "Output: what you apply"), plus the gpumux scenarios that replay it.
//
//   every platform   best.yaml       the setup as a scenario (`gpumux run best.yaml`)
//   gke              node-pools.sh   one `gcloud container node-pools create` per node: machine
//                                    type, --accelerator type,count and the GKE GPU flags
//                                    (gpu-partition-size, gpu-sharing-strategy,
//                                    max-shared-clients-per-gpu)
//   device-plugin    device-plugin-NODE.yaml  the NVIDIA k8s-device-plugin config of each node
//                    mig-parted.yaml          the nodes' MIG layouts (nvidia-mig-parted)
//                    nodes.sh                 the node labels that select both configs
//   mig-parted       mig-parted.yaml
//   gke, device-plugin
//                    pods/TENANT.yaml         a Pod per tenant: its resource request
//                                             (nvidia.com/gpu: 1), nodeSelector, tolerations and,
//                                             on a shared device, its GPU-memory budget (env);
//                                             any creation order (the plan holds for every
//                                             assignment of a pool's pods to its devices)
//                    cluster.yaml             the same nodes and pods as a gpumux cluster scenario
//                                             (`gpumux run cluster.yaml` replays them through the
//                                             cluster layer: scheduler, device plugin law and
//                                             device models; tests/unit/test_plan_deploy.cpp
//                                             checks it reproduces the plan's numbers)
// Pods get one node each through the node's own pool label (GKE: cloud.google.com/gke-nodepool;
// device plugin: gpumux.io/node, set by nodes.sh). Cost: linear in the tenants and GPUs.
#include <string>
#include <vector>

#include "models/plan/planner.hpp"

namespace gpumux {

struct PlanFile {
  std::string path;  ///< relative to the output directory, e.g. "pods/00-embed.yaml"
  std::string text;
};

/// Whether RELATIVE (a path inside `-o DIR`; folders end in '/') is one `plan -o DIR` writes:
/// best.yaml, cluster.yaml, node-pools.sh, nodes.sh, mig-parted.yaml, device-plugin-*.yaml,
/// pods/ and the .yaml files in it. An earlier plan's folder holds only these, so a re-plan may
/// replace it whole; anything else means the folder is not a plan's, and it is left alone.
bool plan_output_entry(const std::string& relative);

/// The files of the best setup of `result` (which must have found one). `scenario_path` names
/// the planned scenario in the files' headers.
std::vector<PlanFile> plan_deployment_files(const PlanResult& result,
                                            const std::string& scenario_path);

}  // namespace gpumux
