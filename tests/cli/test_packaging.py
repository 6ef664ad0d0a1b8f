"""What `pip install .` needs is declared (pyproject.toml's [build-system] against setup.py's
imports), and a venv without `wheel` (as of a pyenv or python.org CPython) fails in one line
that says what to install, then installs once it has it, reusing the tree's CMake build; the same
from a venv of a pyenv CPython, whose `gpumux` command runs without numpy or pandas."""
import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

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
    # the project's own build helpers (scripts/*.py, which setup.py puts on sys.path) and
    # what they import count too
    own = {p.stem for p in (REPO / "scripts").glob("*.py")}
    imported = imported_top_modules(REPO / "setup.py")
    for module in imported & own:
        imported |= imported_top_modules(REPO / "scripts" / f"{module}.py")
    third_party = {m for m in imported if m not in sys.stdlib_module_names and m not in own}
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

    # docs/install.md's offline remedy, then the same install succeeds
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
    command = subprocess.run([str(venv / "bin" / "gpumux"), "--version"], cwd=tmp_path,
                             env=_env(), capture_output=True, text=True, timeout=60)
    assert command.returncode == 0 and command.stdout.startswith("gpumux 0.1.0"), command.stderr
    installed = subprocess.run([str(bundled[0]), "--version"], cwd=tmp_path, env=_env(),
                               capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0 and installed.stdout.startswith("gpumux 0.1.0")
    assert list(bundled[0].parent.parent.glob("_gpumux.cpython-*.so"))
    # nothing written into the source tree (setuptools' build/ and egg-info go elsewhere)
    assert not (REPO / "python" / "gpumux.egg-info").exists()
    assert not (REPO / "build" / "lib").exists()
    assert not (REPO / "build" / "bdist.linux-x86_64").exists()


def foreign_cpythons():
    """CPython interpreters that are not Debian's (pyenv's versions), as a user's pyenv or
    python.org install would be: (path, extension suffix) for each that runs."""
    roots = [Path(os.environ["PYENV_ROOT"])] if os.environ.get("PYENV_ROOT") else []
    roots.append(Path.home() / ".pyenv")
    found = []
    for root in roots:
        for python in sorted(root.glob("versions/3.*/bin/python3")):
            probe = subprocess.run(
                [str(python), "-c", "import sys, sysconfig; print(sys.version_info >= (3, 11), "
                 "sysconfig.get_config_var('EXT_SUFFIX'))"],
                capture_output=True, text=True, timeout=60)
            if probe.returncode == 0 and probe.stdout.split()[0] == "True":
                found.append((python, probe.stdout.split()[1]))
    return found


def test_pyenv_cpython_venv_installs_and_its_command_runs_without_numpy(tmp_path):
    """The offline install from a venv of a non-Debian CPython (pyenv-style, no Debian packages
    visible): the `gpumux` command runs (it never imports the package, whose Python API needs
    numpy and pandas), and `import gpumux` says in one line what is missing."""
    build = Path(os.environ.get("GPUMUX_BIN") or REPO / "build" / "gpumux").resolve().parent
    tree_suffixes = {p.name[len("_gpumux"):]
                     for p in (build / "python" / "gpumux").glob("_gpumux*.so")}
    candidates = [(p, s) for p, s in foreign_cpythons() if s in tree_suffixes]
    if not candidates:
        pytest.skip("no pyenv CPython with the tree build's extension ABI on this machine")
    python, _ = candidates[-1]
    venv = tmp_path / "pyenv-venv"
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True, timeout=300)
    assert Path(os.path.realpath(venv / "bin" / "python")).resolve() != \
        Path(SYSTEM_PYTHON).resolve()
    env = _env(GPUMUX_PIP_BUILD_DIR=str(tmp_path / "pip"), GPUMUX_CMAKE_BUILD_DIR=str(build))
    wheels = sorted(Path("/usr/share/python-wheels").glob("wheel-*.whl"))
    assert wheels, "Debian's python3-wheel-whl (scripts/install-deps.sh) provides wheel-*.whl"
    subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", str(wheels[-1])],
                   env=env, check=True, capture_output=True, timeout=300)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation",
                           "--no-deps", "--no-index", str(REPO)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not (tmp_path / "pip" / "cmake").exists()  # the tree's build was reused

    command = str(venv / "bin" / "gpumux")
    version = subprocess.run([command, "--version"], cwd=tmp_path, env=_env(),
                             capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("gpumux 0.1.0"), version.stderr
    run = subprocess.run([command, "run", str(REPO / "scenarios" / "quickstart.yaml"),
                          "--set", "duration=1s", "--set", "warmup=0s", "--json"],
                         cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert '"tenants"' in run.stdout
    bad = subprocess.run([command, "run", str(tmp_path / "missing.yaml")], cwd=tmp_path,
                         env=_env(), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr

    has_numpy = subprocess.run([str(venv / "bin" / "python"), "-c", "import numpy"],
                               capture_output=True, timeout=60).returncode == 0
    imported = subprocess.run([str(venv / "bin" / "python"), "-c", "import gpumux"],
                              cwd=tmp_path, env=_env(), capture_output=True, text=True,
                              timeout=120)
    if has_numpy:
        return
    assert imported.returncode != 0
    last = imported.stderr.strip().splitlines()[-1]
    assert "gpumux: the Python API needs numpy, pandas, h5py and PyYAML" in last, imported.stderr
    assert "the gpumux command works without them" in last


@pytest.mark.parametrize("cache,why", [
    ("CMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere/gpumux\n", "a CMake build of /elsewhere/gpumux"),
    (f"CMAKE_HOME_DIRECTORY:INTERNAL={REPO}\nPython_EXECUTABLE:FILEPATH=/bin/false\n",
     "built for /bin/false (no extension suffix)"),
    (None, "not a folder"),
])
def test_given_build_dir_that_does_not_fit_is_refused_in_one_line(tmp_path, cache, why):
    """GPUMUX_CMAKE_BUILD_DIR is never ignored: a build of another tree, one for another Python,
    or a path that is not a folder stops the install with one line naming the variable."""
    given = tmp_path / "given"
    if cache is None:
        given.write_text("a file\n")
    else:
        given.mkdir()
        (given / "CMakeCache.txt").write_text(cache)
    venv = tmp_path / "v"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = _env(GPUMUX_PIP_BUILD_DIR=str(tmp_path / "pip"), GPUMUX_CMAKE_BUILD_DIR=str(given))
    failed = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation",
                             "--no-deps", "--no-index", str(REPO)],
                            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert failed.returncode != 0
    said = [line.strip() for line in (failed.stdout + failed.stderr).splitlines()
            if line.strip().startswith(f"gpumux: GPUMUX_CMAKE_BUILD_DIR={given}: ")]
    assert len(said) == 1 and why in said[0], failed.stdout[-3000:] + failed.stderr[-3000:]
    assert not (tmp_path / "pip" / "cmake").exists()  # no build of its own instead
