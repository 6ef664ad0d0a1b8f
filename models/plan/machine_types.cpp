#include "models/plan/machine_types.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/config/input_error.hpp"

namespace gpumux {

const std::vector<MachineType>& machine_types() {
  // Sources: models/plan/machine_types.hpp (GPU counts: GCP "GPU machine types"; host prices:
  // SkyPilot catalog catalogs/v8/gcp/vms.csv, us-central1, on-demand).
  static const std::vector<MachineType> kTypes = {
      {"a3-highgpu-1g", "h100-sxm-80gb", 1, 1.18251},
      {"a3-highgpu-2g", "h100-sxm-80gb", 2, 2.36502},
      {"a3-highgpu-4g", "h100-sxm-80gb", 4, 4.73003},
      {"a3-highgpu-8g", "h100-sxm-80gb", 8, 9.46006},
      {"a2-highgpu-1g", "a100-sxm4-40gb", 1, 0.73948},
      {"a2-highgpu-2g", "a100-sxm4-40gb", 2, 1.47895},
      {"a2-highgpu-4g", "a100-sxm4-40gb", 4, 2.95791},
      {"a2-highgpu-8g", "a100-sxm4-40gb", 8, 5.91582},
      {"a2-megagpu-16g", "a100-sxm4-40gb", 16, 8.79698},
      {"a2-ultragpu-1g", "a100-80gb", 1, 1.09962},
      {"a2-ultragpu-2g", "a100-80gb", 2, 2.19924},
      {"a2-ultragpu-4g", "a100-80gb", 4, 4.39849},
      {"a2-ultragpu-8g", "a100-80gb", 8, 8.79698},
      {"a3-ultragpu-8g", "h200-141gb", 8, 12.266},
  };
  return kTypes;
}

const MachineType* find_machine_type(const std::string& name) {
  for (const MachineType& m : machine_types()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<const MachineType*> plan_machine_types(const PlanSpec& plan,
                                                   const std::vector<std::string>& gpu_models) {
  std::vector<const MachineType*> out;
  if (plan.platform == "bare") {
    if (!plan.machines.empty()) {
      throw InputError(plan.machines_where,
                       "plan.machines: machine types need a node platform (gke, "
                       "device-plugin, mig-parted); `bare` prices GPUs one by one");
    }
    return out;
  }
  for (const std::string& name : plan.machines) {
    if (find_machine_type(name) == nullptr) {
      std::vector<std::string> known;
      for (const MachineType& m : machine_types()) known.push_back(m.name);
      throw InputError(plan.machines_where,
                       fmt::format("plan.machines: unknown machine type '{}'; known: {}", name,
                                   fmt::join(known, ", ")));
    }
  }
  for (const MachineType& type : machine_types()) {
    const bool chosen =
        plan.machines.empty() ||
        std::find(plan.machines.begin(), plan.machines.end(), type.name) != plan.machines.end();
    const bool has_gpu =
        std::find(gpu_models.begin(), gpu_models.end(), type.gpu_model) != gpu_models.end();
    if (chosen && has_gpu) out.push_back(&type);
  }
  if (out.empty()) {
    throw InputError(plan.platform_where.file.empty() ? plan.where : plan.platform_where,
                     fmt::format("plan.platform {}: no machine type{} has a GPU of plan.gpus "
                                 "({}); machine types: docs/plan.md, \"Platforms\"",
                                 plan.platform, plan.machines.empty() ? "" : " of plan.machines",
                                 fmt::join(gpu_models, ", ")));
  }
  return out;
}

}  // namespace gpumux
