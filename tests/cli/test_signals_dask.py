"""Issue 36 item 4: `run CLUSTER.yaml --dask local:N` leaves no process behind when gpumux is
stopped (SIGTERM) or killed (SIGKILL): the Dask driver it starts, and the driver's LocalCluster
worker processes, end with it. The driver used to die on SIGTERM without closing its cluster,
and to simulate on alone (with its workers) when gpumux was killed."""
import os
import signal
import subprocess
from pathlib import Path

import pytest

from cli_support import wait_for
from test_signals_cluster import GPUMUX, FLEET, descendants, environment, parent_of

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt): a Dask cluster

pytest.importorskip("distributed")  # python3-distributed (scripts/install-deps.sh)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_no_dask_process_outlives_gpumux(tmp_path, signum):
    out = tmp_path / "out.h5"
    proc = subprocess.Popen([GPUMUX, "run", FLEET, "--dask", "local:2", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=environment())
    started = []
    try:
        # The driver, then its two worker processes (and whatever helpers multiprocessing
        # starts); the tasks run for minutes once the replay (about a second) is over.
        assert wait_for(lambda: len(descendants(proc.pid)) >= 3 or proc.poll() is not None, 90)
        assert wait_for(lambda: proc.poll() is not None, timeout=3) is False, proc.communicate()
        started = descendants(proc.pid)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == (143 if signum == signal.SIGTERM else -signal.SIGKILL), err
        if signum == signal.SIGTERM:
            assert "interrupted (SIGTERM)" in err and "nothing written" in err
        assert wait_for(lambda: all(parent_of(p) is None for p in started), timeout=20), \
            [(p, parent_of(p), Path(f"/proc/{p}/cmdline").read_bytes()[:80]) for p in started
             if parent_of(p) is not None]
        assert list(tmp_path.iterdir()) == []
    finally:
        for p in started:  # on a binary without the fix: do not leave them running
            if parent_of(p) is not None:
                os.kill(p, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
