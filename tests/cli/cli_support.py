"""Helpers shared by the CLI tests that watch a running gpumux process and its output files."""
import time
from pathlib import Path


def temps(directory):
    """The temporary output files (``NAME.tmp.PID``) left in DIRECTORY, sorted by name."""
    return sorted(p.name for p in Path(directory).iterdir() if ".tmp." in p.name)


def wait_for(predicate, timeout=30.0):
    """Polls PREDICATE every 20 ms until it holds (True) or TIMEOUT seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False
