"""pip hides a build's output without -v: setup.py shows the CMake build's progress on the
terminal (scripts/build_progress.py). The summaries are throttled, name the newest step, and a
failing build still fails; with no terminal nothing extra is written."""
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import build_progress  # noqa: E402


class Clock:
    def __init__(self, times):
        self.times = list(times)

    def __call__(self):
        return self.times.pop(0)


def test_steps_of_ninja_and_make_lines():
    assert build_progress.step_of("[12/205] Building CXX object a.o") == "12/205"
    assert build_progress.step_of("[ 37%] Building CXX object a.o") == "37%"
    assert build_progress.step_of("[100%] Linking CXX executable gpumux") == "100%"
    assert build_progress.step_of("ninja: no work to do.") is None
    assert build_progress.step_of("warning: [12/205] inside a line") is None


def test_summaries_are_throttled_and_name_the_newest_step():
    lines = ["-- configuring", "[1/9] a", "[2/9] b", "[3/9] c", "note", "[4/9] d", "[9/9] e"]
    # seconds at which each line arrives
    clock = Clock([100.0, 101.0, 105.0, 111.5, 112.0, 125.0, 126.0])
    shown = list(build_progress.progress_lines(lines, clock, every_s=10.0))
    # the first step at once; [3/9] 10.5 s after it; [4/9] 13.5 s after that; [9/9] 1 s later: not
    assert shown == ["gpumux: building, step 1/9 after 1 s",
                     "gpumux: building, step 3/9 after 12 s",
                     "gpumux: building, step 4/9 after 25 s"]


def test_no_steps_no_summaries():
    clock = Clock([0.0, 50.0, 100.0])
    assert list(build_progress.progress_lines(["a", "b", "c"], clock)) == []


def run_on_a_terminal(code):
    """Runs `python -c code` with a pseudo-terminal as its controlling terminal; returns what
    the terminal showed and the exit status."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, "-c", code])
    shown = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    _, status = os.waitpid(pid, 0)
    return shown.decode(errors="replace"), os.waitstatus_to_exitcode(status)


PROGRAM = """
import sys, subprocess
sys.path.insert(0, {scripts!r})
import build_progress
command = [sys.executable, "-c", "import sys; print('[1/2] a'); print('[2/2] b'); sys.exit({rc})"]
try:
    # stdout goes nowhere (as when pip captures it): only the terminal lines reach the pty
    sys.stdout = open("/dev/null", "w")
    build_progress.run_with_progress(command, "building x", every_s=0)
except subprocess.CalledProcessError as e:
    sys.exit(40 + e.returncode)
"""


@pytest.mark.parametrize("rc", [0, 3])
def test_the_terminal_sees_start_steps_and_end_while_stdout_is_captured(rc):
    shown, status = run_on_a_terminal(PROGRAM.format(scripts=str(REPO / "scripts"), rc=rc))
    assert "gpumux: building x (pip shows every step with -v)" in shown
    assert "step 1/2" in shown and "step 2/2" in shown
    if rc == 0:
        assert status == 0 and "gpumux: build done" in shown
    else:
        assert status == 43 and "gpumux: build failed (exit 3)" in shown


def test_without_a_terminal_only_the_build_output_is_written(tmp_path):
    code = PROGRAM.format(scripts=str(REPO / "scripts"), rc=0).replace(
        'sys.stdout = open("/dev/null", "w")', "pass")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          start_new_session=True, timeout=60)  # new session: no /dev/tty
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[1/2] a", "[2/2] b"]
    assert "gpumux:" not in proc.stdout + proc.stderr
