"""The work budget knows where records go (issue 12 item 3, models/scenario/work_estimate.hpp).

The CLI keeps no per-request memory (`-o` streams the records to the file, without `-o` none are
recorded), so a long high-rate scenario that the budget refused for its request records
(1e8 requests, when each kept ~150 B) now validates and runs with -o; Python's run() and
compare(return_results=True) keep a 48 B record per request, and refuse before running a
scenario whose records would not fit the memory budget (16 GiB), naming the key that drives it.
No test here simulates more than a second: the long runs are stopped by a signal or by the
progress callback.
"""
import signal
import subprocess
from pathlib import Path

import pytest

from cli_support import temps, wait_for

from conftest import GPUMUX, run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

# 4e8 requests (20,000/s for 20,000 s, load 0.27): within the request budget (1e9, simulated
# work); their records would be 4e8 x 48 B = 17.9 GiB.
LONG = """\
name: long-high-rate
duration: 20000s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: service
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: RATE/s}
      request: {kernels: [{name: k, duration: 10us}]}
"""


def long_scenario(tmp_path, rate=20000, extra=""):
    path = tmp_path / "long.yaml"
    path.write_text(LONG.replace("RATE", str(rate)) + extra)
    return path


def test_validate_accepts_what_only_record_memory_refused(tmp_path):
    path = long_scenario(tmp_path)
    out = gpumux("validate", str(path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # Beyond the request budget (simulated work) it is still refused, naming the rate.
    too_long = long_scenario(tmp_path, rate=60000)
    out = gpumux("validate", str(too_long), cwd=tmp_path)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "long.yaml:8:" in lines[0], out.stderr
    assert "tenants.0.workload.arrivals.rate: the scenario asks for about 1.2e+09 requests " \
           "(budget 1e+09)" in lines[0]


@pytest.mark.parametrize("command", ["run", "compare"])
def test_the_long_run_streams_with_o(tmp_path, command):
    """It runs with -o: the records reach the temporary file while it runs; SIGINT stops it and
    what ran is written (the whole run would take minutes)."""
    h5py = pytest.importorskip("h5py")
    path = long_scenario(tmp_path)
    out = tmp_path / "out.h5"
    args = [GPUMUX, command, str(path), "-o", str(out)]
    args += ["--quiet"] if command == "run" else ["--strategies", "mps,time-slicing"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Streamed: the temporary file grows past a few chunks of records during the run.
        temp = tmp_path / f"out.h5.tmp.{proc.pid}"
        assert wait_for(lambda: temp.exists() and temp.stat().st_size > 200_000), \
            "no records streamed to the temporary file"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    with h5py.File(out, "r") as f:
        group = f["strategies/mps"] if command == "compare" else f
        status = group.attrs["status"]
        assert (status.decode() if isinstance(status, bytes) else status) == "interrupted"
        assert len(group["requests"]) > 10_000
        if command == "compare":
            assert "time-slicing" not in f["strategies"]  # stopped during the first strategy
    assert temps(tmp_path) == []


def python_api():
    gpumux_py = pytest.importorskip("gpumux")
    if not hasattr(gpumux_py, "run"):
        pytest.skip("gpumux package: put python/ on PYTHONPATH too")
    return gpumux_py


class Started(Exception):
    """Raised from the progress callback: the run was accepted and is running."""


def stop_at_once(now, horizon, events):
    raise Started


def test_python_refuses_records_that_would_not_fit(tmp_path):
    api = python_api()
    path = str(long_scenario(tmp_path))
    api.validate(path)  # what the CLI checks: accepted
    with pytest.raises(api.ScenarioError) as error:
        api.run(path)
    message = str(error.value)
    assert "long.yaml:8:" in message and "\n" not in message
    assert "tenants.0.workload.arrivals.rate: the run would hold about 17.9 GiB" in message
    assert "a record of each of about 4e+08 requests kept in memory" in message
    assert "record_requests=False" in message
    # Without the records it is accepted (and stopped here as soon as it runs).
    with pytest.raises(Started):
        api.run(path, record_requests=False, progress=stop_at_once)


def test_python_compare_counts_every_strategys_records(tmp_path):
    api = python_api()
    # 2e8 requests: 8.9 GiB of records fit for one run, not for two strategies held at once.
    path = str(long_scenario(tmp_path, rate=10000))
    with pytest.raises(Started):
        api.run(path, progress=stop_at_once)
    with pytest.raises(api.ScenarioError) as error:
        api.compare(path, ["mps", "time-slicing"], return_results=True)
    assert "requests kept in memory for each of the 2 results held at once" in str(error.value)
    with pytest.raises(Started):
        api.compare(path, ["mps", "time-slicing"], progress=stop_at_once)


def test_python_kernel_records_count_only_when_kept(tmp_path):
    """6.3e7 requests x 10 launches with output.kernels: 25 GB of kernel records in Python
    (refused, naming output.kernels); the CLI streams them with -o (validate accepts). At 90 %
    load: an overloaded tenant's queue is refused on its own (test_backlog_memory.py)."""
    api = python_api()
    path = tmp_path / "kernels.yaml"
    path.write_text(LONG.replace("RATE", "9e4").replace("20000s", "700s")
                    .replace("duration: 10us}", "duration: 1us, repeat: 10}")
                    + "output: {kernels: true}\n")
    assert gpumux("validate", str(path), cwd=tmp_path).returncode == 0
    with pytest.raises(api.ScenarioError) as error:
        api.run(str(path))
    assert "output.kernels: the run would hold about" in str(error.value)
    with pytest.raises(Started):
        api.run(str(path), record_requests=False, progress=stop_at_once)
