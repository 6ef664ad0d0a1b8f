#include "models/plan/machine_types.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/config/input_error.hpp"
#include "models/config/yaml_reader.hpp"
#include "sim/util/input_file.hpp"

namespace gpumux {

const std::vector<std::pair<std::string_view, std::string_view>>& embedded_prices();

namespace {

using yaml::Context;
using yaml::Field;
using yaml::MapReader;

const MachineType* find_machine_type(const PriceTable& table, const std::string& name) {
  for (const MachineType& m : table.machines) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

bool is_iso_date(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i != 4 && i != 7 && (text[i] < '0' || text[i] > '9')) return false;
  }
  const int month = std::stoi(text.substr(5, 2));
  const int day = std::stoi(text.substr(8, 2));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

}  // namespace

std::string PriceTable::summary() const {
  return fmt::format("{} {} {} {}, {} ({})", provider, region, pricing, currency, date, origin);
}

PriceTable parse_price_table(const std::string& yaml_text, const std::string& source_name) {
  std::map<std::string, SourceLocation> locations;
  Context ctx(source_name, locations);
  const YAML::Node root = yaml::parse(yaml_text, source_name);
  const MapReader map(ctx, Field{root, "", root.Mark()},
                      {"provider", "region", "pricing", "currency", "date", "source", "machines"});
  PriceTable t;
  t.provider = yaml::non_empty_text(ctx, map.require("provider"));
  t.region = yaml::non_empty_text(ctx, map.require("region"));
  t.pricing = yaml::non_empty_text(ctx, map.require("pricing"));
  t.currency = yaml::non_empty_text(ctx, map.require("currency"));
  const Field date = map.require("date");
  t.date = yaml::text_of(ctx, date);
  if (!is_iso_date(t.date)) {
    ctx.fail(date, "date '" + t.date + "': expected the day the prices hold, YYYY-MM-DD");
  }
  t.source = yaml::non_empty_text(ctx, map.require("source"));
  for (const Field& item : yaml::list_of(ctx, map.require("machines"), true)) {
    const MapReader m(ctx, item, {"name", "gpu_model", "gpus", "host_per_hour"});
    MachineType type;
    const Field name = m.require("name");
    type.name = yaml::non_empty_text(ctx, name);
    if (find_machine_type(t, type.name) != nullptr) {
      ctx.fail(name, "duplicate machine type '" + type.name + "'");
    }
    type.gpu_model = yaml::non_empty_text(ctx, m.require("gpu_model"));
    type.gpus = yaml::int_of(ctx, m.require("gpus"), 1);
    const Field price = m.require("host_per_hour");
    type.host_cost_per_hour = yaml::number_of(ctx, price);
    if (!(type.host_cost_per_hour >= 0) || !std::isfinite(type.host_cost_per_hour)) {
      ctx.fail(price, "host_per_hour must be a finite price >= 0 (" + t.currency + " per hour)");
    }
    t.machines.push_back(std::move(type));
  }
  return t;
}

const PriceTable& builtin_price_table() {
  static const PriceTable kTable = [] {
    for (const auto& [stem, text] : embedded_prices()) {
      if (stem == "gcp-us-central1") {
        PriceTable t = parse_price_table(std::string(text),
                                         "calibration/prices/" + std::string(stem) + ".yaml");
        t.origin = "built-in";
        return t;
      }
    }
    throw std::logic_error("the built-in price table gcp-us-central1 is not embedded");
  }();
  return kTable;
}

const PriceTable& plan_price_table(const PlanSpec& plan) {
  if (plan.prices.empty()) return builtin_price_table();
  // Read once per path: the planner and `validate` ask several times, and machine types are
  // handed out by pointer.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<PriceTable>> tables;
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = tables.find(plan.prices);
  if (found == tables.end()) {
    std::string text;
    try {
      text = input_file::read(plan.prices, input_file::kMaxScenarioBytes, "price table");
    } catch (const UserError& e) {
      throw InputError(plan.prices_where, "plan.prices " + plan.prices + ": " + e.what());
    }
    auto table = std::make_unique<PriceTable>(parse_price_table(text, plan.prices));
    table->origin = plan.prices;
    found = tables.emplace(plan.prices, std::move(table)).first;
  }
  const PriceTable& table = *found->second;
  if (!plan.gpus.empty() && plan.gpus.front().currency != table.currency) {
    throw InputError(plan.prices_where,
                     fmt::format("plan.prices {}: prices in {}, plan.gpus in {}; give both in "
                                 "one currency",
                                 plan.prices, table.currency, plan.gpus.front().currency));
  }
  return table;
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
  const PriceTable& table = plan_price_table(plan);
  for (const std::string& name : plan.machines) {
    if (find_machine_type(table, name) == nullptr) {
      std::vector<std::string> known;
      for (const MachineType& m : table.machines) known.push_back(m.name);
      throw InputError(plan.machines_where,
                       fmt::format("plan.machines: unknown machine type '{}' in the price table "
                                   "({}); known: {}",
                                   name, table.summary(), fmt::join(known, ", ")));
    }
  }
  for (const MachineType& type : table.machines) {
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
