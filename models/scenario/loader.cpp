#include "models/scenario/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "models/config/yaml_reader.hpp"
#include "models/gpu/contention_law.hpp"
#include "models/scenario/loader_parts.hpp"
#include "models/scenario/plan_limits.hpp"
#include "models/strategies/registry.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/units.hpp"

namespace gpumux {

const std::vector<std::string>& plan_platform_names() {
  static const std::vector<std::string> kNames = {"bare", "gke", "device-plugin", "mig-parted"};
  return kNames;
}

const std::vector<std::string>& plan_strategy_names() {
  static const std::vector<std::string> kNames = {
      "dedicated", "mig", "time-slicing", "mps", "mig+time-slicing", "mig+mps"};
  return kNames;
}

namespace {

namespace fs = std::filesystem;
using namespace yaml;
using namespace scenario_detail;

// Copies written entries into the expanded list: count/replicas N > 1 give NAME-0 .. NAME-(N-1).
// Names must stay unique after expansion.
template <typename Spec>
std::vector<Spec> expand(Context& ctx, const std::vector<Spec>& written,
                         const std::vector<Field>& fields, int Spec::*copies, const char* what) {
  std::vector<Spec> expanded;
  struct Owner {
    std::string path;  // key path of the written entry
    bool expanded;     // whether the name was made by expansion
  };
  std::map<std::string, Owner> owner;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const Spec& spec = written[i];
    const int n = spec.*copies;
    for (int k = 0; k < n; ++k) {
      Spec copy = spec;
      if (n > 1) copy.name = spec.name + "-" + std::to_string(k);
      const auto [it, inserted] = owner.emplace(copy.name, Owner{fields[i].path, n > 1});
      if (!inserted) {
        const bool by_expansion = n > 1 || it->second.expanded;
        ctx.fail_at(
            fields[i].path + ".name",
            std::string("duplicate ") + what + " name '" + copy.name + "' (also " +
                it->second.path +
                (by_expansion ? "; count/replicas N > 1 names copies NAME-0 .. NAME-(N-1)" : "") +
                ")");
      }
      expanded.push_back(std::move(copy));
    }
  }
  return expanded;
}

PlanSpec plan_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"gpus", "max_gpus", "strategies", "headroom", "shared_tenant_memory",
                       "platform", "machines", "prices", "max_duration"});
  PlanSpec plan;
  plan.where = ctx.at(field.path, field.mark);
  for (const Field& item : list_of(ctx, map.require("gpus"), true)) {
    const MapReader gpu(ctx, item, {"model", "cost_per_hour", "currency"});
    PlanGpuSpec g;
    g.where = ctx.at(item.path, item.mark);
    g.model = non_empty_text(ctx, gpu.require("model"));
    const Field price = gpu.require("cost_per_hour");
    g.cost_per_hour = number_of(ctx, price);
    if (!(g.cost_per_hour > 0)) ctx.fail(price, "must be > 0, got " + text_of(ctx, price));
    // 1e308 overflowed a setup's summed cost to infinity: "no setup meets every SLO".
    if (g.cost_per_hour > kMaxGpuCostPerHour) {
      ctx.fail(price, "at most 1e+08 per GPU-hour, got " + text_of(ctx, price));
    }
    if (const auto f = gpu.get("currency")) g.currency = non_empty_text(ctx, *f);
    for (const PlanGpuSpec& other : plan.gpus) {
      if (other.model == g.model) ctx.fail(item, "model '" + g.model + "' listed twice");
    }
    plan.gpus.push_back(g);
  }
  for (const PlanGpuSpec& g : plan.gpus) {
    if (g.currency != plan.gpus.front().currency) {
      throw InputError(g.where, "currency " + g.currency + " differs from " +
                                    plan.gpus.front().currency +
                                    " of the first model; give every price in one currency");
    }
  }
  if (const auto f = map.get("max_gpus")) plan.max_gpus = int_of(ctx, *f, 1);
  if (const auto f = map.get("strategies")) {
    for (const Field& item : list_of(ctx, *f, true)) {
      std::vector<std::pair<std::string, std::string>> spellings = {{"exclusive", "dedicated"}};
      for (const std::string& n : plan_strategy_names()) spellings.emplace_back(n, n);
      const std::string name =
          choice_of<std::string>(ctx, item, spellings, plan_strategy_names(), "strategy");
      if (std::find(plan.strategies.begin(), plan.strategies.end(), name) ==
          plan.strategies.end()) {
        plan.strategies.push_back(name);
      }
    }
  } else {
    plan.strategies = plan_strategy_names();
  }
  if (const auto f = map.get("headroom")) plan.headroom = fraction_of(ctx, *f, 0.0, false, 0.99);
  if (const auto f = map.get("shared_tenant_memory")) {
    plan.shared_tenant_memory = fraction_of(ctx, *f, 0.0, true, 1.0);
  }
  if (const auto f = map.get("max_duration")) plan.max_duration = positive_duration_of(ctx, *f);
  if (const auto f = map.get("platform")) {
    std::vector<std::pair<std::string, std::string>> spellings;
    for (const std::string& n : plan_platform_names()) spellings.emplace_back(n, n);
    plan.platform = choice_of<std::string>(ctx, *f, spellings, plan_platform_names(), "platform");
    plan.platform_where = ctx.at(f->path, f->mark);
  }
  if (const auto f = map.get("prices")) {
    plan.prices = ctx.resolve_path(*f, non_empty_text(ctx, *f)).string();
    plan.prices_where = ctx.at(f->path, f->mark);
  }
  if (const auto f = map.get("machines")) {
    plan.machines_where = ctx.at(f->path, f->mark);
    for (const Field& item : list_of(ctx, *f, true)) {
      plan.machines.push_back(non_empty_text(ctx, item));
    }
  }
  return plan;
}

void read_scenario(Context& ctx, const YAML::Node& root, Scenario& scenario) {
  if (root.IsNull()) {
    throw InputError(SourceLocation{scenario.source_file, 0, 0, ""},
                     "empty scenario (expected a mapping with name, duration, gpus, tenants)");
  }
  const MapReader map(ctx, Field{root, "", root.Mark()},
                      {"name", "description", "seed", "duration", "warmup", "gpus", "tenants",
                       "faults", "output", "plan", "allow_large", "cluster", "contention_law"},
                      {{"sharing", "a gpus entry"}, {"workload", "a tenants entry"}});
  if (const auto f = map.get("plan")) scenario.plan = plan_of(ctx, *f);
  const bool planning = scenario.plan.has_value();
  // `cluster:` is read by models/cluster/cluster_loader.hpp (a layer above); here it is only
  // accepted, and it makes duration, gpus and tenants optional (a cluster has its own).
  scenario.has_cluster = map.get("cluster").has_value();
  const bool cluster = scenario.has_cluster;
  scenario.name = non_empty_text(ctx, map.require("name"));
  if (const auto f = map.get("description")) scenario.description = text_of(ctx, *f);
  scenario.seed = 1;
  if (const auto f = map.get("seed")) scenario.seed = seed_of(ctx, *f);
  if (const auto f = map.get("allow_large")) scenario.allow_large = bool_of(ctx, *f);
  if (const auto f = map.get("contention_law")) {
    scenario.contention_law = text_of(ctx, *f);
    if (find_contention_law(scenario.contention_law) == nullptr) {
      ctx.fail(*f, "unknown contention law '" + scenario.contention_law +
                       "'; use one of: " + join(contention_law_names(), ", "));
    }
  }
  if (const auto f = map.get("duration"); f || !cluster) {
    scenario.duration = positive_duration_of(ctx, f ? *f : map.require("duration"));
  }
  if (const auto f = map.get("warmup")) {
    scenario.warmup = duration_of(ctx, *f);
    if (scenario.warmup >= scenario.duration) {
      ctx.fail(*f, "warmup (" + units::format_duration(scenario.warmup) +
                       ") must be shorter than duration (" +
                       units::format_duration(scenario.duration) + ")");
    }
  }

  const std::optional<Field> gpus_field = map.get("gpus");
  const std::vector<Field> gpu_fields =
      ((planning || cluster) && !gpus_field)
          ? std::vector<Field>{}
          : list_of(ctx, gpus_field ? *gpus_field : map.require("gpus"), true);
  std::vector<GpuSpec> gpus;
  for (const Field& field : gpu_fields) gpus.push_back(gpu_of(ctx, field));
  scenario.gpus = expand(ctx, gpus, gpu_fields, &GpuSpec::count, "gpu");

  std::vector<std::string> gpu_names;
  for (const GpuSpec& g : scenario.gpus) gpu_names.push_back(g.name);

  const std::optional<Field> tenants_field = map.get("tenants");
  const std::vector<Field> tenant_fields =
      (cluster && !tenants_field)
          ? std::vector<Field>{}
          : list_of(ctx, tenants_field ? *tenants_field : map.require("tenants"), true);
  std::vector<TenantSpec> tenants;
  for (const Field& field : tenant_fields) {
    tenants.push_back(tenant_of(ctx, field, gpus, gpu_names, planning));
    if (tenants.back().active_from >= scenario.duration) {
      ctx.fail(field, "active.from (" + units::format_duration(tenants.back().active_from) +
                          ") is not before the scenario's duration (" +
                          units::format_duration(scenario.duration) + "): the tenant never runs");
    }
  }
  scenario.tenants = expand(ctx, tenants, tenant_fields, &TenantSpec::replicas, "tenant");
  if (planning && scenario.tenants.size() > static_cast<std::size_t>(kMaxPlanTenants)) {
    // The planner's limit (models/plan/planner.cpp), refused here so `validate` agrees.
    ctx.fail(tenants_field ? *tenants_field : map.require("tenants"),
             "gpumux plan handles up to " + std::to_string(kMaxPlanTenants) +
                 " tenants, the scenario has " + std::to_string(scenario.tenants.size()));
  }

  if (const auto f = map.get("faults")) {
    std::set<std::string> names;
    for (const TenantSpec& t : scenario.tenants) names.insert(t.name);
    for (const Field& field : list_of(ctx, *f, false)) {
      scenario.faults.push_back(fault_of(ctx, field, tenants, names));
    }
  }
  if (const auto f = map.get("output")) scenario.output = output_of(ctx, *f);
}

}  // namespace

Override parse_override(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    SourceLocation where;
    where.file = kOverrideSource;
    where.key_path = text;
    throw InputError(where, "expected KEY=VALUE, e.g. --set gpus.0.sharing.timeslice=2ms");
  }
  return {trim(text.substr(0, equals)), text.substr(equals + 1)};
}

namespace {

// The node at dotted PATH (sequence indices as numbers) of ROOT, or an invalid node; looking
// adds nothing.
YAML::Node node_at(const YAML::Node& root, const std::string& path) {
  YAML::Node cur;
  cur.reset(root);
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t dot = path.find('.', begin);
    const std::string part = path.substr(begin, dot == std::string::npos ? dot : dot - begin);
    const YAML::Node& here = cur;
    YAML::Node next;
    if (here.IsSequence()) {
      std::size_t index = 0;
      try {
        index = std::stoul(part);
      } catch (const std::exception&) {
        return YAML::Node(YAML::NodeType::Undefined);
      }
      if (index >= here.size()) return YAML::Node(YAML::NodeType::Undefined);
      next = here[index];
    } else if (here.IsMap() && here[part]) {
      next = here[part];
    } else {
      return YAML::Node(YAML::NodeType::Undefined);
    }
    cur.reset(next);
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return cur;
}

const Strategy* mode_of_block(const YAML::Node& block) {
  if (!block.IsDefined() || !block.IsMap()) return &default_strategy();
  const YAML::Node& map = block;
  if (!map["mode"] || !map["mode"].IsScalar()) return &default_strategy();
  return find_strategy(map["mode"].Scalar());
}

// `--set gpus.N.sharing.mode=MODE` that changes the mode drops the file's `replicas` of that
// block (unless --set gives it too), as `compare --strategies MODE` does
// (strategy_variants.cpp): the key means time-sliced slots under time-slicing but an equal
// thread and pinned-memory share under MPS, so the file's value does not carry over. BEFORE is
// the tree as written, ROOT after the overrides, OVERRIDDEN their normalised key paths.
void drop_replicas_of_another_mode(const YAML::Node& before, YAML::Node& root,
                                   const std::vector<std::string>& overridden) {
  const std::string suffix = ".sharing.mode";
  for (const std::string& path : overridden) {
    if (path.rfind("gpus.", 0) != 0 || path.size() <= suffix.size() ||
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string block_path = path.substr(0, path.size() - std::string(".mode").size());
    if (std::find(overridden.begin(), overridden.end(), block_path + ".replicas") !=
        overridden.end()) {
      continue;
    }
    YAML::Node block = node_at(root, block_path);
    if (!block.IsDefined() || !block.IsMap() || !block["replicas"]) continue;
    const Strategy* was = mode_of_block(node_at(before, block_path));
    const Strategy* now = mode_of_block(block);
    if (was == nullptr || now == nullptr || was == now) continue;
    block.remove("replicas");
  }
}

}  // namespace

Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const std::vector<Override>& overrides) {
  YAML::Node root = yaml::parse(yaml_text, source_name);
  Scenario scenario;
  scenario.source_file = source_name;
  Context ctx(source_name, scenario.locations);
  // `cluster: FILE` refers to a cluster file: --set cluster.KEY edits that file
  // (models/cluster/cluster_loader.hpp), not this tree.
  const YAML::Node& read_only = root;  // const operator[]: looking does not add the key
  const YAML::Node cluster = root.IsMap() ? read_only["cluster"] : YAML::Node();
  const bool cluster_file = cluster && cluster.IsScalar();
  const YAML::Node before = overrides.empty() ? YAML::Node() : YAML::Clone(root);
  std::vector<std::string> overridden;
  for (const Override& override : overrides) {
    if (cluster_file && override.key_path.rfind("cluster.", 0) == 0) continue;
    overridden.push_back(apply_override(root, override));
    ctx.add_override(overridden.back());
  }
  if (!overridden.empty()) drop_replicas_of_another_mode(before, root, overridden);
  read_scenario(ctx, root, scenario);
  return scenario;
}

Scenario load_scenario_file(const std::string& path, const std::vector<Override>& overrides) {
  SourceLocation where;
  where.file = path;
  std::string text;
  try {
    text = input_file::read(path, input_file::kMaxScenarioBytes, "scenario file");
  } catch (const input_file::FileError& e) {
    throw InputError(where, e.what());
  }
  return load_scenario_text(text, path, overrides);
}

}  // namespace gpumux
