"""`gpumux report --html` and `gpumux plot` hand over to Python (matplotlib). They work from the
binary alone, as `make run` leaves it (no PYTHONPATH, no GPUMUX_BUILD_DIR, any directory), and
where a piece of the Python side is missing (the compiled _gpumux, matplotlib, the interpreter)
they say in one line what to build or install and exit 2: never a traceback, never exit 1
(which means "SLO missed"). Issue 35, item 1."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import GPUMUX, run_gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")


def bare_env(**extra):
    """The environment of a user's shell after `make run`: none of the test suite's paths."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "GPUMUX_BUILD_DIR", "GPUMUX_PYTHON")}
    env.update(extra)
    return env


def run(binary, *args, cwd, env):
    return run_gpumux(*args, binary=binary, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("tools") / "quickstart.h5"
    r = run(GPUMUX, "run", QUICKSTART, "--set", "duration=10s", "-o", str(out), "--quiet",
            cwd=REPO, env=bare_env())
    assert r.returncode == 0, r.stderr
    return out


def one_line_exit_2(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_report_html_and_plot_work_from_the_binary_alone(result, tmp_path):
    env = bare_env()
    r = run(GPUMUX, "report", str(result), "--html", "r.html", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<h3>SLO verdicts</h3>" in page and "data:image/png;base64," in page
    r = run(GPUMUX, "plot", str(result), "-o", "cdf.png", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "cdf.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def without_extension(tmp_path):
    """An installed layout (SITE/gpumux/bin/gpumux beside the package) whose compiled _gpumux
    is missing: the binary's package is found, its extension is not."""
    site = tmp_path / "site"
    package = site / "gpumux"
    shutil.copytree(REPO / "python" / "gpumux", package,
                    ignore=shutil.ignore_patterns("_gpumux*.so", "__pycache__"))
    (package / "bin").mkdir()
    binary = package / "bin" / "gpumux"
    shutil.copy2(GPUMUX, binary)
    return str(binary)


@pytest.mark.parametrize("args", [["report", "RESULT", "--html", "r.html"],
                                  ["plot", "RESULT", "-o", "f.png"]])
def test_missing_compiled_module_is_one_line_exit_2(result, without_extension, tmp_path, args):
    args = [str(result) if a == "RESULT" else a for a in args]
    r = run(without_extension, *args, cwd=tmp_path, env=bare_env())
    line = one_line_exit_2(r, f"gpumux: error: {args[0]}", "_gpumux was not found",
                           "make build")
    assert line.startswith("gpumux: error: ")
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "f.png").exists()


def test_missing_matplotlib_is_one_line_exit_2(result, tmp_path):
    # A matplotlib that cannot be imported, first on the path (as on a Python without it).
    shadow = tmp_path / "shadow" / "matplotlib"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    env = bare_env(PYTHONPATH=str(shadow.parent))
    r = run(GPUMUX, "plot", str(result), "-o", "f.png", cwd=tmp_path, env=env)
    one_line_exit_2(r, "gpumux: error: plot: needs matplotlib", "python3-matplotlib")
    r = run(GPUMUX, "report", str(result), "--html", "r.html", cwd=tmp_path, env=env)
    one_line_exit_2(r, "gpumux: error: report --html: needs matplotlib")
    assert not (tmp_path / "f.png").exists() and not (tmp_path / "r.html").exists()


def test_missing_python_is_one_line_exit_2(result, tmp_path):
    env = bare_env(GPUMUX_PYTHON=str(tmp_path / "no-such-python3"))
    r = run(GPUMUX, "plot", str(result), "-o", "f.png", cwd=tmp_path, env=env)
    one_line_exit_2(r, "gpumux: error: plot: needs python3", "no-such-python3", "GPUMUX_PYTHON")


def test_an_internal_error_is_exit_3_not_1(result, tmp_path):
    """A bug in the Python tool (here: a broken gpumux.plot module) is an internal error (3), so
    it is never read as "SLO missed" (1)."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "python" / "gpumux", site / "gpumux",
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(site / "gpumux" / "plot.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef main(argv=None):\n    raise RuntimeError('broken on purpose')\n")
    (site / "gpumux" / "bin").mkdir()
    binary = site / "gpumux" / "bin" / "gpumux"
    shutil.copy2(GPUMUX, binary)
    build_python = Path(GPUMUX).parent / "python"
    r = run(str(binary), "plot", str(result), "-o", "f.png", cwd=tmp_path,
            env=bare_env(GPUMUX_BUILD_DIR=str(build_python.parent)))
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "broken on purpose" in r.stderr
    assert r.stderr.strip().splitlines()[-1] == \
        "gpumux: internal error: plot (the traceback above)"


def test_import_gpumux_exposes_plot_lazily_without_matplotlib():
    """`gpumux.plot` (and `gpumux.report`) with no explicit submodule import; `import gpumux`
    imports neither them nor matplotlib, which stays optional until something is drawn."""
    code = (
        "import sys, gpumux\n"
        "assert 'gpumux.plot' not in sys.modules and 'matplotlib' not in sys.modules\n"
        "assert 'plot' in dir(gpumux)\n"
        "assert callable(gpumux.plot.latency_cdf) and callable(gpumux.report.html_report)\n"
        "assert gpumux.plot is sys.modules['gpumux.plot']\n"
        "assert 'matplotlib' not in sys.modules\n"
        "try:\n"
        "    gpumux.no_such_thing\n"
        "except AttributeError as e:\n"
        "    assert 'no_such_thing' in str(e)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
        "print('ok')\n")
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", f"{Path(GPUMUX).parent / 'python'}:{REPO / 'python'}")
    r = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                       timeout=120, env=env, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
