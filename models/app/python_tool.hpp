#pragma once

#include <string>
#include <vector>

namespace gpumux {

/// Replaces this process with `PYTHON -m MODULE ARGS...` (gpumux plot / report --html are
/// written in Python with matplotlib). PYTHON: $GPUMUX_PYTHON, else the interpreter the build
/// was configured with, else /usr/bin/python3, else python3 on PATH. PYTHONPATH gets the
/// package this binary belongs to (an installed gpumux/bin/gpumux, or the source tree and build
/// directory it was built from). COMMAND names the subcommand in messages ("plot"). What is
/// missing on the Python side (the compiled _gpumux, the package's dependencies, matplotlib) is
/// one line on stderr naming what to build or install, and exit 2. Returns only when the
/// interpreter could not be started (with the exit status to use, 2, after one line on stderr).
int exec_python_module(const std::string& command, const std::string& module,
                       const std::vector<std::string>& args);

/// The interpreter exec_python_module starts, and the PYTHONPATH it gives it (this binary's
/// package in front of the caller's PYTHONPATH; "" when there is neither), for a caller that
/// starts Python as a child (models/app/cluster_dask.hpp).
std::string tool_python();
std::string tool_python_path();

}  // namespace gpumux
