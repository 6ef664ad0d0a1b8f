"""Issue 36's front-door reproducers, each as the user or a broken pipeline met it: `inspect
--seed`, `plan -o` (a name too long, all-or-nothing folders, the flag an error names), `report`
and `plot` (FIFO inputs, refused targets, a table declaring more rows than its file holds), the
cluster path's signals and checks before work, an unknown command. Each is one line on stderr
and exit 2 (or 128 + signal), never a traceback, a hang or half-written output. Drives
$GPUMUX_BIN."""
import os
import subprocess
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
GPUMUX = str(Path(os.environ.get("GPUMUX_BIN") or REPO / "build" / "gpumux").resolve())
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")


def gpumux(*args, env=None, timeout=300, cwd=None):
    full_env = dict(os.environ)
    full_env.pop("GPUMUX_TEST_FAULT", None)
    full_env.update(env or {})
    return subprocess.run([GPUMUX, *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=cwd)


def one_line_refusal(proc, *needles):
    """Exit 2 with one line on stderr, no traceback, naming every needle."""
    assert proc.returncode == 2, proc.stderr + proc.stdout
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("gpumux: ") and "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


# --- inspect --seed ----------------------------------------------------------------------------

def test_inspect_takes_seed_as_run_does():
    """Was exit 3 `boost::bad_any_cast` (declared uint64_t, read as a string)."""
    proc = gpumux("inspect", QUICKSTART, "--seed", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("{") or proc.stdout.startswith("[")
    one_line_refusal(gpumux("inspect", QUICKSTART, "--seed", "-1"), "--seed")


# --- unknown command -----------------------------------------------------------------------------

def test_unknown_command_is_one_line_with_a_hint():
    """Was the whole 25-line usage."""
    proc = gpumux("runn", QUICKSTART)
    one_line_refusal(proc)
    assert proc.stderr == ("gpumux: unknown command 'runn' (did you mean 'run'?); "
                           "see gpumux --help\n")
    proc = gpumux("frobnicate")
    one_line_refusal(proc, "unknown command 'frobnicate'", "see gpumux --help")
    assert "did you mean" not in proc.stderr

