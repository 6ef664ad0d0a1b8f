"""HDF5 result layout (docs/metrics.md), checked with h5py on files written by the gpumux binary.

Runs `$GPUMUX_BIN run scenarios/quickstart.yaml -o OUT.h5` (GPUMUX_BIN defaults to build/gpumux)
and checks root attributes, /summary, the compound tables, /timeseries and `gpumux report`.
"""
import json
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
SCENARIO = str(REPO / "scenarios" / "quickstart.yaml")

ROOT_ATTRIBUTES = ["gpumux_version", "schema_version", "scenario_yaml", "seed", "calibration",
                   "status", "sim_time_ns", "events", "wall_s"]
TABLE_FIELDS = {
    "requests": {"tenant": np.uint32, "request_id": np.uint64, "arrival_ns": np.int64,
                 "start_ns": np.int64, "finish_ns": np.int64, "status": np.uint8},
    "tenants": {"requests": np.int64, "completed": np.int64, "failed": np.int64,
                "latency_mean_ns": np.float64, "latency_p50_ns": np.int64,
                "latency_p99_ns": np.int64, "latency_p999_ns": np.int64,
                "latency_max_ns": np.int64, "queueing_mean_ns": np.float64,
                "queueing_p99_ns": np.int64, "slowdown_mean": np.float64,
                "throughput_per_s": np.float64, "slo_violations": np.int64,
                "oom_events": np.int64, "gpu_seconds": np.float64, "cost": np.float64,
                # each percentile's confidence bounds (-1: the samples give none)
                "latency_p50_low_ns": np.int64, "latency_p99_low_ns": np.int64,
                "latency_p99_high_ns": np.int64, "queueing_p99_high_ns": np.int64,
                "ttft_p999_high_ns": np.int64, "slo_met": np.int8},
    "devices": {"sms": np.int32, "memory_bytes": np.int64, "sm_busy": np.float64,
                "useful_fraction": np.float64, "dram_busy": np.float64,
                "memory_peak_bytes": np.int64,
                "context_switches": np.int64, "switch_overhead_ns": np.int64},
    "events": {"time_ns": np.int64, "kind": np.uint8, "tenant": np.int32, "device": np.int32},
    "kernels": {"tenant": np.uint32, "request_id": np.uint64, "kernel_index": np.uint32,
                "device": np.int32, "start_ns": np.int64, "finish_ns": np.int64},
    "slos": {"tenant": np.uint32, "target_ns": np.int64, "value_ns": np.int64,
             "samples": np.int64, "low_ns": np.int64, "high_ns": np.int64,
             "verdict": np.uint8, "met": np.uint8},
}
STRING_FIELDS = {"tenants": ["name", "device", "slo_verdict"],
                 "devices": ["name", "profile", "sharing"], "events": ["detail"],
                 "slos": ["key"]}
TIMESERIES_FIELDS = {"time_ns": np.int64, "sm_busy": np.float64, "dram_busy": np.float64,
                     "memory_used_bytes": np.int64}


def gpumux(*args, check=True):
    """From the repository root; CHECK: the command must succeed."""
    return run_gpumux(*args, cwd=REPO, timeout=600, check=0 if check else None)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def load_summary(group):
    return json.loads(text(group["summary"][()]))


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "quickstart.h5"
    gpumux("run", SCENARIO, "-o", str(out), "--quiet")
    return out


@pytest.fixture(scope="module")
def kernels_file(tmp_path_factory):
    # A copy of quickstart with `output: {kernels: true}` (--set only changes existing keys).
    scenario = tmp_path_factory.mktemp("scenario") / "quickstart-kernels.yaml"
    scenario.write_text(Path(SCENARIO).read_text() + "\noutput: {kernels: true}\n")
    out = tmp_path_factory.mktemp("kernels") / "quickstart-kernels.h5"
    gpumux("run", str(scenario), "-o", str(out), "--quiet", "--set", "duration=6s")
    return out


def check_table(group, name, rows=None):
    dataset = group[name]
    assert dataset.ndim == 1
    assert dataset.maxshape == (None,), f"/{name} must be extensible (maxdims unlimited)"
    assert dataset.chunks is not None, f"/{name} must be chunked"
    assert dataset.compression == "gzip" and dataset.shuffle
    fields = dataset.dtype.fields
    for field, kind in TABLE_FIELDS[name].items():
        assert field in fields, f"/{name} lacks column {field}"
        assert fields[field][0] == np.dtype(kind), f"/{name}.{field} is {fields[field][0]}"
    for field in STRING_FIELDS.get(name, []):
        assert fields[field][0].kind in "SO", f"/{name}.{field} is not a string"
    if rows is not None:
        assert dataset.shape == (rows,)
    return dataset[()]


def check_tenant_names(group, expected):
    """/tenant_names: a 1-D variable-length UTF-8 string dataset, element i = tenant index i."""
    dataset = group["tenant_names"]
    assert dataset.ndim == 1 and dataset.shape == (len(expected),)
    assert dataset.maxshape == (None,)
    info = h5py.check_string_dtype(dataset.dtype)
    assert info is not None and info.encoding == "utf-8" and info.length is None
    assert list(dataset.asstr()[()]) == expected
    assert json.loads(text(dataset.attrs["units"])) == {"name": ""}
    description = json.loads(text(dataset.attrs["description"]))
    assert list(description) == ["name"] and "tenant index" in description["name"]


def check_run_group(group):
    summary = load_summary(group)
    tenant_names = list(summary["tenants"])
    device_names = list(summary["devices"])
    assert tenant_names and device_names

    tenants = check_table(group, "tenants", len(tenant_names))
    assert [text(n) for n in tenants["name"]] == tenant_names
    check_tenant_names(group, tenant_names)
    for row, name in zip(tenants, tenant_names):
        expected = summary["tenants"][name]
        assert text(row["device"]) == expected["device"]
        for column in ("requests", "completed", "failed", "slo_violations", "oom_events"):
            assert row[column] == expected[column], column
        assert row["latency_p99_ns"] == expected["latency_ns"]["p99"]
        # The confidence bounds: the JSON's (null there is -1 here), around the percentile.
        for stat in ("p50", "p90", "p99", "p999"):
            for side in ("low", "high"):
                value = expected["latency_ns"][f"{stat}_{side}"]
                assert row[f"latency_{stat}_{side}_ns"] == (-1 if value is None else value)
            low, high = row[f"latency_{stat}_low_ns"], row[f"latency_{stat}_high_ns"]
            assert low == -1 or low <= row[f"latency_{stat}_ns"]
            assert high == -1 or high >= row[f"latency_{stat}_ns"]
        assert text(row["slo_verdict"]) == expected.get("slo_verdict", "")

    slos = check_table(group, "slos")
    assert h5py.check_enum_dtype(group["slos"].dtype["verdict"]) == {
        "met": 0, "missed": 1, "inconclusive": 2}
    verdict_names = {0: "met", 1: "missed", 2: "inconclusive"}
    for row in slos:
        expected = summary["tenants"][tenant_names[row["tenant"]]]["slo"][text(row["key"])]
        assert row["samples"] == expected["samples"]
        assert row["low_ns"] == (-1 if expected["low_ns"] is None else expected["low_ns"])
        assert row["high_ns"] == (-1 if expected["high_ns"] is None else expected["high_ns"])
        assert verdict_names[row["verdict"]] == expected["verdict"]
        assert row["met"] == (expected["verdict"] == "met")

    devices = check_table(group, "devices", len(device_names))
    assert [text(n) for n in devices["name"]] == device_names
    for row, name in zip(devices, device_names):
        expected = summary["devices"][name]
        assert text(row["profile"]) == expected["profile"]
        assert row["sms"] == expected["sms"]
        assert row["sm_busy"] == pytest.approx(expected["sm_busy"])
        assert row["dram_busy"] == pytest.approx(expected["dram_busy"])
        assert 0 <= row["dram_busy"] <= 1 + 1e-9

    requests = check_table(group, "requests")
    assert len(requests) >= sum(t["requests"] for t in summary["tenants"].values())
    assert (requests["tenant"] < len(tenant_names)).all()
    assert h5py.check_enum_dtype(group["requests"].dtype["status"]) == {
        "completed": 0, "failed": 1, "unfinished": 2}
    done = requests[requests["status"] == 0]
    assert (done["finish_ns"] >= done["arrival_ns"]).all()
    assert (done["start_ns"] >= done["arrival_ns"]).all()

    check_table(group, "events")
    assert h5py.check_enum_dtype(group["events"].dtype["kind"]) == {
        "oom": 0, "kill": 1, "fault": 2, "reject": 3, "restart": 4, "preempt": 5}

    series = group["timeseries"]
    assert sorted(series[k].attrs["device"] for k in series) == sorted(device_names)
    for key in series:
        assert "/" not in key
        dataset = series[key]
        assert dataset.maxshape == (None,) and dataset.chunks is not None
        for field, kind in TIMESERIES_FIELDS.items():
            assert dataset.dtype.fields[field][0] == np.dtype(kind)
        samples = dataset[()]
        assert (np.diff(samples["time_ns"]) > 0).all()
        assert ((samples["sm_busy"] >= 0) & (samples["sm_busy"] <= 1 + 1e-9)).all()
        assert ((samples["dram_busy"] >= 0) & (samples["dram_busy"] <= 1 + 1e-9)).all()
        # The series ends at the end of the run (a last partial period when end is off-tick).
        if len(samples):
            assert samples["time_ns"][-1] == summary["sim_time_ns"]
    return summary


def test_root_attributes(run_file):
    with h5py.File(run_file, "r") as f:
        for name in ROOT_ATTRIBUTES:
            assert name in f.attrs, f"missing root attribute {name}"
        assert int(f.attrs["schema_version"]) == 1
        assert text(f.attrs["status"]) in ("complete", "interrupted")
        assert "quickstart" in text(f.attrs["scenario_yaml"])
        assert isinstance(json.loads(text(f.attrs["calibration"])), dict)
        summary = load_summary(f)
        assert int(f.attrs["seed"]) == summary["seed"] == 7
        assert int(f.attrs["sim_time_ns"]) == summary["sim_time_ns"]
        assert int(f.attrs["events"]) == summary["events"]


def test_summary_has_spec_shape(run_file):
    with h5py.File(run_file, "r") as f:
        summary = load_summary(f)
    for key in ("scenario", "seed", "status", "sim_time_ns", "events", "wall_s", "tenants",
                "devices"):
        assert key in summary
    assert summary["scenario"] == "quickstart"
    chat = summary["tenants"]["chat"]
    assert chat["device"] == "gpu0"
    assert set(chat["latency_ns"]) == {"mean", "p50", "p90", "p99", "p999", "max", "p50_low",
                                       "p50_high", "p90_low", "p90_high", "p99_low",
                                       "p99_high", "p999_low", "p999_high"}
    assert summary["percentiles"]["confidence"] == 0.95
    assert summary["warmup_ns"] == 5_000_000_000 and summary["duration_ns"] == 60_000_000_000
    assert chat["slo"]["p99"]["verdict"] == "met" and chat["slo_verdict"] == "met"
    assert set(chat["queueing_ns"]) >= {"mean", "p99"}
    for key in ("requests", "completed", "failed", "slowdown_mean", "throughput_per_s",
                "slo_violations", "oom_events"):
        assert key in chat
    gpu = summary["devices"]["gpu0"]
    for key in ("profile", "sms", "memory_bytes", "sm_busy", "useful_fraction", "dram_busy",
                "memory_peak_bytes", "context_switches", "switch_overhead_ns"):
        assert key in gpu
    assert chat["requests"] > 0 and chat["completed"] > 0


def test_tables(run_file):
    with h5py.File(run_file, "r") as f:
        check_run_group(f)
        assert "kernels" not in f, "/kernels is written only with output.kernels"


def test_no_temporary_file_left(run_file):
    assert [p.name for p in run_file.parent.iterdir()] == [run_file.name]


def test_kernels_when_requested(kernels_file):
    with h5py.File(kernels_file, "r") as f:
        kernels = check_table(f, "kernels")
        assert len(kernels) > 0
        assert (kernels["finish_ns"] >= kernels["start_ns"]).all()


def test_report_prints_the_stored_summary(run_file):
    report = gpumux("report", str(run_file)).stdout
    assert "quickstart" in report and "chat" in report and "gpu0" in report


def test_report_of_a_non_result_file_is_bad_input(tmp_path):
    bogus = tmp_path / "notes.h5"
    bogus.write_text("not hdf5\n")
    result = gpumux("report", str(bogus), check=False)
    assert result.returncode == 2
    assert "not a gpumux result file" in result.stderr


def test_compare_file_layout(tmp_path):
    out = tmp_path / "compare.h5"
    gpumux("compare", SCENARIO, "--strategies", "time-slicing,mps", "-o", str(out))
    with h5py.File(out, "r") as f:
        for name in ROOT_ATTRIBUTES:
            assert name in f.attrs
        summaries = load_summary(f)
        assert isinstance(summaries, list) and len(summaries) == 2
        assert sorted(f["strategies"]) == ["mps", "time-slicing"]
        for label in ("time-slicing", "mps"):
            summary = check_run_group(f["strategies"][label])
            assert summary.get("strategy", label) == label
    assert [p.name for p in tmp_path.iterdir()] == ["compare.h5"]


@pytest.fixture(scope="module")
def multi_tenant_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("multi") / "mps-h100.h5"
    gpumux("run", str(REPO / "scenarios" / "mps-h100.yaml"), "-o", str(out), "--quiet",
           "--set", "duration=2s", "--set", "warmup=0s")
    return out


def test_tenant_names_map_request_indices(multi_tenant_file):
    with h5py.File(multi_tenant_file, "r") as f:
        summary = load_summary(f)
        names = list(f["tenant_names"].asstr()[()])
        assert names == list(summary["tenants"]) and len(names) >= 3
        assert names == [text(n) for n in f["tenants"]["name"]]
        tenant = f["requests"]["tenant"]
    # Every index in /requests names a tenant, and each tenant's request count matches.
    assert set(np.unique(tenant)) == set(range(len(names)))
    for i, name in enumerate(names):
        assert (tenant == i).sum() >= summary["tenants"][name]["requests"]


def test_h5dump_shows_the_tenant_names(multi_tenant_file):
    h5dump = shutil.which("h5dump")
    if h5dump is None:
        pytest.skip("h5dump not installed (Debian package hdf5-tools)")
    out = subprocess.run([h5dump, "-d", "/tenant_names", str(multi_tenant_file)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "STRSIZE H5T_VARIABLE" in out.stdout and "H5T_CSET_UTF8" in out.stdout
    assert '(0): "chat-small", "embedder", "vision", "asr"' in out.stdout
    assert "\\000" not in out.stdout  # no NUL padding shown
    assert 'ATTRIBUTE "units"' in out.stdout and 'ATTRIBUTE "description"' in out.stdout


def test_python_reader_uses_tenant_names_and_falls_back_to_tenants(multi_tenant_file, tmp_path):
    gpumux_py = pytest.importorskip("gpumux")
    original = gpumux_py.load(multi_tenant_file)
    names = original.tenant_names
    assert names == list(original.summary["tenants"])
    assert list(original.requests["tenant"].cat.categories) == names

    # The reader takes the names from /tenant_names when the file has it ...
    renamed = tmp_path / "renamed.h5"
    shutil.copyfile(multi_tenant_file, renamed)
    with h5py.File(renamed, "r+") as f:
        f["tenant_names"][...] = [n.upper() for n in names]
    loaded = gpumux_py.load(renamed)
    assert loaded.tenant_names == [n.upper() for n in names]
    assert list(loaded.requests["tenant"].cat.categories) == [n.upper() for n in names]
    assert all(isinstance(n, str) for n in loaded.tenant_names)

    # ... and from /tenants.name in a file written before /tenant_names existed.
    older = tmp_path / "older.h5"
    shutil.copyfile(multi_tenant_file, older)
    with h5py.File(older, "r+") as f:
        del f["tenant_names"]
    old = gpumux_py.load(older)
    assert old.tenant_names == names
    assert old.requests["tenant"].astype(str).tolist() == \
        original.requests["tenant"].astype(str).tolist()
