"""What `pip install .` needs is declared (pyproject.toml's [build-system] against setup.py's
imports), and a venv without `wheel` (as of a pyenv or python.org CPython) fails in one line
that says what to install, then installs once it has it, reusing the tree's CMake build."""
import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
# setuptools' distribution name for each module setup.py may import from a package
DISTRIBUTION_OF = {"setuptools": "setuptools", "pkg_resources": "setuptools", "wheel": "wheel"}


def requirement_names():
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    return {r.split(";")[0].split("[")[0].strip().split(">")[0].split("=")[0].split("<")[0]
            .strip().lower() for r in requires}


def imported_top_modules(path):
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules - {"__future__"}


def test_build_system_declares_every_package_setup_py_imports():
    third_party = {m for m in imported_top_modules(REPO / "setup.py")
                   if m not in sys.stdlib_module_names}
    assert third_party, "setup.py imports setuptools at least"
    unknown = third_party - DISTRIBUTION_OF.keys()
    assert not unknown, f"setup.py imports {unknown}: add them to DISTRIBUTION_OF and pyproject"
    missing = {DISTRIBUTION_OF[m] for m in third_party} - requirement_names()
    assert not missing, f"pyproject.toml [build-system] requires lacks {missing}"
    # pip builds a wheel; setuptools before 70.1 has no bdist_wheel without the `wheel` package
    assert "wheel" in requirement_names()


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "GPUMUX_BIN", "GPUMUX_BUILD_DIR", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def test_venv_without_wheel_says_so_then_installs_from_the_tree_build(tmp_path):
    build = Path(os.environ.get("GPUMUX_BIN") or REPO / "build" / "gpumux").resolve().parent
    venv = tmp_path / "bare"
    # no --system-site-packages: pip and setuptools only, as a pyenv CPython's venv has
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "pip"), "install", "--no-build-isolation", "--no-deps",
           "--no-index", str(REPO)]
    env = _env(GPUMUX_PIP_BUILD_DIR=str(tmp_path / "pip"), GPUMUX_CMAKE_BUILD_DIR=str(build))
    failed = subprocess.run(pip, env=env, cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert failed.returncode != 0
    said = [line.strip() for line in (failed.stdout + failed.stderr).splitlines()
            if line.strip().startswith("gpumux: building needs the Python package `wheel`")]
    assert len(said) == 1, failed.stdout[-3000:] + failed.stderr[-3000:]
    assert "pip install wheel" in said[0] and "python3-wheel-whl" in said[0]

    # the README's offline remedy, then the same install succeeds
    wheels = sorted(Path("/usr/share/python-wheels").glob("wheel-*.whl"))
    assert wheels, "Debian's python3-wheel-whl (scripts/install-deps.sh) provides wheel-*.whl"
    subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", str(wheels[-1])],
                   env=env, check=True, capture_output=True, timeout=300)
    done = subprocess.run(pip, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the tree's build was reused: no Release build of its own under GPUMUX_PIP_BUILD_DIR
    assert not (tmp_path / "pip" / "cmake").exists()
    # the bundled binary (the package itself needs numpy and pandas, which this venv lacks)
    bundled = list(venv.glob("lib/python3*/site-packages/gpumux/bin/gpumux"))
    assert len(bundled) == 1, bundled
    assert (venv / "bin" / "gpumux").is_file()
    installed = subprocess.run([str(bundled[0]), "--version"], cwd=tmp_path, env=_env(),
                               capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0 and installed.stdout.startswith("gpumux 0.1.0")
    assert list(bundled[0].parent.parent.glob("_gpumux.cpython-*.so"))
    # nothing written into the source tree (setuptools' build/ and egg-info go elsewhere)
    assert not (REPO / "python" / "gpumux.egg-info").exists()
    assert not (REPO / "build" / "lib").exists()
    assert not (REPO / "build" / "bdist.linux-x86_64").exists()
