"""Build step of `pip install .` (pyproject.toml): builds the pybind11 extension `_gpumux` and the
`gpumux` binary with CMake, then puts both, and the shipped scenarios, into the package:

    gpumux/_gpumux*.so         the extension (import gpumux)
    gpumux/bin/gpumux          the command (the `gpumux` console script runs it)
    gpumux/data/scenarios/     scenarios/ (gpumux.scenarios.path(...))

Nothing is downloaded, and nothing is written into the source tree. Which CMake build:
  - GPUMUX_CMAKE_BUILD_DIR when set: reused when it is this tree's build for this interpreter,
    configured there when it holds no CMake build, refused in one line otherwise;
  - the tree's own build (`make`'s build/), when it exists and its
    Python has this interpreter's extension suffix (.cpython-311-x86_64-linux-gnu.so): it is
    brought up to date (`cmake --build`, its two targets only) and its files are copied, so an
    install after `make` compiles nothing;
  - otherwise a Release build of the two targets in GPUMUX_PIP_BUILD_DIR/cmake (default
    ~/.cache/gpumux/pip/<suffix>), kept for the next install, through ccache when it is on PATH.
Progress: pip shows the build's output only with -v; without it, a summary line (the step
reached, the time spent) goes to the terminal at most every 10 s (scripts/build_progress.py).
Environment:
    GPUMUX_CMAKE_BUILD_DIR       the CMake build to use (default: build/ in this tree if it fits)
    GPUMUX_PIP_BUILD_DIR         setuptools' build folder and the fallback CMake build
    CMAKE_BUILD_PARALLEL_LEVEL   parallel jobs (default 2)
    CMAKE_CXX_COMPILER_LAUNCHER  e.g. ccache (used automatically when ccache is on PATH)
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))
from build_progress import run_with_progress  # noqa: E402 (scripts/, beside this file)
EXTENSION_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
CACHE_HOME = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
BUILD_BASE = Path(os.environ.get("GPUMUX_PIP_BUILD_DIR")
                  or CACHE_HOME / "gpumux" / "pip" / EXTENSION_SUFFIX.strip(".")).resolve()

# setuptools before 70.1 has no bdist_wheel of its own: pip's wheel build needs the `wheel`
# package, which a bare venv of a pyenv or python.org CPython lacks ("invalid command
# 'bdist_wheel'", already while pip prepares the metadata). Say so in one line instead.
if (any(step in sys.argv for step in ("bdist_wheel", "dist_info"))  # pip's metadata, wheel
        and importlib.util.find_spec("wheel") is None
        and importlib.util.find_spec("setuptools.command.bdist_wheel") is None):
    sys.exit(f"gpumux: building needs the Python package `wheel`, which {sys.executable} "
             "lacks: `pip install wheel` (offline: `pip install --no-index "
             "/usr/share/python-wheels/wheel-*.whl`, Debian's python3-wheel-whl)")


class BinaryDistribution(Distribution):
    """The wheel holds a compiled extension and binary: platform-specific."""

    def has_ext_modules(self):
        return True


def cache_value(build_dir: Path, key: str) -> str | None:
    """KEY's value in BUILD_DIR/CMakeCache.txt (None when the file or the key is missing)."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    match = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", cache.read_text(errors="replace"),
                      re.MULTILINE)
    return match.group(1) if match else None


def python_suffix(python: str) -> str | None:
    """The extension suffix of interpreter PYTHON (None when it does not run)."""
    probe = subprocess.run([python, "-c", "import sysconfig; "
                            "print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                           capture_output=True, text=True)
    return probe.stdout.strip() if probe.returncode == 0 else None


def reusable_tree_build() -> Path | None:
    """The tree's CMake build when its extension loads in this interpreter, else None."""
    build_dir = (ROOT / "build").resolve()
    python = cache_value(build_dir, "Python_EXECUTABLE")
    if cache_value(build_dir, "CMAKE_HOME_DIRECTORY") != str(ROOT) or not python:
        return None
    return build_dir if python_suffix(python) == EXTENSION_SUFFIX else None


def given_build() -> Path | None:
    """GPUMUX_CMAKE_BUILD_DIR when set: a build of this tree for this interpreter is reused; a
    folder without a CMake build is configured as one (configure_own_build); a build of another
    tree or another Python stops the install with one line saying why (never silently ignored)."""
    given = os.environ.get("GPUMUX_CMAKE_BUILD_DIR")
    if not given:
        return None
    build_dir = Path(given).expanduser().resolve()
    if cache_value(build_dir, "CMAKE_HOME_DIRECTORY") is None:
        if build_dir.exists() and not build_dir.is_dir():
            sys.exit(f"gpumux: GPUMUX_CMAKE_BUILD_DIR={given}: not a folder")
        return configure_own_build(build_dir)
    home = cache_value(build_dir, "CMAKE_HOME_DIRECTORY")
    if home != str(ROOT):
        sys.exit(f"gpumux: GPUMUX_CMAKE_BUILD_DIR={given}: a CMake build of {home}, not of "
                 f"{ROOT}: give this tree's build, or an empty folder to build in")
    python = cache_value(build_dir, "Python_EXECUTABLE") or "?"
    suffix = python_suffix(python) if python != "?" else None
    if suffix != EXTENSION_SUFFIX:
        sys.exit(f"gpumux: GPUMUX_CMAKE_BUILD_DIR={given}: built for {python} "
                 f"({suffix or 'no extension suffix'}), not {sys.executable} "
                 f"({EXTENSION_SUFFIX}): its _gpumux would not import here; give an empty "
                 "folder to build in, or unset it")
    return build_dir


def configure_own_build(build_dir: Path | None = None) -> Path:
    """A Release build of gpumux and _gpumux for this interpreter, out of the source tree."""
    build_dir = build_dir or BUILD_BASE / "cmake"
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
    print(f"gpumux: configuring a Release build in {build_dir} (a cold build compiles about "
          "120 files: 20-40 min on 2 cores; `pip install -v` shows each step)", flush=True)
    subprocess.run(configure, check=True)
    return build_dir


class build_with_cmake(build_py):
    def run(self):
        super().run()
        build_dir = given_build() or reusable_tree_build() or configure_own_build()
        print(f"gpumux: CMake build {build_dir}", flush=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        run_with_progress(["cmake", "--build", str(build_dir), "-j", jobs,
                           "--target", "gpumux", "_gpumux"],
                          f"building gpumux and _gpumux in {build_dir}")

        package = Path(self.build_lib) / "gpumux"
        extension = build_dir / "python" / "gpumux" / f"_gpumux{EXTENSION_SUFFIX}"
        if not extension.is_file():
            raise RuntimeError(f"CMake built no {extension}")
        shutil.copy2(extension, package / extension.name)
        (package / "bin").mkdir(exist_ok=True)
        shutil.copy2(build_dir / "gpumux", package / "bin" / "gpumux")
        scenarios = package / "data" / "scenarios"
        if scenarios.exists():
            shutil.rmtree(scenarios)
        shutil.copytree(ROOT / "scenarios", scenarios)


BUILD_BASE.mkdir(parents=True, exist_ok=True)  # egg-info goes there too, not into python/
setup(cmdclass={"build_py": build_with_cmake}, distclass=BinaryDistribution,
      options={"build": {"build_base": str(BUILD_BASE / "setuptools")},
               "egg_info": {"egg_base": str(BUILD_BASE)}})
