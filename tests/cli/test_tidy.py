"""Tidy DataFrames: NaN where a value does not apply, categorical names, str (not bytes) from
HDF5 files — the same from a run and from its file."""
import math

import numpy as np
import pandas as pd
import pytest

gpumux = pytest.importorskip("gpumux")

SCENARIO = {
    "name": "tidy", "duration": "1s", "seed": 3,
    "gpus": [{"name": "gpu0", "model": "h100-sxm-80gb", "mig": ["3g.40gb", "3g.40gb"],
              "sharing": {"mode": "time-slicing"}}],
    "tenants": [
        {"name": "busy", "device": "gpu0/0", "memory": "30Gi",
         "workload": {"arrivals": {"process": "poisson", "rate": "2000/s"},
                      "request": {"kernels": [{"name": "k", "duration": "2ms"}]}}},
        {"name": "light", "device": "gpu0/1",
         "workload": {"arrivals": {"process": "poisson", "rate": "50/s"},
                      "request": {"kernels": [{"name": "k", "duration": "100us"}]}}},
    ],
    # a fatal fault without recovery: busy's queued requests fail without ever starting
    "faults": [{"tenant": "busy", "at": "500ms", "kind": "fatal"}],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    run = gpumux.run(SCENARIO)
    path = tmp_path_factory.mktemp("tidy") / "tidy.h5"
    run.save(path)
    return run, gpumux.load(path)


def test_ttft_is_nan_without_tokens_and_counts_stay_integers(results):
    for r in results:
        t = r.tenants
        assert (t["ttft_count"] == 0).all()
        for column in ("ttft_mean_ns", "ttft_p50_ns", "ttft_p99_ns", "ttft_max_ns"):
            assert t[column].isna().all(), column
        assert t.loc["light", "latency_count"] > 0
        assert not math.isnan(t.loc["light", "latency_p99_ns"])
        assert t["ttft_count"].dtype.kind in "iu"


def test_start_and_finish_are_nan_when_never(results):
    for r in results:
        q = r.requests
        assert q["start_ns"].dtype == np.float64 and q["finish_ns"].dtype == np.float64
        never_started = q["start_ns"].isna()
        assert never_started.sum() > 100  # busy's backlog when the fault hit
        assert (q.loc[never_started, "status"] == "failed").all()
        assert q.loc[never_started, "queueing_ns"].isna().all()
        assert q.loc[never_started, "latency_ns"].isna().all()
        assert q.loc[q["status"] == "unfinished", "finish_ns"].isna().all()
        assert not (q["start_ns"] == -1).any() and not (q["finish_ns"] == -1).any()
        done = q[q["status"] == "completed"]
        assert (done["finish_ns"] - done["arrival_ns"] == done["latency_ns"]).all()


def test_names_are_categorical_and_str(results):
    run, loaded = results
    for r in results:
        assert isinstance(r.tenants["device"].dtype, pd.CategoricalDtype)
        assert isinstance(r.devices["profile"].dtype, pd.CategoricalDtype)
        assert isinstance(r.devices["sharing"].dtype, pd.CategoricalDtype)
        assert isinstance(r.requests["tenant"].dtype, pd.CategoricalDtype)
        assert list(r.requests["tenant"].cat.categories) == ["busy", "light"]
        assert isinstance(r.events["tenant"].dtype, pd.CategoricalDtype)
        for value in [*r.tenants.index, *r.tenants["device"], *r.devices.index,
                      *r.devices["profile"], *r.devices["sharing"], r.scenario_yaml,
                      *r.events["detail"]]:
            assert type(value) is str, repr(value)
    pd.testing.assert_frame_equal(run.tenants, loaded.tenants, check_dtype=False,
                                  check_categorical=False)


def test_hdf5_tables_carry_units_and_descriptions(tmp_path):
    import json
    import subprocess
    from pathlib import Path
    import os
    import h5py
    repo = Path(__file__).resolve().parents[2]
    binary = os.environ.get("GPUMUX_BIN") or str(repo / "build" / "gpumux")
    out = tmp_path / "q.h5"
    subprocess.run([binary, "run", str(repo / "scenarios" / "quickstart.yaml"), "--set",
                    "duration=1s", "--set", "warmup=0s", "-q", "-o", str(out)], check=True)
    with h5py.File(out) as f:
        tables = [f[n] for n in ("requests", "tenants", "devices", "events")]
        tables += list(f["timeseries"].values())
        for ds in tables:
            units = json.loads(ds.attrs["units"])
            description = json.loads(ds.attrs["description"])
            assert list(units) == list(ds.dtype.names) == list(description), ds.name
        tenants = json.loads(f["tenants"].attrs["units"])
        assert tenants["latency_p99_ns"] == "ns" and tenants["cost"] == "USD"
        assert tenants["throughput_per_s"] == "1/s" and tenants["ttft_count"] == "count"
        requests = json.loads(f["requests"].attrs["description"])
        assert "/tenants" in requests["tenant"] and "-1" in requests["start_ns"]
        assert json.loads(f["devices"].attrs["units"])["memory_peak_bytes"] == "bytes"
