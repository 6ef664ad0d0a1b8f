// Kubernetes quantities (models/cluster/quantity.hpp): exact values at the edges of the grammar,
// and one-line InputErrors with file:line:column and key for the refusals.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "models/cluster/quantity.hpp"
#include "sim/util/checked.hpp"
#include "sim/util/units.hpp"

namespace gpumux::cluster {
namespace {

constexpr std::int64_t kKi = 1024;
constexpr std::int64_t kMi = kKi * 1024;
constexpr std::int64_t kGi = kMi * 1024;

TEST(ClusterQuantity, MemoryBinaryAndDecimalSuffixes) {
  EXPECT_EQ(parse_memory_bytes("30Gi"), 30 * kGi);
  EXPECT_EQ(parse_memory_bytes("500Mi"), 500 * kMi);
  EXPECT_EQ(parse_memory_bytes("1Ki"), kKi);
  EXPECT_EQ(parse_memory_bytes("1G"), 1'000'000'000);
  EXPECT_EQ(parse_memory_bytes("2k"), 2000);
  EXPECT_EQ(parse_memory_bytes("1e3"), 1000);
  EXPECT_EQ(parse_memory_bytes("1E3"), 1000);
  EXPECT_EQ(parse_memory_bytes("1E"), 1'000'000'000'000'000'000);  // exa, not an exponent
  EXPECT_EQ(parse_memory_bytes("512"), 512);
  EXPECT_EQ(parse_memory_bytes("+64Mi"), 64 * kMi);
  EXPECT_EQ(parse_memory_bytes(" 1360Gi "), 1360 * kGi);
  EXPECT_EQ(parse_memory_bytes("0"), 0);
}

// Sizes as a scenario's tenants write them read as the tenant parser reads them (issue 24: the
// cluster section refused 50GB and 2GiB).
TEST(ClusterQuantity, MemoryInTenantSizeUnits) {
  for (const char* text : {"50GB", "2GiB", "4096B", "1.5TB", "512MiB", "80 GB"}) {
    EXPECT_EQ(parse_memory_bytes(text), units::parse_size_bytes(text)) << text;
  }
  EXPECT_EQ(parse_memory_bytes("50GB"), 50'000'000'000);
  EXPECT_EQ(parse_memory_bytes("2GiB"), 2 * kGi);
  EXPECT_THROW(parse_memory_bytes("2GB/s"), std::invalid_argument);
  EXPECT_THROW(parse_cpu_millicores("2GB"), std::invalid_argument);  // CPU keeps its grammar
}

TEST(ClusterQuantity, MemoryFractionsAreExact) {
  EXPECT_EQ(parse_memory_bytes("1.5Gi"), 1'610'612'736);  // 1.5 x 2^30, no rounding
  EXPECT_EQ(parse_memory_bytes("0.5Ki"), 512);
  EXPECT_EQ(parse_memory_bytes(".5Ki"), 512);
  EXPECT_EQ(parse_memory_bytes("1.25e3"), 1250);
  EXPECT_EQ(parse_memory_bytes("12.0"), 12);
  EXPECT_THROW(parse_memory_bytes("5e-1Ki"), std::invalid_argument);  // exponent and suffix
}

TEST(ClusterQuantity, MemoryRefusals) {
  EXPECT_THROW(parse_memory_bytes("500m"), std::invalid_argument);   // half a byte: meant Mi
  EXPECT_THROW(parse_memory_bytes("1.5"), std::invalid_argument);    // not a whole byte
  EXPECT_THROW(parse_memory_bytes("0.3Ki"), std::invalid_argument);  // 307.2 bytes
  EXPECT_THROW(parse_memory_bytes("-1Gi"), std::invalid_argument);
  EXPECT_THROW(parse_memory_bytes("1Gb"), std::invalid_argument);  // bits? neither grammar
  EXPECT_THROW(parse_memory_bytes("-1GB"), std::invalid_argument);
  EXPECT_THROW(parse_memory_bytes("Gi"), std::invalid_argument);
  EXPECT_THROW(parse_memory_bytes(""), std::invalid_argument);
  EXPECT_THROW(parse_memory_bytes("1..5"), std::invalid_argument);
  EXPECT_THROW(parse_memory_bytes("1e"), std::invalid_argument);
  EXPECT_THROW(parse_memory_bytes("0x10"), std::invalid_argument);
}

TEST(ClusterQuantity, RangeAtInt64Edge) {
  EXPECT_EQ(parse_memory_bytes("9223372036854775807"), checked::kMaxInt64);
  EXPECT_THROW(parse_memory_bytes("9223372036854775808"), checked::RangeError);
  EXPECT_EQ(parse_memory_bytes("7Ei"), 7 * (std::int64_t{1} << 60));
  EXPECT_THROW(parse_memory_bytes("8Ei"), checked::RangeError);  // 2^63
  EXPECT_THROW(parse_memory_bytes("1e19"), checked::RangeError);
  EXPECT_THROW(parse_memory_bytes("1e999"), checked::RangeError);
  EXPECT_THROW(parse_cpu_millicores("9223372036854775807"), checked::RangeError);  // x1000
}

TEST(ClusterQuantity, CpuMillicores) {
  EXPECT_EQ(parse_cpu_millicores("1500m"), 1500);
  EXPECT_EQ(parse_cpu_millicores("1.5"), 1500);
  EXPECT_EQ(parse_cpu_millicores("96"), 96000);
  EXPECT_EQ(parse_cpu_millicores("0.001"), 1);
  EXPECT_EQ(parse_cpu_millicores("1m"), 1);
  EXPECT_EQ(parse_cpu_millicores("2k"), 2'000'000);
  EXPECT_EQ(parse_cpu_millicores("1e-3"), 1);
  EXPECT_THROW(parse_cpu_millicores("0.0001"), std::invalid_argument);  // finer than 1m
  EXPECT_THROW(parse_cpu_millicores("1.5m"), std::invalid_argument);
  EXPECT_THROW(parse_cpu_millicores("-1"), std::invalid_argument);
  EXPECT_THROW(parse_cpu_millicores("1 core"), std::invalid_argument);
}

TEST(ClusterQuantity, WholeCounts) {
  EXPECT_EQ(parse_resource_count("2"), 2);
  EXPECT_EQ(parse_resource_count("1k"), 1000);
  EXPECT_EQ(parse_resource_count("1000m"), 1);
  EXPECT_THROW(parse_resource_count("1500m"), std::invalid_argument);
  EXPECT_THROW(parse_resource_count("0.5"), std::invalid_argument);
}

TEST(ClusterQuantity, FieldErrorsNameFileLineColumnAndKey) {
  const YAML::Node root = yaml::parse("requests:\n  memory: 500m\n  cpu: 0.0001\n", "pod.yaml");
  std::map<std::string, SourceLocation> locations;
  yaml::Context ctx("pod.yaml", locations);
  const yaml::MapReader top(ctx, yaml::Field{root, "", root.Mark()}, {"requests"});
  const yaml::MapReader requests(ctx, top.require("requests"), {"memory", "cpu"});
  try {
    memory_bytes_of(ctx, requests.require("memory"));
    FAIL() << "500m of memory must be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("pod.yaml:2:11: requests.memory: 'm' is milli", 0), 0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("(got '500m')"), std::string::npos) << e.what();
  }
  try {
    cpu_millicores_of(ctx, requests.require("cpu"));
    FAIL() << "0.0001 CPU must be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("pod.yaml:3:8: requests.cpu: CPU finer than 1m", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace gpumux::cluster
