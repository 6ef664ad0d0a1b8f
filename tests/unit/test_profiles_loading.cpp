// Device profiles loaded from files and checked: named MIG layouts, unknown names, content
// hashes, unsourced, unknown or malformed values rejected with file:line:col and the key path,
// MIG profile and layout validation, nvidia-smi names as aliases. The shipped numbers:
// test_profiles.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "tests/support/profile_texts.hpp"

namespace gpumux {
namespace {

using testing::expect_rejected;
using testing::kBase;
using testing::kGiB;
using testing::kMiB;
using testing::kMig;
using testing::kProfiles;
using testing::kWithoutMig;
using testing::line_of;
using testing::read_file;
using testing::replace_line;

TEST(Profiles, NamedLayoutsExpandInMigPartedOrder) {
  const DeviceProfile& gpu = load_device_profile("h100-sxm-80gb");
  EXPECT_EQ(gpu.mig_layouts.at("all-balanced"),
            (std::vector<std::string>{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"}));
  EXPECT_EQ(gpu.mig_layouts.at("all-1g.20gb"), std::vector<std::string>(4, "1g.20gb"));
  EXPECT_EQ(gpu.mig_layouts.at("all-1g"), std::vector<std::string>(7, "1g.10gb"));
}

TEST(Profiles, UnknownNameListsTheKnownOnes) {
  try {
    load_device_profile("b200-180gb");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown GPU model 'b200-180gb'"), std::string::npos) << message;
    for (const std::string& name : kProfiles) {
      EXPECT_NE(message.find(name), std::string::npos) << message;
    }
  }
}

TEST(Profiles, LoadsFromAPathWithTheSameContentHashAsEmbedded) {
  const std::string path =
      std::string(GPUMUX_SOURCE_DIR) + "/calibration/profiles/h100-sxm-80gb.yaml";
  const DeviceProfile& from_file = load_device_profile(path);
  const DeviceProfile& embedded = load_device_profile("h100-sxm-80gb");
  EXPECT_NE(&from_file, &embedded);
  EXPECT_EQ(from_file.name, "h100-sxm-80gb");
  EXPECT_EQ(from_file.source_path, path);
  EXPECT_EQ(from_file.content_hash, embedded.content_hash);
  EXPECT_EQ(from_file.find_mig_profile("3g.40gb")->sms, 60);

  // The embedded copy is byte-identical to the file for every profile.
  for (const std::string& name : kProfiles) {
    const std::string file =
        std::string(GPUMUX_SOURCE_DIR) + "/calibration/profiles/" + name + ".yaml";
    EXPECT_EQ(load_device_profile(file).content_hash, load_device_profile(name).content_hash)
        << name;
  }

  // Relative paths resolve against base_dir and share the cache entry.
  const DeviceProfile& relative =
      load_device_profile("calibration/profiles/h100-sxm-80gb.yaml", GPUMUX_SOURCE_DIR);
  EXPECT_EQ(&relative, &from_file);

  const DeviceProfile& fixture =
      load_device_profile("tests/data/profiles/minimal-mig.yaml", GPUMUX_SOURCE_DIR);
  EXPECT_EQ(fixture.name, "minimal-mig");
  EXPECT_EQ(fixture.memory_slices, 4);
  EXPECT_EQ(fixture.mig_layouts.at("mixed"),
            (std::vector<std::string>{"1g.4gb", "1g.4gb", "2g.8gb"}));
}

TEST(Profiles, MissingFileIsAnInputError) {
  EXPECT_THROW(load_device_profile("/nonexistent/gpu.yaml"), InputError);
}

TEST(Profiles, ContentHashIsFnv1a64) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  for (const char c : kBase) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;  // FNV-1a 64 prime
  }
  char expected[17];
  std::snprintf(expected, sizeof expected, "%016llx", static_cast<unsigned long long>(hash));
  const DeviceProfile a = parse_device_profile(kBase, "x.yaml");
  EXPECT_EQ(a.content_hash, expected);
  const DeviceProfile b = parse_device_profile(kBase + "# comment\n", "x.yaml");
  EXPECT_NE(a.content_hash, b.content_hash);
  EXPECT_EQ(a.content_hash, parse_device_profile(kBase, "y.yaml").content_hash);
}

TEST(Profiles, FixtureWithoutSourceIsRejectedWithLineAndKeyPath) {
  const std::string path =
      std::string(GPUMUX_SOURCE_DIR) + "/tests/data/profiles/missing-source.yaml";
  const std::string text = read_file(path);
  const int line = line_of(text, "hbm_bandwidth:");
  ASSERT_GT(line, 0);
  try {
    load_device_profile(path);
    FAIL() << "a number without a source was accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    // "FILE:LINE:COL: hbm_bandwidth: number without a source ..."; col 16 = after "hbm_bandwidth: "
    EXPECT_EQ(message.rfind(path + ":" + std::to_string(line) + ":16: hbm_bandwidth: ", 0), 0u)
        << message;
    EXPECT_NE(message.find("source"), std::string::npos) << message;
    EXPECT_EQ(e.where().line, line);
    EXPECT_EQ(e.where().key_path, "hbm_bandwidth");
  }
}

TEST(Profiles, BaseFixtureParses) {
  const DeviceProfile gpu = parse_device_profile(kBase, "calibration/profiles/test-gpu.yaml");
  EXPECT_EQ(gpu.name, "test-gpu");
  EXPECT_EQ(gpu.memory, 16LL << 30);
  EXPECT_DOUBLE_EQ(gpu.hbm_bandwidth, 1e12);
  EXPECT_EQ(gpu.context_switch, 10'000);
  EXPECT_TRUE(gpu.mig_profiles.empty());
  const std::string sourced_entry =
      std::regex_replace(kMig, std::regex("- name: 1g.2gb"), "- name: 1g.2gb\n      source: \"t\"");
  const DeviceProfile mig = parse_device_profile(kBase + sourced_entry, "t.yaml");
  ASSERT_EQ(mig.mig_profiles.size(), 1u);
  EXPECT_EQ(mig.mig_profiles[0].memory, 2LL << 30);
  EXPECT_EQ(mig.memory_slices, 8);
}

TEST(Profiles, RejectsUnsourcedAndMalformedValues) {
  // Bare number at the top level.
  expect_rejected(replace_line(kBase, "sms", "sms: 8"), {"test.yaml:2:6: sms:", "source"});
  // Map without source/assumption.
  expect_rejected(replace_line(kBase, "sms", "sms: {value: 8}"), {"test.yaml:2:", "sms:"});
  // Both source and assumption.
  expect_rejected(replace_line(kBase, "sms", R"(sms: {value: 8, source: "a", assumption: "b"})"),
                  {"sms", "not several"});
  // Empty source.
  expect_rejected(replace_line(kBase, "sms", R"(sms: {value: 8, source: ""})"),
                  {"sms.source", "empty"});
  // A size without a unit (a bare number where a unit is required is an error).
  expect_rejected(replace_line(kBase, "memory", R"(memory: {value: 16, source: "x"})"),
                  {"test.yaml:3:", "memory", "unit"});
  expect_rejected(replace_line(kBase, "timeslice", R"(timeslice: {value: 1024, source: "x"})"),
                  {"timeslice", "unit"});
  expect_rejected(replace_line(kBase, "sms", R"(sms: {value: 8.5, source: "x"})"),
                  {"sms", "integer"});
  expect_rejected(replace_line(kBase, "graph_launch_overhead",
                               R"(graph_launch_overhead: {value: 1, source: "x"})"),
                  {"graph_launch_overhead", "unit"});
  // Unknown keys, at the top level and inside a value map.
  expect_rejected(kBase + "hbm_bandwith: {value: 1TB/s, source: x}\n",
                  {"test.yaml:14:1: hbm_bandwith: unknown key 'hbm_bandwith'"});
  expect_rejected(replace_line(kBase, "sms", R"(sms: {value: 8, sorce: "x"})"),
                  {"sms.sorce", "unknown key"});
  // Missing required key.
  expect_rejected(replace_line(kBase, "l2_cache", ""), {"l2_cache: missing required key"});
  // Invalid YAML reports its position.
  expect_rejected(kBase + "mig: [\n", {"test.yaml:", "invalid YAML"});
}

TEST(Profiles, MigEntriesNeedASourceUnlessTheEntryHasOne) {
  // The entry in kMig has no entry-level source: its bare `sms: 1` (line 18) is rejected, while
  // its wrapped memory would pass.
  expect_rejected(kBase + kMig, {"test.yaml:19:12: mig.profiles.0.sms: number without a source"});
}

TEST(Profiles, MigProfileValidation) {
  const std::string sourced_entry =
      std::regex_replace(kMig, std::regex("- name: 1g.2gb"), "- name: 1g.2gb\n      source: \"t\"");
  EXPECT_NO_THROW(parse_device_profile(kBase + sourced_entry, "t.yaml"));
  auto with = [&](const std::string& from, const std::string& to) {
    return kBase + std::regex_replace(sourced_entry, std::regex(from), to);
  };
  expect_rejected(with("placements: \\[0, 1, 2, 3, 4, 5, 6\\]", "placements: [0, 8]"),
                  {"mig.profiles.0.placements.1", "does not fit in 8"});
  expect_rejected(with("placements: \\[0, 1, 2, 3, 4, 5, 6\\]", "placements: [2, 1]"),
                  {"mig.profiles.0.placements.1", "increasing"});
  expect_rejected(with("max_count: 7", "max_count: 0"), {"mig.profiles.0.max_count", "positive"});
  expect_rejected(with("memory_slices: 1", "memory_slices: 9"),
                  {"mig.profiles.0.memory_slices", "exceeds"});
  expect_rejected(with("compute_slices: 1", "compute_slices: 8"),
                  {"mig.profiles.0.compute_slices", "exceeds"});
  expect_rejected(with("sms: 1", "sms: 9"), {"mig.profiles.0.sms", "more SMs"});
  expect_rejected(with("sms: 1", "sms: 1\n      colour: red"),
                  {"mig.profiles.0.colour", "unknown key"});
}

TEST(Profiles, LayoutsMustReferenceKnownProfilesAndFit) {
  const std::string entry =
      std::regex_replace(kMig, std::regex("- name: 1g.2gb"), "- name: 1g.2gb\n      source: \"t\"");
  const std::string good =
      kBase + entry + "  layouts:\n    all-1g: {mig-devices: {1g.2gb: 7}, source: t}\n";
  EXPECT_EQ(parse_device_profile(good, "t.yaml").mig_layouts.at("all-1g").size(), 7u);
  expect_rejected(kBase + entry + "  layouts:\n    x: {mig-devices: {2g.4gb: 1}, source: t}\n",
                  {"mig.layouts.x.mig-devices.2g.4gb", "no MIG profile '2g.4gb'", "1g.2gb"});
  expect_rejected(kBase + entry + "  layouts:\n    x: {mig-devices: {1g.2gb: 8}, source: t}\n",
                  {"t.yaml", "mig.layouts.x", "does not fit", "at most 7"});
  expect_rejected(kBase + entry + "  layouts:\n    x: {mig-devices: {1g.2gb: 7}}\n",
                  {"test.yaml:27:8: mig.layouts.x: a layout needs `source:`"});
}

TEST(Profiles, ImpossibleNamedLayoutInAFileIsRejected) {
  // 3g x2 + 1g uses 7 compute slices but 9 memory slices: the 1g has no free start.
  const std::string path =
      std::string(GPUMUX_SOURCE_DIR) + "/calibration/profiles/h100-sxm-80gb.yaml";
  std::string text = read_file(path);
  text = std::regex_replace(text, std::regex("all-7g: \\{mig-devices: \\{7g.80gb: 1\\}"),
                            "all-7g: {mig-devices: {3g.40gb: 2, 1g.10gb: 1}");
  expect_rejected(text, {"mig.layouts.all-7g", "does not fit", "1g.10gb (#2) needs"});
}

TEST(Profiles, NvidiaSmiNamesAreAliasesOfEmbeddedProfiles) {
  EXPECT_EQ(load_device_profile("NVIDIA H100 80GB HBM3").name, "h100-sxm-80gb");
  EXPECT_EQ(load_device_profile("NVIDIA-H100-80GB-HBM3").name, "h100-sxm-80gb");  // GFD label
  EXPECT_EQ(load_device_profile("NVIDIA A100-SXM4-40GB").name, "a100-sxm4-40gb");
  EXPECT_EQ(load_device_profile("A100-SXM4-40GB").name, "a100-sxm4-40gb");
  EXPECT_EQ(embedded_profile_for_alias("NVIDIA H100 NVL"), "h100-nvl-94gb");
  EXPECT_EQ(embedded_profile_for_alias("NVIDIA H100 PCIe"), "h100-pcie-80gb");
  EXPECT_EQ(load_device_profile("NVIDIA L4").name, "l4-24gb");
  EXPECT_EQ(load_device_profile("NVIDIA L40S").name, "l40s-48gb");
  EXPECT_EQ(load_device_profile("NVIDIA A10G").name, "a10g-24gb");
  EXPECT_EQ(embedded_profile_for_alias("NVIDIA B200"), "");
  EXPECT_THROW(load_device_profile("NVIDIA B200"), InputError);
  // every embedded profile names at least one nvidia-smi name, and no two share one
  std::set<std::string> seen;
  for (const std::string& name : embedded_profile_names()) {
    const DeviceProfile& gpu = load_device_profile(name);
    EXPECT_FALSE(gpu.nvidia_smi_names.empty()) << name;
    for (const std::string& alias : gpu.nvidia_smi_names) {
      EXPECT_EQ(embedded_profile_for_alias(alias), name) << alias;
      EXPECT_TRUE(seen.insert(alias).second) << alias;
    }
  }
}

TEST(Profiles, NvidiaSmiNameNeedsASource) {
  const std::string base = "display_name: X\nnvidia_smi_name: \"NVIDIA X\"\n";
  try {
    parse_device_profile(base, "x.yaml");
    FAIL() << "an unsourced nvidia_smi_name was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.yaml:2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nvidia_smi_name"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpumux
