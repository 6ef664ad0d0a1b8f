// Price tables (models/plan/machine_types.hpp): the built-in table is well-formed data whose
// machine types each name a built-in GPU model, and a malformed table is refused with the line
// and key of the fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/plan/machine_types.hpp"

namespace gpumux {
namespace {

TEST(PriceTable, BuiltinNamesItsRegionDateAndEveryGpuModelIsBuiltIn) {
  const PriceTable& t = builtin_price_table();
  EXPECT_EQ(t.provider, "gcp");
  EXPECT_EQ(t.region, "us-central1");
  EXPECT_EQ(t.currency, "USD");
  EXPECT_EQ(t.date.size(), 10u);
  EXPECT_EQ(t.origin, "built-in");
  EXPECT_NE(t.source.find("skypilot-catalog"), std::string::npos);
  ASSERT_FALSE(t.machines.empty());
  const std::vector<std::string> models = embedded_profile_names();
  std::set<std::string> names;
  for (const MachineType& m : t.machines) {
    EXPECT_NE(std::find(models.begin(), models.end(), m.gpu_model), models.end()) << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << "duplicate " << m.name;
    EXPECT_GT(m.host_cost_per_hour, 0) << m.name;
  }
  // One family's host price grows with its GPUs per node (the VM's vCPUs and memory do).
  for (const MachineType& a : t.machines) {
    for (const MachineType& b : t.machines) {
      if (a.gpu_model == b.gpu_model && a.name.substr(0, 9) == b.name.substr(0, 9) &&
          a.gpus < b.gpus) {
        EXPECT_LT(a.host_cost_per_hour, b.host_cost_per_hour) << a.name << " " << b.name;
      }
    }
  }
}

std::string table(const std::string& date, const std::string& machines) {
  return "provider: p\nregion: r\npricing: spot\ncurrency: EUR\ndate: " + date +
         "\nsource: s\nmachines:\n" + machines;
}

TEST(PriceTable, ParsesAFileOfTheSameForm) {
  const PriceTable t = parse_price_table(
      table("2025-02-28", "  - {name: n1, gpu_model: l4-24gb, gpus: 2, host_per_hour: 0.5}\n"),
      "mine.yaml");
  ASSERT_EQ(t.machines.size(), 1u);
  EXPECT_EQ(t.machines[0].gpus, 2);
  EXPECT_DOUBLE_EQ(t.machines[0].host_cost_per_hour, 0.5);
  EXPECT_EQ(t.pricing, "spot");
  EXPECT_EQ(t.currency, "EUR");
}

void expect_refused(const std::string& text, const std::string& where, const std::string& word) {
  try {
    parse_price_table(text, "mine.yaml");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(where), std::string::npos) << message;
    EXPECT_NE(message.find(word), std::string::npos) << message;
  }
}

TEST(PriceTable, RefusesWithLineAndKey) {
  const std::string ok = "  - {name: n1, gpu_model: l4-24gb, gpus: 1, host_per_hour: 0.5}\n";
  expect_refused(table("2025-13-01", ok), "mine.yaml:5", "date");
  expect_refused(table("yesterday", ok), "mine.yaml:5", "YYYY-MM-DD");
  expect_refused(table("2025-01-01", ok + ok), "mine.yaml:9", "duplicate machine type 'n1'");
  expect_refused(
      table("2025-01-01", "  - {name: n1, gpu_model: l4-24gb, gpus: 0, host_per_hour: 0.5}\n"),
      "mine.yaml:8", "gpus");
  expect_refused(
      table("2025-01-01", "  - {name: n1, gpu_model: l4-24gb, gpus: 1, host_per_hour: -2}\n"),
      "mine.yaml:8", "host_per_hour");
  expect_refused(table("2025-01-01", "  - {name: n1, gpu_model: l4-24gb, gpus: 1, price: 2}\n"),
                 "mine.yaml:8", "price");
  expect_refused("provider: p\n", "mine.yaml", "region");
}

}  // namespace
}  // namespace gpumux
