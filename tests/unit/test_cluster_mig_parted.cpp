// The nvidia mig-parted config reader (models/cluster/mig_parted_config.hpp): mig-parted's own
// example and default configs load unchanged (tests/data/cluster/SOURCE.md); a config selected
// for a pool is checked against the pool's GPU model; each refusal is one located line.
#include <gtest/gtest.h>

#include <string>

#include "models/cluster/mig_parted_config.hpp"
#include "models/config/profile_loader.hpp"

namespace gpumux::cluster {
namespace {

std::string fixture(const std::string& name) {
  return std::string(GPUMUX_SOURCE_DIR) + "/tests/data/cluster/" + name;
}

using Layout = std::vector<std::string>;

GpuSharingConfig apply(const MigPartedFile& file, const std::string& name, const std::string& model,
                       int gpus_per_node) {
  GpuSharingConfig out;
  apply_mig_parted_config(file, name, SourceLocation{"cluster.yaml", 7, 9, "pools.0.sharing"},
                          load_device_profile(model), gpus_per_node, out);
  return out;
}

std::string apply_error(const MigPartedFile& file, const std::string& name,
                        const std::string& model, int gpus_per_node) {
  try {
    apply(file, name, model, gpus_per_node);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string parse_error(const std::string& yaml) {
  try {
    parse_mig_parted_config(yaml, "mig.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message;
}

TEST(ClusterMigParted, ExamplesConfigLoadsUnchanged) {
  const MigPartedFile file = load_mig_parted_config(fixture("mig-parted-examples-config.yaml"));
  EXPECT_EQ(file.configs.size(), 9u);
  ASSERT_EQ(file.configs.count("custom-config"), 1u);
  const auto& custom = file.configs.at("custom-config");
  ASSERT_EQ(custom.size(), 5u);
  EXPECT_FALSE(custom[0].all_devices);
  EXPECT_EQ(custom[0].devices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(custom[0].mig_enabled);
  EXPECT_EQ(custom[4].mig_devices.size(), 3u);
  EXPECT_EQ(custom[4].where.line, 65);  // "- devices: [7]"
}

TEST(ClusterMigParted, ExamplesSelectedForA100_40GB) {
  const MigPartedFile file = load_mig_parted_config(fixture("mig-parted-examples-config.yaml"));
  EXPECT_EQ(apply(file, "all-1g.5gb", "a100-sxm4-40gb", 8).mig_devices, Layout(7, "1g.5gb"));
  EXPECT_EQ(apply(file, "all-1g.10gb", "a100-sxm4-40gb", 8).mig_devices, Layout(4, "1g.10gb"));
  EXPECT_EQ(apply(file, "all-balanced", "a100-sxm4-40gb", 8).mig_devices,
            (Layout{"1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"}));
  const GpuSharingConfig disabled = apply(file, "all-disabled", "a100-sxm4-40gb", 8);
  EXPECT_TRUE(disabled.mig_devices.empty());
  EXPECT_TRUE(disabled.mig_devices_by_index.empty());
  const GpuSharingConfig custom = apply(file, "custom-config", "a100-sxm4-40gb", 8);
  EXPECT_TRUE(custom.mig_devices.empty());
  ASSERT_EQ(custom.mig_devices_by_index.size(), 8u);
  EXPECT_TRUE(custom.mig_devices_by_index.at(3).empty());
  EXPECT_EQ(custom.mig_devices_by_index.at(4), Layout(7, "1g.5gb"));
  EXPECT_EQ(custom.mig_devices_by_index.at(6), Layout(2, "3g.20gb"));
  EXPECT_NE(custom.source.find("custom-config"), std::string::npos);
}

TEST(ClusterMigParted, ExamplesCheckedAgainstThePoolModel) {
  const MigPartedFile file = load_mig_parted_config(fixture("mig-parted-examples-config.yaml"));
  // 1g.5gb is an A100-40GB profile: the same config does not fit an A100-80GB.
  expect_contains(apply_error(file, "all-1g.5gb", "a100-80gb", 8),
                  "mig-parted-examples-config.yaml:16:9: mig-configs.all-1g.5gb.0.mig-devices: "
                  "config 'all-1g.5gb' does not fit a100-80gb: ");
  expect_contains(apply_error(file, "custom-config", "a100-sxm4-40gb", 4),
                  "config 'custom-config' names device 4 but the pool's nodes have 4 GPUs");
  expect_contains(apply_error(file, "all-enabled", "a100-sxm4-40gb", 8),
                  "enables MIG with no instance");
  expect_contains(apply_error(file, "all-balanced", "a100-sxm4-40gb", 8), "");
  EXPECT_EQ(
      apply_error(file, "all-balance", "a100-sxm4-40gb", 8)
          .rfind("cluster.yaml:7:9: pools.0.sharing: no config named 'all-balance' in mig-parted "
                 "config ",
                 0),
      0u);
  expect_contains(apply_error(file, "all-balance", "a100-sxm4-40gb", 8),
                  "(did you mean 'all-balanced'?)");
}

TEST(ClusterMigParted, DefaultConfigDeviceFilterPicksTheFamily) {
  const MigPartedFile file = load_mig_parted_config(fixture("mig-parted-config-default.yaml"));
  EXPECT_GT(file.configs.size(), 50u);
  // all-1g.10gb has one entry per family: 7 instances on 80 GB parts, 4 on A100-40GB.
  EXPECT_EQ(apply(file, "all-1g.10gb", "a100-80gb", 8).mig_devices, Layout(7, "1g.10gb"));
  EXPECT_EQ(apply(file, "all-1g.10gb", "h100-sxm-80gb", 8).mig_devices, Layout(7, "1g.10gb"));
  EXPECT_EQ(apply(file, "all-1g.10gb", "a100-sxm4-40gb", 8).mig_devices, Layout(4, "1g.10gb"));
  expect_contains(apply_error(file, "all-1g.10gb", "a30-24gb", 4),
                  "config 'all-1g.10gb' has no entry for a30-24gb");
  EXPECT_EQ(apply(file, "all-disabled", "h200-141gb", 8).mig_devices, Layout{});
}

TEST(ClusterMigParted, DgxStationSkipsTheDisplayGpuEntry) {
  const MigPartedFile file =
      load_mig_parted_config(fixture("mig-parted-examples-dgx-station-80gb-config.yaml"));
  EXPECT_EQ(apply(file, "all-1g.10gb-dgx-station-80", "a100-80gb", 4).mig_devices,
            Layout(7, "1g.10gb"));
}

TEST(ClusterMigParted, SchemaErrors) {
  EXPECT_EQ(parse_error("mig-configs: {a: [{devices: all, mig-enabled: false}]}\n"),
            "mig.yaml:1:1: version: missing required key 'version'");
  EXPECT_EQ(parse_error("version: v2\nmig-configs: {a: [{devices: all, mig-enabled: false}]}\n"),
            "mig.yaml:1:10: version: unknown version: v2 (mig-parted reads v1)");
  expect_contains(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                              "      mig-enable: false\n"),
                  "mig.yaml:5:7: mig-configs.a.0.mig-enable: unknown key 'mig-enable' in "
                  "mig-configs.a.0 (did you mean 'mig-enabled'?)");
  EXPECT_EQ(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: some\n"
                        "      mig-enabled: false\n"),
            "mig.yaml:4:16: mig-configs.a.0.devices: invalid string input for 'devices': some "
            "(use all or a list of GPU indices)");
  EXPECT_EQ(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                        "      mig-enabled: false\n      mig-devices: {1g.10gb: 1}\n"),
            "mig.yaml:6:20: mig-configs.a.0.mig-devices: MIG devices included when "
            "'mig-enabled' is false");
  EXPECT_EQ(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                        "      mig-enabled: true\n"),
            "mig.yaml:4:7: mig-configs.a.0.mig-devices: missing required field 'mig-devices' "
            "when 'mig-enabled' is true");
  expect_contains(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                              "      mig-enabled: true\n      mig-devices: {1g10gb: 1}\n"),
                  "mig.yaml:6:21: mig-configs.a.0.mig-devices.1g10gb: invalid format for "
                  "'1g10gb'");
  EXPECT_EQ(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                        "      mig-enabled: true\n      mig-devices: {1g.10gb: 8}\n"),
            "mig.yaml:6:30: mig-configs.a.0.mig-devices.1g.10gb: at most 7 instances of a "
            "profile per GPU, got 8");
  EXPECT_EQ(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                        "      mig-enabled: true\n      mig-devices: {1g.10gb: 0}\n"),
            "mig.yaml:6:20: mig-configs.a.0.mig-devices: all counts for all MigProfiles are 0");
  EXPECT_EQ(parse_error("version: v1\nmig-configs:\n  a: []\n"),
            "mig.yaml:3:6: mig-configs.a: at least one entry in 'a' is required");
  expect_contains(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: [0, 0]\n"
                              "      mig-enabled: false\n"),
                  "mig.yaml:4:20: mig-configs.a.0.devices.1: device 0 listed twice");
  expect_contains(parse_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                              "      mig-enabled: maybe\n"),
                  "mig.yaml:5:20: mig-configs.a.0.mig-enabled: expected true or false");
  expect_contains(parse_error(""), "empty mig-parted config");
}

}  // namespace
}  // namespace gpumux::cluster
