"""Issue 36 item 4: `run CLUSTER.yaml --dask local:N` stopped by a signal says so in one line
(nothing written before the replay, the replay marked interrupted after it) and leaves no
process behind: the Dask driver gpumux starts and the driver's LocalCluster
worker processes end with it (the driver at once), even when gpumux is killed (SIGKILL).
Before: a stop added multiprocessing's resource-tracker warning (leaked semaphores) to stderr,
and a killed gpumux left its driver and workers running on for 5-7 s here."""
import json
import signal
import subprocess

import h5py
import pytest

from cli_support import wait_for
from test_signals_cluster import (GPUMUX, REPO, descendants, environment, parent_of,
                                  stop_all)

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt): a Dask cluster

pytest.importorskip("distributed")  # python3-distributed (scripts/install-deps.sh)

FLEET_16 = str(REPO / "scenarios" / "cluster" / "fleet-16.yaml")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_no_dask_process_outlives_gpumux(tmp_path, signum):
    out = tmp_path / "out.h5"
    # 100 simulated minutes of the 24 pods: its tasks run for minutes.
    proc = subprocess.Popen([GPUMUX, "run", FLEET_16, "--set", "cluster.duration=6000s",
                             "--dask", "local:2", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=environment())
    started = []
    try:
        # The driver, then its two worker processes (and whatever helpers multiprocessing
        # starts); the tasks run for minutes once the replay (about a second) is over.
        assert wait_for(lambda: len(descendants(proc.pid)) >= 3 or proc.poll() is not None, 90)
        assert wait_for(lambda: proc.poll() is not None, timeout=3) is False, proc.communicate()
        started = descendants(proc.pid)
        driver = [p for p in started if parent_of(p) == proc.pid]
        proc.send_signal(signum)
        # Timed from the signal: the driver goes at once (the kernel's SIGTERM on gpumux's
        # death, or gpumux's own), its workers when they see it gone (their parent pipe closes;
        # seconds on a loaded machine). stderr, which they share, closes last.
        driver_gone = wait_for(lambda: all(parent_of(p) is None for p in driver), timeout=2)
        wait_for(lambda: all(parent_of(p) is None for p in started), timeout=30)
        left = [p for p in started if parent_of(p) is not None]
        _, err = proc.communicate(timeout=60)
        assert driver_gone, f"the driver {driver} still ran 2 s after the signal"
        assert left == [], f"{len(left)} of {len(started)} still running 30 s after the signal"
        written = sorted(p.name for p in tmp_path.iterdir())
        if signum == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
            assert written == []
        else:
            assert proc.returncode == 128 + signum, err
            name = signal.Signals(signum).name
            # (the workers' own start-up log lines may come before or after it)
            assert "Traceback" not in err and "resource_tracker" not in err, err
            # Before the replay (a LocalCluster takes seconds to start on a loaded machine),
            # nothing is written; after it, the replay marked interrupted.
            if "nothing written" in err:
                assert f"gpumux: interrupted ({name}): the cluster replay stopped" in err
                assert written == []
            else:
                assert (f"gpumux: interrupted ({name}) while simulating the workload pods: the "
                        "replay is complete; results marked status=interrupted\n") in err
                assert written == ["out.h5"]
                with h5py.File(out, "r") as f:
                    assert f.attrs["status"] == "interrupted"
                    assert json.loads(f["summary"][()])["status"] == "interrupted"
    finally:
        stop_all(proc, started)
