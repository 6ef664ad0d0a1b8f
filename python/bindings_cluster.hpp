#pragma once
// What python/bindings.cpp and python/bindings_cluster.cpp share: the front door's request, and
// the cluster part of gpumux._gpumux (run_cluster, cluster_replay, simulate_cluster_nodes).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/app/application.hpp"

namespace gpumux {

namespace py = pybind11;

/// The front door's request (models/app/application.hpp): a path, or YAML text named
/// `source_name` in error messages (its directory resolves relative trace paths; "" -> the cwd).
ScenarioRequest make_request(const std::string& scenario, bool is_path,
                             const std::vector<std::string>& overrides,
                             const std::optional<std::uint64_t>& seed,
                             const std::string& source_name);

/// Binds run_cluster, ClusterReplay, cluster_replay and simulate_cluster_nodes (Dask tasks:
/// python/gpumux/_dask_cluster.py) into M.
void bind_cluster(py::module_& m);

}  // namespace gpumux
