"""`gpumux run -o` streams the request and kernel records into the file during the run (issue 12):
the file is the one Python's Result.save writes from memory — the same rows in the same order,
several chunks of them — read by h5py, `gpumux.load` and h5dump alike.
"""
import os
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

import gpumux

from conftest import GPUMUX, run_gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "scenarios" / "quickstart.yaml"
CHUNK = 4096  # sim/io/table_stream.hpp kStreamChunkRows


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The quickstart with kernel records, 45 s: ~9,000 requests and ~45,000 kernels."""
    tmp = tmp_path_factory.mktemp("streamed")
    scenario = tmp / "quickstart-kernels.yaml"
    scenario.write_text(QUICKSTART.read_text() + "\noutput: {kernels: true}\n")
    streamed = tmp / "cli.h5"
    proc = run_gpumux("run", scenario, "-o", streamed, "--quiet", "--set", "duration=45s",
                      timeout=120)
    assert proc.returncode == 0, proc.stderr
    saved = tmp / "saved.h5"
    gpumux.run(str(scenario), overrides={"duration": "45s"}).save(str(saved))
    return streamed, saved


@pytest.mark.parametrize("table", ["requests", "kernels", "tenants", "devices", "events",
                                   "timeseries/gpu0"])
def test_streamed_file_equals_the_saved_one(files, table):
    streamed, saved = files
    with h5py.File(streamed, "r") as a, h5py.File(saved, "r") as b:
        assert a[table].dtype == b[table].dtype
        rows_a, rows_b = a[table][()], b[table][()]
        assert len(rows_a) == len(rows_b)
        if table in ("requests", "kernels"):
            assert len(rows_a) > 2 * CHUNK, "the test should cross chunk boundaries"
        assert np.array_equal(rows_a, rows_b)
        assert a[table].attrs["units"] == b[table].attrs["units"]
        assert a[table].attrs["description"] == b[table].attrs["description"]


def test_streamed_file_has_the_layout_and_root_attributes(files):
    streamed, saved = files
    with h5py.File(streamed, "r") as a, h5py.File(saved, "r") as b:
        assert sorted(a.keys()) == sorted(b.keys())
        assert sorted(a.attrs.keys()) == sorted(b.attrs.keys())
        for key in ("scenario", "seed", "status", "sim_time_ns", "events", "scenario_yaml"):
            assert a.attrs[key] == b.attrs[key], key
        requests = a["requests"]
        assert requests.maxshape == (None,) and requests.chunks == (CHUNK,)
        assert requests.compression == "gzip" and requests.shuffle
        assert (np.diff(requests["arrival_ns"]) >= 0).all()  # one tenant: in arrival order


def test_gpumux_load_reads_the_streamed_file(files):
    streamed, saved = files
    a, b = gpumux.load(str(streamed)), gpumux.load(str(saved))
    assert a.requests.equals(b.requests)
    assert a.tenants.equals(b.tenants)


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump (hdf5-tools) not installed")
def test_h5dump_reads_the_streamed_records(files):
    streamed, _ = files
    with h5py.File(streamed, "r") as f:
        last = len(f["requests"]) - 1
        expected = f["requests"][last]
    proc = subprocess.run(["h5dump", "-d", "/requests", "-s", str(last), "-c", "1",
                           str(streamed)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"{expected['arrival_ns']}," in proc.stdout
    assert f"{expected['finish_ns']}," in proc.stdout


def test_peak_memory_does_not_hold_the_records(tmp_path):
    """A run's records are not kept for the file: 10x the requests, about the same peak RSS."""
    scenario = tmp_path / "busy.yaml"
    scenario.write_text("""\
name: busy
duration: 10s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 20000/s}
      request: {kernels: [{name: k, duration: 10us}]}
""")

    def peak_rss(seconds):
        proc = subprocess.Popen([GPUMUX, "run", str(scenario), "--quiet", "-o",
                                 str(tmp_path / "busy.h5"), "--set", f"duration={seconds}s"])
        _, status, usage = os.wait4(proc.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        return usage.ru_maxrss * 1024

    short, long = peak_rss(2), peak_rss(20)  # 40k vs 400k requests
    # Kept in memory, 360k more records would be >= 17 MB (48 B each); the exact percentile
    # samples (16 B per request, without a sketch) are allowed for.
    assert long - short < 360_000 * 16 + 8 * 2**20, (short, long)
