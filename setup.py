"""Build step of `pip install .` (pyproject.toml): configures and builds the pybind11 extension
`_gpumux` and the `gpumux` binary with CMake, then puts both, and the shipped scenarios, into
the package:

    gpumux/_gpumux*.so         the extension (import gpumux)
    gpumux/bin/gpumux          the command (the `gpumux` console script runs it)
    gpumux/data/scenarios/     scenarios/*.yaml and their traces (gpumux.scenarios.path(...))

Nothing is downloaded. Environment:
    GPUMUX_PIP_BUILD_DIR         setuptools' build folder, with the CMake build in its cmake/
                                 (default: build/pip in this tree)
    CMAKE_BUILD_PARALLEL_LEVEL   parallel jobs (default 2)
    CMAKE_CXX_COMPILER_LAUNCHER  e.g. ccache (used automatically when ccache is on PATH)
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUILD_BASE = os.environ.get("GPUMUX_PIP_BUILD_DIR") or str(ROOT / "build" / "pip")


class BinaryDistribution(Distribution):
    """The wheel holds a compiled extension and binary: platform-specific."""

    def has_ext_modules(self):
        return True


class build_with_cmake(build_py):
    def run(self):
        super().run()
        build_dir = Path(BUILD_BASE).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir),
                     "-DCMAKE_BUILD_TYPE=Release", f"-DPython_EXECUTABLE={sys.executable}",
                     "-DGPUMUX_BUILD_TESTS=OFF", "-DGPUMUX_BUILD_BENCH=OFF",
                     "-DGPUMUX_BUILD_PYTHON=ON"]
        if shutil.which("ninja") and not (build_dir / "Makefile").exists():
            configure += ["-G", "Ninja"]
        launcher = os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER") or (
            "ccache" if shutil.which("ccache") else "")
        if launcher:
            configure.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}")
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(["cmake", "--build", str(build_dir), "-j", jobs,
                        "--target", "gpumux", "_gpumux"], check=True)

        package = Path(self.build_lib) / "gpumux"
        extensions = list((build_dir / "python" / "gpumux").glob("_gpumux*.so"))
        if not extensions:
            raise RuntimeError(f"CMake built no _gpumux*.so in {build_dir / 'python' / 'gpumux'}")
        for extension in extensions:
            shutil.copy2(extension, package / extension.name)
        (package / "bin").mkdir(exist_ok=True)
        shutil.copy2(build_dir / "gpumux", package / "bin" / "gpumux")
        scenarios = package / "data" / "scenarios"
        if scenarios.exists():
            shutil.rmtree(scenarios)
        shutil.copytree(ROOT / "scenarios", scenarios)


os.makedirs(BUILD_BASE, exist_ok=True)  # egg-info goes there too, not into python/
setup(cmdclass={"build_py": build_with_cmake}, distclass=BinaryDistribution,
      options={"build": {"build_base": BUILD_BASE},
               "egg_info": {"egg_base": BUILD_BASE}})
