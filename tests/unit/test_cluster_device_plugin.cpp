// The NVIDIA k8s-device-plugin config reader (models/cluster/device_plugin_config.hpp): the
// README's example files load unchanged (tests/data/cluster/SOURCE.md), and each refusal is one
// line naming file:line:column and key.
#include <gtest/gtest.h>

#include <string>

#include "models/cluster/device_plugin_config.hpp"

namespace gpumux::cluster {
namespace {

std::string fixture(const std::string& name) {
  return std::string(GPUMUX_SOURCE_DIR) + "/tests/data/cluster/" + name;
}

// The message of the InputError `yaml` raises (or "" when it loads).
std::string error_of(const std::string& yaml) {
  try {
    parse_device_plugin_config(yaml, "plugin.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_error_contains(const std::string& yaml, const std::string& part) {
  const std::string message = error_of(yaml);
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message;
}

TEST(ClusterDevicePlugin, ReadmeFlagsExampleLoadsUnchanged) {
  const GpuSharingConfig c = load_device_plugin_config(fixture("device-plugin-readme-flags.yaml"));
  EXPECT_EQ(c.mig_strategy, MigStrategy::none);
  EXPECT_EQ(c.sharing, SharingKind::none);
  EXPECT_TRUE(c.shared.empty());
  EXPECT_TRUE(c.mig_devices.empty());
  EXPECT_NE(c.source.find("device-plugin-readme-flags.yaml"), std::string::npos);
}

TEST(ClusterDevicePlugin, ReadmeTimeSlicingExampleLoadsUnchanged) {
  const GpuSharingConfig c =
      load_device_plugin_config(fixture("device-plugin-readme-time-slicing.yaml"));
  EXPECT_EQ(c.sharing, SharingKind::time_slicing);
  ASSERT_EQ(c.shared.size(), 1u);
  EXPECT_EQ(c.shared[0].name, "nvidia.com/gpu");
  EXPECT_EQ(c.shared[0].advertised_name, "nvidia.com/gpu");  // renameByDefault unset
  EXPECT_EQ(c.shared[0].replicas, 10);
  EXPECT_TRUE(c.shared[0].devices.empty());        // all devices
  EXPECT_FALSE(c.fail_requests_greater_than_one);  // the plugin's default for time-slicing
  EXPECT_TRUE(c.device_sharing.is("time-slicing"));
  EXPECT_EQ(c.device_sharing.replicas, 10);
}

TEST(ClusterDevicePlugin, ReadmeMpsExampleLoadsUnchanged) {
  const GpuSharingConfig c = load_device_plugin_config(fixture("device-plugin-readme-mps.yaml"));
  EXPECT_EQ(c.sharing, SharingKind::mps);
  ASSERT_EQ(c.shared.size(), 1u);
  EXPECT_EQ(c.shared[0].replicas, 10);
  EXPECT_TRUE(c.fail_requests_greater_than_one);  // MPS defaults it to true (config.go)
  EXPECT_TRUE(c.device_sharing.is("mps"));
}

TEST(ClusterDevicePlugin, RenameByDefaultAndExplicitRenameAndDevices) {
  const GpuSharingConfig c = parse_device_plugin_config(R"(
version: v1
flags:
  migStrategy: mixed
sharing:
  timeSlicing:
    renameByDefault: true
    failRequestsGreaterThanOne: true
    resources:
    - name: gpu
      replicas: 4
      devices: 2
    - name: nvidia.com/mig-1g.10gb
      rename: mig-small
      replicas: 3
      devices: [0, "1:2", "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763"]
)",
                                                        "plugin.yaml");
  EXPECT_EQ(c.mig_strategy, MigStrategy::mixed);
  ASSERT_EQ(c.shared.size(), 2u);
  EXPECT_EQ(c.shared[0].name, "nvidia.com/gpu");  // prefix added as NewResourceName does
  EXPECT_EQ(c.shared[0].advertised_name, "nvidia.com/gpu.shared");
  EXPECT_EQ(c.shared[0].devices, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(c.shared[1].advertised_name, "nvidia.com/mig-small");
  EXPECT_EQ(c.shared[1].devices,
            (std::vector<std::string>{"0", "1:2", "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763"}));
  EXPECT_TRUE(c.fail_requests_greater_than_one);
  EXPECT_TRUE(c.rename_by_default);
  EXPECT_EQ(c.device_sharing.replicas, 4);  // of nvidia.com/gpu
}

TEST(ClusterDevicePlugin, UnknownButLegalPluginKeysAreAccepted) {
  EXPECT_EQ(error_of(R"(
version: v1
flags:
  migStrategy: single
  failOnInitError: false
  mpsRoot: /run/nvidia/mps
  gdsEnabled: false
  deviceDiscoveryStrategy: auto
  plugin: {passDeviceSpecs: true, deviceListStrategy: [envvar, cdi-annotations], anyFutureKey: 1}
  gfd: {oneshot: false, sleepInterval: 60s}
resources:
  gpus:
  - pattern: "A100-SXM4-40GB"
    name: a100
imex: {channelIDs: [0]}
)"),
            "");
  EXPECT_EQ(error_of(""), "");  // empty: the plugin's defaults
}

TEST(ClusterDevicePlugin, Errors) {
  EXPECT_EQ(error_of("version: v2\n"),
            "plugin.yaml:1:10: version: unknown version: v2 (the device plugin reads v1)");
  EXPECT_EQ(error_of("flags:\n  migStrategy: mixd\n"),
            "plugin.yaml:2:16: flags.migStrategy: unknown migStrategy 'mixd' (did you mean "
            "'mixed'?); use one of: none, single, mixed");
  EXPECT_EQ(error_of("flags:\n  failOnInitError: maybe\n"),
            "plugin.yaml:2:20: flags.failOnInitError: expected true or false, got 'maybe'");
  expect_error_contains("flags:\n  migStrateg: none\n",
                        "plugin.yaml:2:3: flags.migStrateg: unknown key 'migStrateg' in flags "
                        "(did you mean 'migStrategy'?)");
  expect_error_contains("sharing:\n  timeSlicing:\n    renameByDefualt: true\n    resources: []\n",
                        "plugin.yaml:3:5: sharing.timeSlicing.renameByDefualt: unknown key");
  EXPECT_EQ(error_of("sharing:\n  timeSlicing:\n    renameByDefault: true\n"),
            "plugin.yaml:3:5: sharing.timeSlicing.resources: missing required key 'resources'");
  EXPECT_EQ(error_of("sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
                     "      replicas: 1\n"),
            "plugin.yaml:5:17: sharing.timeSlicing.resources.0.replicas: number of replicas must "
            "be >= 2, got 1");
  EXPECT_EQ(error_of("sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"),
            "plugin.yaml:4:7: sharing.timeSlicing.resources.0.replicas: missing required key "
            "'replicas'");
  EXPECT_EQ(error_of("sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/GPU\n"
                     "      replicas: 2\n"),
            "plugin.yaml:4:13: sharing.timeSlicing.resources.0.name: incorrect format for resource "
            "name 'nvidia.com/GPU' (lower-case letters, digits, '-' and '.')");
  expect_error_contains(
      "sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/mig-1g.10gb\n"
      "      replicas: 2\n",
      "plugin.yaml:4:13: sharing.timeSlicing.resources.0.name: "
      "'nvidia.com/mig-1g.10gb' is advertised only with flags.migStrategy: mixed");
  expect_error_contains(
      "flags: {migStrategy: mixed}\nsharing:\n  mps:\n    resources:\n"
      "    - {name: nvidia.com/mig-1g.10gb, replicas: 2}\n",
      "plugin.yaml:5:14: sharing.mps.resources.0.name: sharing using MPS is not "
      "supported for MIG devices");
  expect_error_contains(
      "sharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n"
      "  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n",
      "plugin.yaml:5:5: sharing.mps: time-slicing and MPS are mutually exclusive");
  expect_error_contains(
      "sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
      "      replicas: 2\n      devices: some\n",
      "plugin.yaml:6:16: sharing.timeSlicing.resources.0.devices: devices set as "
      "'some' but the only valid string input is 'all'");
  expect_error_contains(
      "sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
      "      replicas: 2\n      devices: [zero]\n",
      "plugin.yaml:6:17: sharing.timeSlicing.resources.0.devices.0: unsupported "
      "device 'zero'");
  expect_error_contains(
      "sharing:\n  timeSlicing:\n    resources:\n    - name: example.com/fpga\n"
      "      replicas: 2\n",
      "is not an nvidia.com/ resource");
  expect_error_contains("version: [v1\n", "plugin.yaml:");  // syntax
}

TEST(ClusterDevicePlugin, MissingFileIsAnInputError) {
  EXPECT_THROW(load_device_plugin_config(fixture("no-such-file.yaml")), InputError);
  EXPECT_THROW(load_device_plugin_config(fixture("")), InputError);  // a directory
}

}  // namespace
}  // namespace gpumux::cluster
