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


def scenario_writer(tmp_path, scenario):
    """A function RUNTIME -> the path of SCENARIO (text with the placeholder ``RUNTIME``) written
    under TMP_PATH with that runtime."""
    def write(runtime):
        path = tmp_path / f"{runtime}.yaml"
        path.write_text(scenario.replace("RUNTIME", runtime))
        return path
    return write


def assert_misspelt_runtimes_refused(run_gpumux, write, misspellings, line, listed):
    """Each misspelt runtime name is one stderr line naming FILE:LINE:16 and the key, exit 2,
    nothing on stdout, and the line lists LISTED (the valid names)."""
    for runtime in misspellings:
        path = write(runtime)
        proc = run_gpumux("run", path)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert (f"{path}:{line}:16: tenants.0.workload.runtime: unknown runtime '{runtime}'"
                in lines[0])
        assert listed in lines[0]
        assert proc.stdout == ""


def kernel_counts(run_gpumux, write, runtimes):
    """Per runtime: the kernels `gpumux inspect --json` gives the scenario's first tenant (each
    also runs with exit 0)."""
    import json
    counts = {}
    for runtime in runtimes:
        proc = run_gpumux("inspect", write(runtime), "--json", check=0)
        tenant = json.loads(proc.stdout)["tenants"][0]
        counts[runtime] = sum(k["count"] for k in tenant["kernels"])
        assert run_gpumux("run", write(runtime), "--json", check=0).returncode == 0
    return counts
