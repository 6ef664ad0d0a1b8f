"""A saturated tenant holds memory per queued request, not per kernel (issue 36 item 2).

tests/data/scenarios/saturated-catalog.yaml: whisper-large-v3 requests (~530 kernels each) at a
thousand times what the GPU serves. Before the fix every request finished in the drain kept its
kernels in the tenant's free list (no arrival left to reuse it): peak RSS grew ~9 KB per queued
request (193 MB at 10 s, 1.08 GB at 60 s, bad_alloc under a 3 GB limit at longer durations).
Now the free list is capped and a queued request is a Request record without kernels: the
growth per extra queued request stays under 2 KB (measured 0.63 KB). The work budget counts the
backlog it predicts (640 B per queued request) and refuses one beyond 16 GiB in one line naming
the tenant's rate and allow_large.
"""
import os
import subprocess
from pathlib import Path

from conftest import GPUMUX, run_gpumux

REPO = Path(__file__).resolve().parents[2]
SATURATED = REPO / "tests" / "data" / "scenarios" / "saturated-catalog.yaml"


def peak_rss_bytes(args):
    """Runs ARGS and returns (exit status, its own peak RSS in bytes) from wait4."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.returncode == 0, err
    return usage.ru_maxrss * 1024


def test_peak_memory_grows_per_request_not_per_kernel():
    short_s, long_s, rate = 2, 6, 2000
    short = peak_rss_bytes([GPUMUX, "run", str(SATURATED), "--set", f"duration={short_s}s"])
    long = peak_rss_bytes([GPUMUX, "run", str(SATURATED), "--set", f"duration={long_s}s"])
    extra_requests = (long_s - short_s) * rate  # nearly all still queued at `duration`
    per_request = (long - short) / extra_requests
    assert per_request < 2048, f"{per_request:.0f} B per queued request ({short} -> {long} B)"


def test_the_backlog_the_budget_predicts_is_refused_before_running(tmp_path):
    # One 1 ms kernel per request at 10,000/s for 1 h: 3.6e7 requests (within the request and
    # launch budgets), of which the GPU serves 3.6e6; the 3.24e7 queued x 640 B = 19.3 GiB.
    text = """\
name: backlog
duration: 1h
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: overloaded
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 10000/s}
      request: {kernels: [{name: k, duration: 1ms}]}
"""
    path = tmp_path / "backlog.yaml"
    path.write_text(text)
    for command in ("validate", "run", "inspect"):
        out = run_gpumux(command, path.name, timeout=60, cwd=tmp_path)
        assert out.returncode == 2, (command, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1, out.stderr
        assert "backlog.yaml:8:" in lines[0] and "tenants.0.workload.arrivals.rate" in lines[0]
        assert "the queue of tenant 'overloaded'" in lines[0] and "allow_large" in lines[0]
        assert out.stdout == ""
    # Served: at 900/s nothing queues and the same scenario validates.
    path.write_text(text.replace("10000/s", "900/s"))
    out = run_gpumux("validate", path, timeout=60)
    assert out.returncode == 0, out.stderr
    # The escape hatch: allow_large lets it past the budget.
    path.write_text(text + "allow_large: true\n")
    out = run_gpumux("validate", path, timeout=60)
    assert out.returncode == 0, out.stderr
