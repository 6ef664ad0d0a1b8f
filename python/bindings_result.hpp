#pragma once
// The RunResult class of gpumux._gpumux (python/bindings_result.cpp), bound from bindings.cpp:
// a simulation's results as fields, tables (dicts per row, NumPy arrays per column) and save().
#include <pybind11/pybind11.h>

#include <memory>

#include "models/run/result.hpp"

namespace gpumux {

namespace py = pybind11;

/// How Python holds a result: shared, so compare() lists and Result objects keep it alive.
using ResultPtr = std::shared_ptr<RunResult>;

/// Binds the RunResult class into M (before any function that returns one).
void bind_run_result(py::module_& m);

}  // namespace gpumux
