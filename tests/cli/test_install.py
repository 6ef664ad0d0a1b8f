"""`pip install .` into a fresh venv (Debian packages visible, no network, no build isolation)
builds the extension and the binary with CMake and installs the gpumux package and command;
the installed package then works from an unrelated directory with no PYTHONPATH.

Not skipped: setup.py reuses the tree's CMake build (the one GPUMUX_BIN lies in), brought up to
date for its two targets (gpumux, _gpumux), so after `make` it compiles nothing."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt)

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
TREE_BUILD = Path(os.environ.get("GPUMUX_BIN") or REPO / "build" / "gpumux").resolve().parent


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "GPUMUX_BIN", "GPUMUX_BUILD_DIR", "VIRTUAL_ENV")}
    if shutil.which("ccache") and "CMAKE_CXX_COMPILER_LAUNCHER" not in env:
        env["CMAKE_CXX_COMPILER_LAUNCHER"] = "ccache"
    env.update(extra)
    return env


def test_venv_pip_install_then_import_and_run_elsewhere(tmp_path):
    venv = tmp_path / "v"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--no-build-isolation", "--no-deps",
         "--no-index", str(REPO)],
        env=_env(GPUMUX_PIP_BUILD_DIR=str(tmp_path / "build"),
                 GPUMUX_CMAKE_BUILD_DIR=str(TREE_BUILD)), cwd=tmp_path,
        capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stdout[-4000:] + pip.stderr[-4000:]
    # the tree's build was reused, not a Release build of its own
    assert not (tmp_path / "build" / "cmake").exists()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = (
        "import json, gpumux, pathlib\n"
        "print(json.dumps({'file': gpumux.__file__, 'version': gpumux.__version__,\n"
        "  'scenario': str(gpumux.scenarios.path('quickstart')),\n"
        "  'p99': gpumux.run(gpumux.scenarios.path('quickstart'),\n"
        "                    overrides={'duration': '2s', 'warmup': '0s'}).tenants['latency_p99_ns'].tolist()}))\n")
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=elsewhere, env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    # imported from the venv, not from the source tree or a build folder
    assert Path(info["file"]).resolve().is_relative_to(venv.resolve()), info["file"]
    assert Path(info["scenario"]).resolve().is_relative_to(venv.resolve()), info["scenario"]
    assert info["version"] == "0.1.0"
    assert info["p99"] and all(p > 0 for p in info["p99"])

    # the `gpumux` command: runs a scenario given as a shipped file, from another folder
    command = venv / "bin" / "gpumux"
    assert command.is_file()
    version = subprocess.run([str(command), "--version"], cwd=elsewhere, env=_env(),
                             capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("gpumux 0.1.0"), version.stderr
    run = subprocess.run([str(command), "run", info["scenario"], "--set", "duration=2s",
                          "--set", "warmup=0s", "--json", "-o", "out.h5"],
                         cwd=elsewhere, env=_env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["tenants"]
    assert (elsewhere / "out.h5").stat().st_size > 0

    # another process (as a Dask worker would be) loads the result with the installed package
    load = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import gpumux; print(len(gpumux.load('out.h5').requests))"],
                          cwd=elsewhere, env=_env(), capture_output=True, text=True, timeout=120)
    assert load.returncode == 0 and int(load.stdout) > 0, load.stderr

    check_dask_worker_imports_installed_package(venv, elsewhere)


# A script file, not `python -c`: Dask's worker processes are spawned, so the client must be
# under `if __name__ == "__main__":`. `simulate` is pickled by value (it lives in __main__); the
# worker imports gpumux itself, from wherever its own interpreter finds it.
DASK_SCRIPT = '''
import json
import os


def simulate(path):
    import gpumux
    result = gpumux.run(path, overrides={"duration": "2s", "warmup": "0s"})
    return {"file": gpumux.__file__, "pid": os.getpid(),
            "p99": result.tenants["latency_p99_ns"].tolist()}


if __name__ == "__main__":
    from dask.distributed import Client, LocalCluster

    import gpumux

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        workers = client.scheduler_info()["workers"]
        future = client.submit(simulate, str(gpumux.scenarios.path("quickstart")))
        out = future.result(timeout=120)
    out["client_pid"] = os.getpid()
    out["workers"] = len(workers)
    print("RESULT " + json.dumps(out))
'''


def check_dask_worker_imports_installed_package(venv, folder):
    python = str(venv / "bin" / "python")
    has_dask = subprocess.run([python, "-c", "import dask.distributed"], cwd=folder, env=_env(),
                              capture_output=True, text=True, timeout=120)
    if has_dask.returncode != 0:
        pytest.skip("dask.distributed not installed (Debian package python3-distributed)")
    script = folder / "dask_worker_run.py"
    script.write_text(DASK_SCRIPT)
    proc = subprocess.run([python, str(script)], cwd=folder, env=_env(), capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, proc.stdout[-4000:] + proc.stderr[-4000:]
    out = json.loads(lines[-1][len("RESULT "):])
    assert out["workers"] == 1
    assert out["pid"] != out["client_pid"], "the task ran in the client, not a worker process"
    # the worker imported the venv's installed package (no PYTHONPATH, not the source tree)
    assert Path(out["file"]).resolve().is_relative_to(venv.resolve()), out["file"]
    assert out["p99"] and all(p > 0 for p in out["p99"])


def test_cmake_install_puts_binary_profiles_and_package_under_prefix(tmp_path):
    build = os.environ.get("GPUMUX_BUILD_DIR") or (
        str(Path(os.environ["GPUMUX_BIN"]).parent) if os.environ.get("GPUMUX_BIN") else
        str(REPO / "build"))
    assert (Path(build) / "cmake_install.cmake").exists(), f"{build} is not a CMake build folder"
    prefix = tmp_path / "prefix"
    # Installs what the build folder holds; build gpumux and _gpumux first (make does).
    proc = subprocess.run(["cmake", "--install", build, "--prefix", str(prefix)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert os.access(prefix / "bin" / "gpumux", os.X_OK)
    profiles = sorted(p.name for p in (prefix / "share" / "gpumux" / "profiles").glob("*.yaml"))
    assert "h100-sxm-80gb.yaml" in profiles
    packages = list(prefix.glob("lib/python3*/*-packages/gpumux"))
    assert len(packages) == 1, packages
    package = packages[0]
    assert (package / "__init__.py").exists() and list(package.glob("_gpumux*.so"))
    assert (package / "data" / "scenarios" / "quickstart.yaml").exists()
    proc = subprocess.run([SYSTEM_PYTHON, "-c",
                           "import gpumux; print(gpumux.__file__, gpumux.scenarios.path('quickstart'))"],
                          cwd=tmp_path, env=_env(PYTHONPATH=str(package.parent)),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(str(package))
