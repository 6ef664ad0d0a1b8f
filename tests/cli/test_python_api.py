"""The Python API (python/README.md): gpumux.run / load / compare / sweep over the pybind11 module.

Needs the built module on the path: PYTHONPATH=BUILD/python:python (ctest's pytest_cli sets it),
or GPUMUX_BUILD_DIR=BUILD. The CLI comparison uses $GPUMUX_BIN (default build/gpumux, or the
gpumux next to the module's build directory). Simulated durations are kept short.
"""
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

gpumux = pytest.importorskip("gpumux")
if not hasattr(gpumux, "run"):  # build/python alone gives a namespace package without the API
    pytest.skip("gpumux package: put python/ on PYTHONPATH too", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")
SHORT = {"duration": "4s", "warmup": "1s"}
SHORT_SET = [f"{k}={v}" for k, v in SHORT.items()]


def gpumux_binary():
    if os.environ.get("GPUMUX_BIN"):
        return os.environ["GPUMUX_BIN"]
    # The CLI built alongside the imported module (BUILD/python/gpumux/_gpumux*.so).
    beside = Path(gpumux._gpumux.__file__).resolve().parents[2] / "gpumux"
    return str(beside if beside.exists() else REPO / "build" / "gpumux")


def mig_scenario(seed=3, duration="2s"):
    """Three tenants on three MIG instances of one H100."""
    return {
        "name": "mig-small", "seed": seed, "duration": duration, "warmup": "200ms",
        "gpus": [{"name": "gpu0", "model": "h100-sxm-80gb",
                  "mig": ["3g.40gb", "2g.20gb", "2g.20gb"], "sharing": {"mode": "exclusive"}}],
        "tenants": [
            {"name": f"t{i}", "device": f"gpu0/{i}", "memory": "8GiB",
             "workload": {"arrivals": {"process": "poisson", "rate": "100/s"},
                          "request": {"kernels": [
                              {"name": "k", "duration": "2ms", "sm_fraction": 0.5}]}}}
            for i in range(3)],
    }


@pytest.fixture(scope="module")
def quick():
    return gpumux.run(QUICKSTART, overrides=SHORT, seed=11)


def test_version_and_exports():
    assert isinstance(gpumux.__version__, str) and gpumux.__version__.count(".") >= 1
    assert issubclass(gpumux.ScenarioError, ValueError)
    for name in ("run", "load", "compare", "sweep", "validate", "Result"):
        assert hasattr(gpumux, name)
    # The strategy names come from the C++ registry (models/strategies/registry.cpp).
    assert gpumux.SHARING_MODES[:3] == ("exclusive", "time-slicing", "mps")
    assert "mps-static-partition" in gpumux.SHARING_MODES
    for name in ("as-is", "dedicated", "mig", "mig+mps", "mps-static-partition"):
        assert name in gpumux.STRATEGIES


def test_run_matches_cli_json(quick):
    cli = subprocess.run([gpumux_binary(), "run", QUICKSTART, "--seed", "11", "--json",
                          *sum((["--set", s] for s in SHORT_SET), [])],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    got = quick.summary
    assert got["seed"] == expected["seed"] == 11
    for section in ("tenants", "devices"):
        assert list(got[section]) == list(expected[section])
    for name, t in expected["tenants"].items():
        assert got["tenants"][name]["completed"] == t["completed"]
        assert got["tenants"][name]["latency_ns"]["p99"] == t["latency_ns"]["p99"]
        assert got["tenants"][name]["latency_ns"]["p50"] == t["latency_ns"]["p50"]
    # Everything but the wall clock is identical (determinism).
    for s in (got, expected):
        s.pop("wall_s")
    assert got == expected


def test_tables_are_built_once_and_not_copied_on_access(quick):
    # Issue 12 item 5: each access is a new frame over the same arrays (no row copied), so
    # adding a column to one leaves the next access as it was.
    first, second = quick.requests, quick.requests
    assert first is not second
    assert np.shares_memory(first["arrival_ns"].to_numpy(), second["arrival_ns"].to_numpy())
    first["my_column"] = first["finish_ns"] - first["arrival_ns"]
    assert "my_column" not in quick.requests.columns
    series = quick.timeseries
    name = next(iter(series))
    assert np.shares_memory(series[name]["time_ns"].to_numpy(),
                            quick.timeseries[name]["time_ns"].to_numpy())
    assert np.shares_memory(quick.tenants["completed"].to_numpy(),
                            quick.tenants["completed"].to_numpy())


def test_result_tables(quick):
    s = quick.summary
    tenants, devices, requests = quick.tenants, quick.devices, quick.requests
    assert list(tenants.index) == ["chat"] and list(devices.index) == ["gpu0"]
    chat = tenants.loc["chat"]
    assert chat["completed"] == s["tenants"]["chat"]["completed"] > 0
    assert chat["latency_p99_ns"] == s["tenants"]["chat"]["latency_ns"]["p99"]
    assert devices.loc["gpu0", "sm_busy"] == pytest.approx(s["devices"]["gpu0"]["sm_busy"])
    assert list(requests.columns[:6]) == ["tenant", "request_id", "arrival_ns", "start_ns",
                                          "finish_ns", "status"]
    assert isinstance(requests["tenant"].dtype, pd.CategoricalDtype)
    assert list(requests["status"].cat.categories) == ["completed", "failed", "unfinished"]
    assert requests["arrival_ns"].dtype == np.int64
    done = requests[requests["status"] == "completed"]
    assert (done["latency_ns"] == done["finish_ns"] - done["arrival_ns"]).all()
    # The summary counts requests that arrived after warmup.
    measured = requests[requests["arrival_ns"] >= 1_000_000_000]
    assert len(measured) == s["tenants"]["chat"]["requests"]
    assert np.all(np.diff(requests["arrival_ns"].to_numpy()) >= 0) or len(requests) < 2
    series = quick.timeseries["gpu0"]
    assert list(series.columns) == ["time_ns", "sm_busy", "dram_busy", "memory_used_bytes"]
    assert len(series) >= 40  # 4 s sampled every 100 ms (and a last sample at the drain's end)
    assert series["time_ns"].iloc[0] == 100_000_000
    assert series["time_ns"].iloc[-1] == s["sim_time_ns"]
    assert ((series["sm_busy"] >= 0) & (series["sm_busy"] <= 1)).all()
    assert ((series["dram_busy"] >= 0) & (series["dram_busy"] <= 1)).all()
    assert devices.loc["gpu0", "dram_busy"] == pytest.approx(s["devices"]["gpu0"]["dram_busy"])
    assert list(quick.events.columns) == ["time_ns", "kind", "tenant", "device", "detail"]
    assert "name: quickstart" in quick.scenario_yaml
    assert "quickstart" in repr(quick) and "chat" in repr(quick)
    assert "chat" in quick.table()


def test_dict_scenario_and_yaml_text():
    import yaml
    doc = yaml.safe_load(Path(QUICKSTART).read_text())
    doc.update(SHORT)
    from_dict = gpumux.run(doc, seed=11)
    from_path = gpumux.run(QUICKSTART, overrides=SHORT, seed=11)
    from_text = gpumux.run(yaml.safe_dump(doc), seed=11)
    for r in (from_dict, from_text):
        a, b = r.summary, from_path.summary
        a.pop("wall_s"), b.pop("wall_s")
        assert a == b


def test_overrides_change_results():
    base = gpumux.run(QUICKSTART, overrides=SHORT)
    half = gpumux.run(QUICKSTART, overrides={**SHORT, "tenants.0.workload.arrivals.rate": "100/s"})
    as_list = gpumux.run(QUICKSTART, overrides=SHORT_SET + ["tenants.0.workload.arrivals.rate=100/s"])
    n_base = base.summary["tenants"]["chat"]["requests"]
    n_half = half.summary["tenants"]["chat"]["requests"]
    assert 0.4 < n_half / n_base < 0.6
    assert as_list.summary["tenants"]["chat"]["requests"] == n_half
    # A different seed gives different arrivals; the same seed the same ones.
    other = gpumux.run(QUICKSTART, overrides=SHORT, seed=12)
    again = gpumux.run(QUICKSTART, overrides=SHORT, seed=12)
    assert other.requests["arrival_ns"].tolist() != base.requests["arrival_ns"].tolist()
    assert other.requests["arrival_ns"].tolist() == again.requests["arrival_ns"].tolist()


def test_scenario_error_has_location(tmp_path):
    bad = tmp_path / "bad.yaml"
    lines = Path(QUICKSTART).read_text().splitlines()
    line = lines.index("duration: 60s") + 1
    lines[line - 1] = "duration: 60"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(gpumux.ScenarioError) as info:
        gpumux.run(bad)
    message = str(info.value)
    assert message.startswith(f"{bad}:{line}:11: duration: ")  # FILE:LINE:COLUMN: key: message
    assert "duration" in message and "\n" not in message
    with pytest.raises(ValueError):  # ScenarioError is a ValueError
        gpumux.run(QUICKSTART, overrides=["no-equals-sign"])
    with pytest.raises(gpumux.ScenarioError, match="model"):
        gpumux.validate({**mig_scenario(), "gpus": [{"name": "gpu0", "model": "no-such-gpu"}]})
    with pytest.raises(FileNotFoundError):
        gpumux.run(tmp_path / "missing.yaml")


def test_validate():
    info = gpumux.validate(mig_scenario())
    assert info["name"] == "mig-small"
    assert [d["name"] for d in info["devices"]] == ["gpu0/0", "gpu0/1", "gpu0/2"]
    assert info["devices"][0]["profile"] == "3g.40gb"
    assert info["tenants"] == ["t0", "t1", "t2"]


def test_save_load_round_trip(quick, tmp_path):
    path = tmp_path / "out.h5"
    quick.save(path)
    loaded = gpumux.load(path)
    assert loaded.summary == quick.summary
    assert len(loaded.requests) == len(quick.requests)
    pd.testing.assert_frame_equal(loaded.requests, quick.requests)
    pd.testing.assert_frame_equal(loaded.tenants, quick.tenants, check_dtype=False)
    pd.testing.assert_frame_equal(loaded.devices, quick.devices, check_dtype=False)
    assert loaded.scenario_yaml == quick.scenario_yaml
    assert list(loaded.timeseries) == ["gpu0"]
    pd.testing.assert_frame_equal(loaded.timeseries["gpu0"], quick.timeseries["gpu0"])
    # The CLI reads what Python wrote.
    report = subprocess.run([gpumux_binary(), "report", str(path), "--json"],
                            capture_output=True, text=True, timeout=60)
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout) == quick.summary
    # Saving a loaded result writes an equivalent file.
    again = tmp_path / "again.h5"
    loaded.save(again)
    assert gpumux.load(again).summary == quick.summary
    with pytest.raises(ValueError, match="not a gpumux result file"):
        bogus = tmp_path / "bogus.h5"
        bogus.write_text("not hdf5")
        gpumux.load(bogus)


def test_compare_mig_strategies(tmp_path):
    strategies = ["mig", "time-slicing", "mps"]
    frame, results = gpumux.compare(mig_scenario(), strategies, return_results=True)
    assert list(frame.index.names) == ["strategy", "tenant"]
    assert list(dict.fromkeys(frame.index.get_level_values("strategy"))) == strategies
    assert len(frame) == 9
    # Columns from the metric table: every /tenants column and the device's, so a new metric
    # reaches the frame unlisted.
    table = gpumux.metric_table()
    tenant_columns = [m["column"] for m in table
                      if m["scope"] == "tenant" and m["h5"] and m["column"] != "name"]
    device_columns = [f"device_{m['column']}" for m in table
                      if m["scope"] == "device" and m["h5"] and m["column"] != "name"]
    assert list(frame.columns) == gpumux.compare_columns() == [
        *tenant_columns, *device_columns, "mean_sm_busy", "devices"]
    for column in ("latency_p50_ns", "latency_p99_ns", "latency_p99_low_ns",
                   "latency_p99_high_ns", "latency_mean_ns", "throughput_per_s",
                   "slowdown_mean", "failed", "oom_events", "slo_verdict", "device_sm_busy",
                   "device_useful_fraction", "device_switch_overhead_ns", "mean_sm_busy"):
        assert column in frame.columns, column
    assert frame.loc[("mps", "t1"), "latency_p99_ns"] == \
        results["mps"].tenants.loc["t1", "latency_p99_ns"]
    assert frame.loc[("mig", "t1"), "device"] == "gpu0/1"
    assert frame.loc[("mps", "t1"), "device"] == "gpu0"
    # Same arrivals under every strategy.
    requests = frame["requests"].unstack("strategy")
    assert (requests.nunique(axis=1) == 1).all()
    assert list(results) == strategies and results["mps"].strategy == "mps"
    # Returned Results keep their per-request records (the frame alone does not need them).
    assert len(results["mps"].requests) >= results["mps"].tenants["completed"].sum() > 0
    # A comma-separated string works too (without return_results: no request records kept),
    # and equals a single run of that variant.
    again = gpumux.compare(mig_scenario(), "mig, mps")
    pd.testing.assert_frame_equal(again.loc[["mig", "mps"]].reset_index(drop=True),
                                  frame.loc[["mig", "mps"]].reset_index(drop=True),
                                  check_categorical=False)
    # Tidy: categorical strategy / tenant levels (reset_index gives the long table's columns).
    tidy = frame.reset_index()
    assert list(tidy["strategy"].cat.categories) == strategies
    assert isinstance(tidy["tenant"].dtype, pd.CategoricalDtype)
    assert isinstance(tidy["device"].dtype, pd.CategoricalDtype)
    assert len(tidy) == 9 and list(tidy.columns[:2]) == ["strategy", "tenant"]
    # Compare files: save_compare + load -> list of Results in strategy order.
    path = tmp_path / "cmp.h5"
    gpumux.save_compare(path, results)
    loaded = gpumux.load(path)
    assert [r.strategy for r in loaded] == strategies
    assert loaded[2].summary == results["mps"].summary
    assert gpumux.load(path, strategy="time-slicing").summary == results["time-slicing"].summary
    pd.testing.assert_frame_equal(gpumux.compare_frame(loaded), frame)
    with pytest.raises(gpumux.ScenarioError):
        gpumux.compare(mig_scenario(), ["mig", "no-such-strategy"])


def test_sweep_grid_order_and_determinism():
    grid = {"tenants.0.workload.arrivals.rate": ["100/s", "200/s"], "duration": ["3s", "4s"]}
    one = gpumux.sweep(QUICKSTART, grid, processes=1, overrides={"warmup": "1s"})
    two = gpumux.sweep(QUICKSTART, grid, processes=2, overrides={"warmup": "1s"})
    # Tidy: one row per point x tenant (quickstart has one tenant), grid values parsed to numbers
    # with the unit in the column name.
    assert len(one) == 4
    assert list(one.columns[:3]) == ["point", "rate_per_s", "duration_s"]
    assert one[["rate_per_s", "duration_s"]].values.tolist() == [[100.0, 3.0], [100.0, 4.0],
                                                                 [200.0, 3.0], [200.0, 4.0]]
    for column in ("status", "tenant", "device", "latency_p50_ns", "latency_p99_ns",
                   "latency_p99_low_ns", "latency_p99_high_ns", "throughput_per_s", "failed",
                   "slo_verdict", "device_sm_busy", "device_dram_busy", "device_useful_fraction"):
        assert column in one.columns, column
    # Every tenant metric of the metric table with a JSON path is a column.
    for m in gpumux.metric_table():
        if m["scope"] == "tenant" and m["h5"] and m["json"]:
            assert m["column"] in one.columns, m["column"]
    for column in ("tenant", "device", "status"):
        assert isinstance(one[column].dtype, pd.CategoricalDtype), column
    assert one["tenant"].tolist() == ["chat"] * 4
    pd.testing.assert_frame_equal(one, two)
    # Each row is the same as a run() of that point.
    point = gpumux.run(QUICKSTART, overrides={"warmup": "1s", "duration": "4s",
                                              "tenants.0.workload.arrivals.rate": "200/s"})
    assert one.loc[3, "latency_p99_ns"] == point.summary["tenants"]["chat"]["latency_ns"]["p99"]
    assert one.loc[3, "latency_p99_low_ns"] == \
        point.summary["tenants"]["chat"]["latency_ns"]["p99_low"]
    # A bad point raises naming the point, or is recorded.
    bad = {"duration": ["500ms", "3s"]}
    with pytest.raises(gpumux.ScenarioError, match="500ms"):
        gpumux.sweep(QUICKSTART, bad, processes=1, overrides={"warmup": "1s"})
    recorded = gpumux.sweep(QUICKSTART, bad, processes=1, overrides={"warmup": "1s"},
                            on_error="record")
    assert recorded["error"].notna().tolist() == [True, False]
    assert recorded.columns[-1] == "error"
    assert recorded["duration_ns"].tolist() == [5e8, 3e9]  # mixed units: the base unit (ns)


def test_python_readme_names_columns_the_frames_have():
    """python/README.md's sweep and compare columns are real columns (issue 24: they had
    drifted)."""
    from gpumux.sweep import grid_column
    text = (REPO / "python" / "README.md").read_text(encoding="utf-8")
    sweeps = text.split("* **Sweeps**")[1].split("\n* ")[0]
    named = set(re.findall(r"`([a-z][a-z0-9_]*)`", sweeps))
    assert {"point", "status", "tenant", "latency_p99_low_ns", "device_sm_busy"} <= named
    grid = {"tenants.0.workload.arrivals.rate": ["100/s"], "duration": ["500ms", "3s"]}
    frame = gpumux.sweep(QUICKSTART, grid, processes=1, overrides={"warmup": "1s"},
                         on_error="record")
    assert grid_column("gpus.0.sharing.timeslice", ["1024us", "4ms"])[0] == "timeslice_ns"
    assert grid_column("tenants.0.workload.arrivals.rate", ["100/s"])[0] == "rate_per_s"
    missing = named - set(frame.columns) - {"timeslice_ns"}
    assert not missing, missing
    # The compare() comment of the code block: names after "compare_columns()):".
    block = text.split("compare_columns()):")[1].split("\ngpumux.")[0]
    listed = set(re.findall(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b", block))
    assert {"latency_p99_ns", "slo_verdict", "device_useful_fraction"} <= listed
    assert listed <= set(gpumux.compare_columns()), listed - set(gpumux.compare_columns())


def test_sweep_long_format_many_tenants_and_grid_columns():
    from gpumux.sweep import grid_column, grid_columns
    assert grid_column("gpus.0.sharing.timeslice", ["1024us", "4ms"]) == (
        "timeslice_ns", [1024e3, 4e6])
    assert grid_column("gpus.0.sharing.timeslice", ["1ms", "4ms"]) == ("timeslice_ms", [1.0, 4.0])
    assert grid_column("tenants.0.memory", ["8Gi", "16GiB"]) == ("memory_GiB", [8.0, 16.0])
    assert grid_column("gpus.0.sharing.mode", ["mps", "time-slicing"]) == (
        "mode", ["mps", "time-slicing"])
    assert grid_column("seed", [1, 2]) == ("seed", [1, 2])
    assert list(grid_columns(["tenants.0.workload.arrivals.rate",
                              "tenants.1.workload.arrivals.rate"],
                             [{"tenants.0.workload.arrivals.rate": "1/s",
                               "tenants.1.workload.arrivals.rate": "2/s"}])) == [
        "tenants_0_workload_arrivals_rate_per_s", "tenants_1_workload_arrivals_rate_per_s"]
    frame = gpumux.sweep(mig_scenario(duration="1s"),
                         {"gpus.0.sharing.mode": ["mps", "time-slicing"]}, processes=1)
    assert len(frame) == 2 * 3  # points x tenants
    assert list(frame["mode"].cat.categories) == ["mps", "time-slicing"]
    wide = frame.pivot_table(index="mode", columns="tenant", values="latency_p99_ns",
                             observed=False)
    assert wide.shape == (2, 3)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # tornado, inside distributed
def test_sweep_with_dask_client():
    distributed = pytest.importorskip("distributed")
    grid = {"tenants.0.workload.arrivals.rate": ["100/s", "200/s"], "duration": ["3s", "4s"]}
    local = gpumux.sweep(QUICKSTART, grid, processes=1, overrides={"warmup": "1s"})
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = gpumux.sweep(QUICKSTART, grid, client=client, overrides={"warmup": "1s"})
    pd.testing.assert_frame_equal(local, remote)


def test_gil_released_two_threads():
    """Two simulations in two threads; meanwhile the main thread keeps running Python."""
    long = {"duration": "2000s", "warmup": "1s"}
    start = time.perf_counter()
    reference = gpumux.run(QUICKSTART, overrides=long)
    solo_s = time.perf_counter() - start
    results, errors = {}, []

    def work(seed):
        try:
            results[seed] = gpumux.run(QUICKSTART, overrides=long, seed=seed)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in (7, 8)]
    for t in threads:
        t.start()
    gaps, last = [], time.perf_counter()
    while any(t.is_alive() for t in threads):
        time.sleep(0.001)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    for t in threads:
        t.join()
    assert not errors
    assert results[7].summary["tenants"] == reference.summary["tenants"]  # seed 7 = scenario's
    assert results[8].summary["tenants"] != reference.summary["tenants"]
    # Were the GIL held for a whole simulation, the main thread would stall that long.
    if solo_s > 0.2:
        assert max(gaps) < 0.5 * solo_s, (max(gaps), solo_s)


def test_progress_callback_and_errors_propagate():
    calls = []
    gpumux.run(QUICKSTART, overrides={"duration": "300s", "warmup": "1s"},
               progress=lambda now, horizon, events: calls.append((now, horizon, events)))
    assert calls and all(h == 300_000_000_000 for _, h, _ in calls)
    assert [c[2] for c in calls] == sorted(c[2] for c in calls)

    class Stop(Exception):
        pass

    def stop(*_):
        raise Stop()

    with pytest.raises(Stop):
        gpumux.run(QUICKSTART, overrides={"duration": "300s", "warmup": "1s"}, progress=stop)


def test_ctrl_c_interrupts_run():
    """SIGINT during a run stops the C++ simulation and raises KeyboardInterrupt."""
    import signal
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are delivered to the main thread")
    timer = threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            gpumux.run(QUICKSTART, overrides={"duration": "20000s", "warmup": "1s"})
            time.sleep(5)  # not reached unless the run ended before the signal
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 4


def test_plots(quick):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from gpumux import plot  # one module for the CLI's figures and the notebook helpers
    import importlib.util
    assert importlib.util.find_spec("gpumux.plots") is None
    assert plot.latency_cdf(quick).get_lines()
    assert plot.sm_busy(quick).get_lines()
    frame = gpumux.compare(mig_scenario(duration="1s"), ["mig", "mps"])
    assert plot.compare_bars(frame).patches


def test_profile_cache_is_keyed_by_content(tmp_path):
    # A profile file edited between two runs in one process: the second run uses the new
    # numbers and records the new hash (the cache was keyed by path alone).
    source = REPO / "calibration" / "profiles" / "h100-sxm-80gb.yaml"
    profile = tmp_path / "my-h100.yaml"
    text = source.read_text()
    profile.write_text(text)
    scenario = {"name": "profile-edit", "duration": "2s",
                "gpus": [{"name": "gpu0", "model": str(profile)}],
                "tenants": [{"name": "t", "device": "gpu0", "workload": {
                    "arrivals": {"process": "poisson", "rate": "100/s"},
                    "request": {"kernels": [{"name": "k", "duration": "1ms"}]}}}]}
    first = gpumux.run(scenario)
    assert "launch_overhead:\n  value: 2.37us" in text
    profile.write_text(text.replace("launch_overhead:\n  value: 2.37us",
                                    "launch_overhead:\n  value: 500us"))
    second = gpumux.run(scenario)
    assert first.calibration != second.calibration
    assert second.tenants.loc["t", "latency_p50_ns"] > first.tenants.loc["t", "latency_p50_ns"] + 4e5
    profile.write_text(text)  # back: the first numbers and hash again
    third = gpumux.run(scenario)
    assert third.calibration == first.calibration
    assert third.tenants.loc["t", "latency_p50_ns"] == first.tenants.loc["t", "latency_p50_ns"]
