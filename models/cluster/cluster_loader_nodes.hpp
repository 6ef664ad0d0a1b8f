#pragma once
// The nodes half of the cluster loader: pools, scheduler, autoscaler (internal to
// models/cluster/cluster_loader*.cpp).

#include "models/cluster/cluster_spec.hpp"
#include "models/config/yaml_reader.hpp"

namespace gpumux::cluster::loader_detail {

/// A `cost_per_hour:` price in dollars per node-hour (finite, >= 0, at most 1e8); fails at
/// `field` otherwise.
double cost_per_hour_of(yaml::Context& ctx, const yaml::Field& field);

/// One `pools:` entry, checked (counts, model, sharing, taints); fails at the offending key.
NodePoolSpec pool_of(yaml::Context& ctx, const yaml::Field& field);

/// The `scheduler:` block (policy, node score, tie breaking, preemption, FGD options); fails at
/// the offending key.
SchedulerSpec scheduler_of(yaml::Context& ctx, const yaml::Field& field);

/// The `autoscaler:` block (expander: random, least-waste, priority with its `priorities`);
/// fails at the offending key.
AutoscalerSpec autoscaler_of(yaml::Context& ctx, const yaml::Field& field);

}  // namespace gpumux::cluster::loader_detail
