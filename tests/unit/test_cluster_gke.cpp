// GKE node pool GPU settings (models/cluster/gke_config.hpp): time-sharing, MPS, MIG partition
// sizes and mixed layouts, the node labels GKE sets, and one located line per refusal.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "models/cluster/gke_config.hpp"
#include "models/config/profile_loader.hpp"

namespace gpumux::cluster {
namespace {

struct Read {
  GpuSharingConfig config;
  std::map<std::string, std::string> labels;
};

Read read(const std::string& yaml, const std::string& model = "a100-80gb") {
  const YAML::Node root = yaml::parse(yaml, "pool.yaml");
  std::map<std::string, SourceLocation> locations;
  yaml::Context ctx("pool.yaml", locations);
  const yaml::MapReader top(ctx, yaml::Field{root, "", root.Mark()}, {"gke"});
  Read out;
  out.config = read_gke_config(ctx, top.require("gke"), load_device_profile(model), out.labels);
  return out;
}

std::string error_of(const std::string& yaml, const std::string& model = "a100-80gb") {
  try {
    read(yaml, model);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ClusterGke, TimeSharing) {
  const Read r = read("gke: {gpu-sharing-strategy: time-sharing, max-shared-clients-per-gpu: 4}");
  EXPECT_EQ(r.config.sharing, SharingKind::time_slicing);
  ASSERT_EQ(r.config.shared.size(), 1u);
  EXPECT_EQ(r.config.shared[0].advertised_name, "nvidia.com/gpu");
  EXPECT_EQ(r.config.shared[0].replicas, 4);
  EXPECT_TRUE(r.config.fail_requests_greater_than_one);
  EXPECT_TRUE(r.config.device_sharing.is("time-slicing"));
  EXPECT_EQ(r.config.device_sharing.replicas, 4);
  EXPECT_TRUE(r.config.mig_devices.empty());
  EXPECT_EQ(r.labels.at("cloud.google.com/gke-gpu-sharing-strategy"), "time-sharing");
  EXPECT_EQ(r.labels.at("cloud.google.com/gke-max-shared-clients-per-gpu"), "4");
}

TEST(ClusterGke, Mps) {
  const Read r =
      read("gke: {gpu-sharing-strategy: mps, max-shared-clients-per-gpu: 3}", "h100-sxm-80gb");
  EXPECT_EQ(r.config.sharing, SharingKind::mps);
  EXPECT_TRUE(r.config.device_sharing.is("mps"));
  EXPECT_EQ(r.labels.at("cloud.google.com/gke-gpu-sharing-strategy"), "mps");
}

TEST(ClusterGke, PartitionSizeFillsTheGpu) {
  const Read r = read("gke: {gpu-partition-size: 1g.10gb}");
  EXPECT_EQ(r.config.mig_devices, std::vector<std::string>(7, "1g.10gb"));
  EXPECT_EQ(r.config.mig_strategy, MigStrategy::single);
  EXPECT_EQ(r.labels.at("cloud.google.com/gke-gpu-partition-size"), "1g.10gb");
  EXPECT_EQ(read("gke: {gpu-partition-size: 3g.40gb}").config.mig_devices.size(), 2u);
  EXPECT_EQ(read("gke: {gpu-partition-size: 1g.5gb}", "a100-sxm4-40gb").config.mig_devices.size(),
            7u);
  // MIG partitions shared by time-sharing (GKE documents the combination).
  const Read shared = read(
      "gke: {gpu-partition-size: 2g.20gb, gpu-sharing-strategy: time-sharing, "
      "max-shared-clients-per-gpu: 2}");
  EXPECT_EQ(shared.config.mig_devices.size(), 3u);
  EXPECT_EQ(shared.config.sharing, SharingKind::time_slicing);
}

TEST(ClusterGke, MigConfigIsOnePartitionSizeAdvertisedAsNvidiaComGpu) {
  // GKE advertises every partition as nvidia.com/gpu (single strategy) and labels its size.
  const Read r = read("gke: {mig-config: \"2g.20gb:1\"}");
  EXPECT_EQ(r.config.mig_devices, (std::vector<std::string>{"2g.20gb"}));
  EXPECT_EQ(r.config.mig_strategy, MigStrategy::single);
  EXPECT_EQ(r.labels.at("cloud.google.com/gke-gpu-partition-size"), "2g.20gb");
  EXPECT_EQ(read("gke: {mig-config: \"--mig-config=3g.40gb:2\"}").config.mig_devices.size(), 2u);
  // Time-sharing next to mig-config shares the partitions (it was ignored: the partitions were
  // advertised as nvidia.com/mig-2g.20gb, which the nvidia.com/gpu replicas did not name).
  const Read shared = read(
      "gke: {mig-config: \"2g.20gb:3\", gpu-sharing-strategy: time-sharing, "
      "max-shared-clients-per-gpu: 2}");
  EXPECT_EQ(shared.config.mig_strategy, MigStrategy::single);
  EXPECT_EQ(shared.config.sharing, SharingKind::time_slicing);
  ASSERT_EQ(shared.config.shared.size(), 1u);
  EXPECT_EQ(shared.config.shared[0].name, "nvidia.com/gpu");
  // A mixed layout has no GKE equivalent (one partition size per node pool).
  EXPECT_NE(error_of("gke: {mig-config: \"2g.20gb:1,1g.10gb:4\"}")
                .find("gke.mig-config: GKE gives a node pool one partition size"),
            std::string::npos);
}

TEST(ClusterGke, Errors) {
  EXPECT_EQ(error_of("gke: {gpu-sharing-strategy: time-slicing, max-shared-clients-per-gpu: 2}"),
            "pool.yaml:1:29: gke.gpu-sharing-strategy: unknown gpu-sharing-strategy "
            "'time-slicing' (did you mean 'time-sharing'?); use one of: time-sharing, mps");
  EXPECT_EQ(error_of("gke: {max-shared-clients-per-gpu: 2}"),
            "pool.yaml:1:35: gke.max-shared-clients-per-gpu: max-shared-clients-per-gpu needs "
            "gpu-sharing-strategy (time-sharing or mps)");
  EXPECT_EQ(error_of("gke: {gpu-sharing-strategy: mps}"),
            "pool.yaml:1:6: gke.max-shared-clients-per-gpu: missing required key "
            "'max-shared-clients-per-gpu' (gpu-sharing-strategy needs it)");
  EXPECT_EQ(error_of("gke: {gpu-sharing-strategy: mps, max-shared-clients-per-gpu: 1}"),
            "pool.yaml:1:62: gke.max-shared-clients-per-gpu: must be from 2 to 1024 (clients "
            "sharing one GPU), got 1");
  EXPECT_EQ(error_of("gke: {gpu-partition-size: 1g.5gb}"),
            "pool.yaml:1:27: gke.gpu-partition-size: a100-80gb has no partition size '1g.5gb' "
            "(did you mean '1g.10gb'?); sizes: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, "
            "4g.40gb, 7g.80gb");
  EXPECT_NE(error_of("gke: {mig-config: \"3g.40gb:3\"}")
                .find("pool.yaml:1:19: gke.mig-config: does not fit a100-80gb: "),
            std::string::npos);
  EXPECT_NE(error_of("gke: {mig-config: \"1g.10gb:x\"}").find("gke.mig-config: "),
            std::string::npos);
  EXPECT_NE(error_of("gke: {gpu-partition-size: 1g.10gb, mig-config: \"1g.10gb:7\"}")
                .find("gke.mig-config: give gpu-partition-size"),
            std::string::npos);
  EXPECT_NE(error_of("gke: {gpu-partition-size: 1g.10gb, gpu-sharing-strategy: mps, "
                     "max-shared-clients-per-gpu: 2}")
                .find("gke.gpu-sharing-strategy: mps cannot share MIG partitions"),
            std::string::npos);
  EXPECT_NE(error_of("gke: {gpu-partition-size: 1g.10gb}", "h200-141gb").find("gke."),
            std::string::npos);
  EXPECT_NE(
      error_of("gke: {gpu-sharing-strategys: mps}").find("unknown key 'gpu-sharing-strategys'"),
      std::string::npos);
}

}  // namespace
}  // namespace gpumux::cluster
