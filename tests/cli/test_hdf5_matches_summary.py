"""Every stored HDF5 table read back and compared with the run's JSON summary, column by column.

test_hdf5_layout.py checks the layout (columns, types, chunking); this file checks the values:
a column written from the wrong field (sm_busy into dram_busy, say) keeps the layout intact and
fails here. The scenario has two devices whose SM and DRAM busy differ clearly and in opposite
directions (gpu0 a memory-bound stream: dram_busy ~ 2.6 x sm_busy; gpu1 a compute-bound GEMM:
sm_busy ~ 10 x dram_busy), so swapping the two columns changes every number compared.

Tables and their summary counterparts (docs/metrics.md):
- /tenants, /devices: one row per summary entry; a column equals the summary key of its name
  (`latency_p99_ns` = `latency_ns.p99`); its `units` attribute names the unit the key's suffix
  says (`_ns` ns, `_per_s` 1/s, `_bytes` bytes) or the unit docs/metrics.md gives it.
- /timeseries/<device>: the time-weighted mean of sm_busy and dram_busy over the samples after
  warmup equals the summary's sm_busy and dram_busy. Both come from the same exact busy
  integrals, and warmup and the end of the run fall on sample boundaries (warmup is a multiple
  of output.sample; the last sample is at the end), so the only difference is rounding: 1e-9.
  The largest sampled memory_used_bytes is at most memory_peak_bytes (equal here: each tenant
  holds its memory for the whole run).
- /requests: the measured requests (arrival in [warmup, duration)) of each tenant give its
  requests, completed, latency mean and max, and queueing mean.
- /slos: each row is the summary's slo.<key> (target_ns, value_ns, samples, low_ns, high_ns,
  verdict, met).
- /events: the oom rows of each tenant are its oom_events.
"""
import json
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]

WARMUP_NS = 200_000_000
DURATION_NS = 2_000_000_000
SCENARIO = f"""\
name: hdf5-vs-summary
duration: {DURATION_NS // 1_000_000}ms
warmup: {WARMUP_NS // 1_000_000}ms
seed: 3
output: {{sample: 10ms}}
gpus:
  - {{name: gpu0, model: h100-sxm-80gb}}
  - {{name: gpu1, model: h100-sxm-80gb}}
tenants:
  - {{name: stream, device: gpu0, memory: 2GiB, slo: {{p50: 2ms, p99: 3ms}},
     workload: {{arrivals: {{process: poisson, rate: 400/s}}, request: {{kernels:
       [{{name: copy, duration: 1ms, sm_fraction: 0.3, memory_bound: 0.9}}]}}}}}}
  - {{name: gemm, device: gpu1, memory: 1GiB,
     workload: {{arrivals: {{process: poisson, rate: 300/s}}, request: {{kernels:
       [{{name: mm, duration: 1ms, sm_fraction: 1.0, memory_bound: 0.1}}]}}}}}}
"""

# Units of the columns whose name carries no unit suffix (docs/metrics.md, "Per tenant" and
# "Per device"; HDF5 writes a fraction as "1").
UNITS = {"requests": "count", "completed": "count", "failed": "count", "slo_violations": "count",
         "oom_events": "count", "slowdown_mean": "1", "gpu_seconds": "s", "cost": "USD",
         "sms": "count", "sm_busy": "1", "useful_fraction": "1", "dram_busy": "1",
         "context_switches": "count", "slo_met": "", "slo_verdict": "", "name": "", "device": "", "profile": "",
         "sharing": ""}
SUFFIX_UNITS = {"_ns": "ns", "_per_s": "1/s", "_bytes": "bytes", "_count": "count"}


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    folder = tmp_path_factory.mktemp("h5summary")
    scenario = folder / "hdf5-vs-summary.yaml"
    scenario.write_text(SCENARIO)
    out = folder / "run.h5"
    run = run_gpumux("run", scenario, "-o", out, "--quiet", cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stderr
    with h5py.File(out, "r") as f:
        tables = {name: f[name][()] for name in f if isinstance(f[name], h5py.Dataset)}
        units = {name: json.loads(text(f[name].attrs["units"]))
                 for name in f if "units" in f[name].attrs}
        series = {text(f["timeseries"][k].attrs["device"]): f["timeseries"][k][()]
                  for k in f["timeseries"]}
        series_units = {text(f["timeseries"][k].attrs["device"]):
                        json.loads(text(f["timeseries"][k].attrs["units"]))
                        for k in f["timeseries"]}
        summary = json.loads(text(f["summary"][()]))
    return {"tables": tables, "units": units, "series": series, "series_units": series_units,
            "summary": summary}


def summary_value(entry, column):
    """The summary value of COLUMN: the key itself, or `<prefix>_ns.<stat>` for
    `<prefix>_<stat>_ns` / `<prefix>_count`; None when the summary has none."""
    if column in entry:
        return entry[column]
    bounds = [f"{q}_{side}" for q in ("p50", "p90", "p99", "p999") for side in ("low", "high")]
    for stat in ("count", "mean", "p50", "p90", "p99", "p999", "max", *bounds):
        suffix = f"_{stat}" if stat == "count" else f"_{stat}_ns"
        if column.endswith(suffix):
            group = entry.get(column[: -len(suffix)] + "_ns")
            if isinstance(group, dict) and stat in group:
                return group[stat]
    return None


def expected_unit(column):
    if column in UNITS:
        return UNITS[column]
    for suffix, unit in SUFFIX_UNITS.items():
        if column.endswith(suffix):
            return unit
    raise AssertionError(f"column {column}: no unit known for it")


def compare_rows(result, table, section, key_column="name"):
    rows = result["tables"][table]
    units = result["units"][table]
    entries = result["summary"][section]
    assert [text(n) for n in rows[key_column]] == list(entries)
    assert set(units) == set(rows.dtype.names), f"/{table}: a column without units"
    compared = set()
    for row, (name, entry) in zip(rows, entries.items()):
        for column in rows.dtype.names:
            assert units[column] == expected_unit(column), f"/{table}.{column} units"
            if column == key_column:
                continue
            expected = summary_value(entry, column)
            if expected is None:
                continue
            compared.add(column)
            value = row[column]
            where = f"/{table}.{column} of {name}"
            if isinstance(expected, str):
                assert text(value) == expected, where
            elif isinstance(expected, bool):
                assert int(value) == int(expected), where
            elif isinstance(expected, int):
                assert int(value) == expected, where
            else:
                assert float(value) == pytest.approx(expected, rel=1e-12, abs=1e-12), where
    return compared


def test_tenants_match_the_summary_column_by_column(result):
    compared = compare_rows(result, "tenants", "tenants")
    # Every summary key of a tenant with a column was compared.
    assert compared >= {"device", "requests", "completed", "failed", "latency_mean_ns",
                        "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns",
                        "latency_max_ns", "queueing_mean_ns", "queueing_p99_ns",
                        "slowdown_mean", "throughput_per_s", "slo_violations", "slo_met",
                        "oom_events", "gpu_seconds", "cost", "latency_p50_low_ns",
                        "latency_p99_high_ns", "queueing_p99_low_ns"}
    # A bound the samples do not give: null in the summary, -1 in the file.
    for row, entry in zip(result["tables"]["tenants"], result["summary"]["tenants"].values()):
        for stat in ("p50", "p90", "p99", "p999"):
            for side in ("low", "high"):
                if entry["latency_ns"].get(f"{stat}_{side}") is None:
                    assert row[f"latency_{stat}_{side}_ns"] == -1
    # Columns without a summary key: the counts are the completed requests (0 for the token
    # statistics of a tenant without tokens), slo_met -1 without an SLO.
    for row, (name, entry) in zip(result["tables"]["tenants"], result["summary"]["tenants"].items()):
        assert row["latency_count"] == row["queueing_count"] == entry["completed"], name
        assert row["ttft_count"] == row["tpot_count"] == 0, name
        assert row["slo_met"] == (int(entry["slo_met"]) if "slo_met" in entry else -1), name


def test_devices_match_the_summary_column_by_column(result):
    compared = compare_rows(result, "devices", "devices")
    assert compared == set(result["tables"]["devices"].dtype.names) - {"name"}
    for name, entry in result["summary"]["devices"].items():
        # The scenario distinguishes the two busy columns on every device.
        assert abs(entry["sm_busy"] - entry["dram_busy"]) > 0.1, name
    gpu0, gpu1 = result["summary"]["devices"]["gpu0"], result["summary"]["devices"]["gpu1"]
    assert gpu0["dram_busy"] > 2 * gpu0["sm_busy"]  # memory-bound stream
    assert gpu1["sm_busy"] > 5 * gpu1["dram_busy"]  # compute-bound GEMM


def test_timeseries_time_weighted_means_are_the_summary_utilisation(result):
    summary = result["summary"]
    assert sorted(result["series"]) == sorted(summary["devices"])
    for device, samples in result["series"].items():
        assert result["series_units"][device] == {"time_ns": "ns", "sm_busy": "1",
                                                  "dram_busy": "1", "memory_used_bytes": "bytes"}
        time = samples["time_ns"].astype(np.int64)
        assert time[-1] == summary["sim_time_ns"]
        period = np.diff(np.concatenate(([0], time)))
        measured = time > WARMUP_NS
        # Warmup falls on a sample boundary, so the measured samples cover exactly [warmup, end].
        assert time[~measured][-1] == WARMUP_NS
        assert period[measured].sum() == summary["sim_time_ns"] - WARMUP_NS
        expected = summary["devices"][device]
        for column in ("sm_busy", "dram_busy"):
            mean = float((samples[column][measured] * period[measured]).sum()
                         / period[measured].sum())
            assert mean == pytest.approx(expected[column], rel=1e-9, abs=1e-9), (device, column)
        used = samples["memory_used_bytes"]
        assert used.max() == expected["memory_peak_bytes"], device


def test_requests_give_the_tenant_statistics(result):
    requests = result["tables"]["requests"]
    for index, (name, entry) in enumerate(result["summary"]["tenants"].items()):
        mine = requests[requests["tenant"] == index]
        measured = mine[(mine["arrival_ns"] >= WARMUP_NS) & (mine["arrival_ns"] < DURATION_NS)]
        assert len(measured) == entry["requests"], name
        done = measured[measured["status"] == 0]
        assert len(done) == entry["completed"], name
        latency = (done["finish_ns"] - done["arrival_ns"]).astype(np.float64)
        queueing = (done["start_ns"] - done["arrival_ns"]).astype(np.float64)
        assert latency.mean() == pytest.approx(entry["latency_ns"]["mean"], rel=1e-12), name
        assert latency.max() == entry["latency_ns"]["max"], name
        assert queueing.mean() == pytest.approx(entry["queueing_ns"]["mean"], rel=1e-12), name


def test_slos_are_the_summary_verdicts(result):
    slos = result["tables"]["slos"]
    assert result["units"]["slos"]["target_ns"] == "ns" == result["units"]["slos"]["value_ns"]
    names = list(result["summary"]["tenants"])
    expected = {(name, key): verdict for name, entry in result["summary"]["tenants"].items()
                for key, verdict in entry.get("slo", {}).items()}
    assert len(slos) == len(expected) == 2
    for row in slos:
        verdict = expected[(names[row["tenant"]], text(row["key"]))]
        assert row["target_ns"] == verdict["target_ns"]
        assert row["value_ns"] == verdict["value_ns"]
        assert bool(row["met"]) == verdict["met"]
        assert row["samples"] == verdict["samples"]
        for bound in ("low_ns", "high_ns"):
            assert row[bound] == (-1 if verdict[bound] is None else verdict[bound])
        assert ("met", "missed", "inconclusive")[row["verdict"]] == verdict["verdict"]
    # One met, one missed: a verdict written from the wrong field shows.
    assert sorted(bool(v["met"]) for v in expected.values()) == [False, True]


def test_events_count_the_summary_ooms(result):
    events = result["tables"]["events"]
    # kind 0 is oom (the enum is checked in test_hdf5_layout.py).
    for index, (name, entry) in enumerate(result["summary"]["tenants"].items()):
        rows = events[(events["tenant"] == index) & (events["kind"] == 0)]
        assert len(rows) == entry["oom_events"], name
