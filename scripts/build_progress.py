"""Progress of a CMake build that pip runs (setup.py), shown on the user's terminal.

pip captures a build backend's output and prints it only with `pip install -v` or when the build
fails, so a cold build (about 120 files, 20-40 min on 2 cores) looked like a hang. setup.py runs
`cmake --build` through `run_with_progress`: every line still goes to standard output (what pip
keeps for -v and for a failure), and a one-line summary — the build step reached (Ninja's and
Make's `[n/N]` / `[ p%]`) and the time spent — goes to the controlling terminal, when there is
one, at most once every `every_s` seconds, plus one line at the start and one at the end. With no
terminal (CI, a pipe) nothing extra is written: `pip install -v` shows every step there.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
from typing import Callable, Iterable, Iterator, TextIO

# Ninja: "[12/205] Building CXX object ..."; Make: "[ 37%] Building CXX object ..."
STEP = re.compile(r"^\[\s*(\d+)/(\d+)\]|^\[\s*(\d+)%\]")


def step_of(line: str) -> str | None:
    """The build step a line of Ninja's or Make's output reports ("12/205", "37%"), or None."""
    m = STEP.match(line)
    if not m:
        return None
    return f"{m.group(1)}/{m.group(2)}" if m.group(1) else f"{m.group(3)}%"


def progress_lines(lines: Iterable[str], now: Callable[[], float],
                   every_s: float = 10.0) -> Iterator[str]:
    """The summaries to show for a build printing `lines`: one when the first step is seen,
    then at most one per `every_s` seconds of `now()`, each naming the newest step and the
    seconds since the first line. Steps only; other lines never produce a summary."""
    start = None
    last_shown = None
    for line in lines:
        t = now()
        if start is None:
            start = t
        step = step_of(line)
        if step is None:
            continue
        if last_shown is None or t - last_shown >= every_s:
            last_shown = t
            yield f"gpumux: building, step {step} after {t - start:.0f} s"


def open_terminal() -> TextIO | None:
    """The controlling terminal for writing, or None (no terminal: CI, cron, a pipe)."""
    try:
        return open("/dev/tty", "w", encoding="utf-8")
    except OSError:
        return None


def run_with_progress(command: list[str], label: str, every_s: float = 10.0) -> None:
    """Runs `command`, copying its output to standard output and summaries to the terminal;
    raises subprocess.CalledProcessError when it fails, as subprocess.run(check=True) does."""
    terminal = open_terminal()
    if terminal:
        print(f"gpumux: {label} (pip shows every step with -v)", file=terminal, flush=True)
    start = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace") as proc:
        assert proc.stdout is not None

        def copied() -> Iterator[str]:
            for line in proc.stdout:
                sys.stdout.write(line)
                sys.stdout.flush()
                yield line

        for summary in progress_lines(copied(), time.monotonic, every_s):
            if terminal:
                print(summary, file=terminal, flush=True)
    if terminal:
        outcome = "done" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
        print(f"gpumux: build {outcome} after {time.monotonic() - start:.0f} s", file=terminal,
              flush=True)
        terminal.close()
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, command)
