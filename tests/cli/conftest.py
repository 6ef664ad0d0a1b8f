"""What every CLI test shares: where the gpumux binary is, and one way to run it.

pytest loads this file before any test file of this folder (ctest runs each file alone, from the
repository root: tests/CMakeLists.txt), and puts the folder on sys.path, so a test file takes the
runner either as the `gpumux` fixture or, for module-level helpers and fixtures of a wider scope,
by import: `from conftest import GPUMUX, run_gpumux`.
"""
import os
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[2]
# The binary under test: $GPUMUX_BIN (ctest sets it to the one it built), else build/gpumux.
GPUMUX = str(Path(os.environ.get("GPUMUX_BIN") or REPO / "build" / "gpumux").resolve())
# Seconds a command may take before the test fails (subprocess.TimeoutExpired) instead of
# hanging; a file whose commands simulate longer passes its own.
DEFAULT_TIMEOUT_S = 300


class CliRun(NamedTuple):
    """One finished command: unpacks as (rc, stdout, stderr); also .returncode, .stdout, .stderr
    as subprocess.CompletedProcess names them."""
    returncode: int
    stdout: str
    stderr: str


def one_error(out, *named):
    """The one stderr line of a refusal (exit 2, no traceback) that names each of NAMED."""
    context = f"rc {out.returncode}\nstderr: {out.stderr}\nstdout: {out.stdout[-500:]}"
    assert out.returncode == 2, context
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr, context
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, context
    assert lines[0].startswith("gpumux: error: "), context
    for name in named:
        assert str(name) in lines[0], context
    return lines[0]


def run_gpumux(*args, timeout=DEFAULT_TIMEOUT_S, cwd=None, env=None, extra_env=None, check=None,
               errors=None, binary=None):
    """Runs `gpumux ARGS...` (each argument through str()) and returns its CliRun.

    env: the whole environment (default: this process's, less GPUMUX_TEST_FAULT, so a fault hook
    left in a shell injects nothing); extra_env: variables set on top of it. check: the exit
    code the command must return (asserted, with its output in the message); None checks
    nothing. errors: how undecodable output bytes are decoded (None: strict). binary: another
    executable than GPUMUX (a copy, a renamed link)."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "GPUMUX_TEST_FAULT"}
    full_env = dict(env)
    full_env.update(extra_env or {})
    proc = subprocess.run([binary or GPUMUX, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=full_env, errors=errors)
    result = CliRun(proc.returncode, proc.stdout, proc.stderr)
    if check is not None:
        assert result.returncode == check, result.stderr + result.stdout
    return result


@pytest.fixture
def gpumux():
    """The runner (run_gpumux) as a fixture."""
    return run_gpumux
