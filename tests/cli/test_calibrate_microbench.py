"""`gpumux calibrate` on calibration/microbench output (docs/calibration.md, "Calibrating to your
own GPU"): on synthetic probe output with known parameters (calibration/microbench/synthetic.py)
it gives the numbers calibration/microbench/fit.py gives, recovers the known parameters, writes a
profile that runs, is deterministic, and refuses bad files with one line naming file, line and
column (exit 2). Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
MB = REPO / "calibration" / "microbench"
sys.path.insert(0, str(MB))
import synthetic  # noqa: E402

TIME_KEYS = ("timeslice", "context_switch", "preemption_latency", "launch_overhead",
             "graph_launch_overhead")


def fit_py(data, tmp_path):
    proc = subprocess.run([sys.executable, str(MB / "fit.py"), str(data), "--json",
                           str(tmp_path / "m.json"), "--report", str(tmp_path / "m.md"),
                           "--snippet", str(tmp_path / "s.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((tmp_path / "m.json").read_text())


def fit_py_values(res):
    """fit.py's parameters, keyed as the profile keys, in us (GB/s for the bandwidth)."""
    return {"timeslice": res["timeslice_us"]["median"],
            "context_switch": res["context_switch_us"],
            "preemption_latency": res["preemption_latency_us"],
            "launch_overhead": res["launch"]["launch_stream_us"]["value"],
            "graph_launch_overhead": res["launch"]["launch_graph_us"]["value"],
            "hbm_bandwidth_measured": res["launch"]["bw_read_GBps"]["value"]}


def profile_entries(text):
    """{key: value text} of the fitted top-level entries of a written profile."""
    return dict(re.findall(r"^(\w+): \{value: ([^,]+), fitted:", text, re.M))


def one_error_line(proc, *needles):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def synthetic_raw(tmp_path_factory):
    data = tmp_path_factory.mktemp("mb") / "raw"
    synthetic.write_all(str(data))  # T 1024 us, S 25 us, C_out 10 us, launch 2.2 us
    return data


@pytest.mark.parametrize("T,S,C,jitter,tick,launch", [
    (1024.0, 25.0, 10.0, 5.0, 32, 2.2),
    (2000.0, 60.0, 20.0, 20.0, 1000, 4.5),
])
def test_equals_fit_py_and_recovers_the_known_parameters(tmp_path, T, S, C, jitter, tick,
                                                         launch):
    data = tmp_path / "raw"
    synthetic.write_all(str(data), timeslice_us=T, switch_us=S, switch_out_us=C,
                        jitter_us=jitter, tick=tick, launch_us=launch, seed=7)
    expected = fit_py_values(fit_py(data, tmp_path))
    out = tmp_path / "mine.yaml"
    proc = run_gpumux("calibrate", data, "--profile", "h200-141gb", "-o", out, "--json")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)["microbench"]
    assert set(got["values"]) == set(expected)
    for key, value in expected.items():
        assert got["values"][key]["value"] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    # the profile holds the same numbers, durations in whole ns
    entries = profile_entries(out.read_text())
    for key in TIME_KEYS:
        ns = int(entries[key].removesuffix("ns"))
        assert abs(ns - expected[key] * 1000) <= 0.5 + 1e-6, key
    assert float(entries["hbm_bandwidth_measured"].removesuffix("GB/s")) == pytest.approx(
        expected["hbm_bandwidth_measured"], rel=1e-9)
    # and the known parameters come back (the tolerances of the %globaltimer tick)
    q = tick / 1000.0
    v = {k: got["values"][k]["value"] for k in got["values"]}
    assert v["timeslice"] == pytest.approx(T, rel=0.01)
    assert v["context_switch"] == pytest.approx(C, abs=1.0 + 2 * q)
    assert v["preemption_latency"] == pytest.approx(S - C, abs=2.0 + 3 * q)
    assert v["launch_overhead"] == launch
    # leave one run out: the N = 2 and N = 3 runs are folds; the wait law holds out of sample
    assert got["values"]["timeslice"]["folds"] == 2
    lo, hi = got["values"]["timeslice"]["fold_min"], got["values"]["timeslice"]["fold_max"]
    assert lo <= v["timeslice"] <= hi and hi - lo < 0.01 * T
    assert [r["spinners"] for r in got["wait"]["runs"]] == [2, 3]
    for r in got["wait"]["runs"]:
        n = r["spinners"]
        assert r["in_sample_us"] == pytest.approx((n - 1) * (v["timeslice"] + S) + S, rel=0.01)
    assert 0 <= got["wait"]["out_of_sample"] < 0.01
    # provenance: fitted, the data, the run's date
    text = out.read_text()
    assert 'timeslice: {value: ' in text and "2026-11-20; NVIDIA H200" in text
    assert text.count("\ntimeslice:") == 1  # the base's entry was replaced


def test_the_profile_runs_and_the_output_is_deterministic(tmp_path, synthetic_raw):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    files = sorted(synthetic_raw.glob("*.csv"))  # as a shell's raw/*.csv
    for out in (a, b):
        proc = run_gpumux("calibrate", *files, "--profile", "h100-sxm-80gb", "-o", out, "-q")
        assert proc.returncode == 0, proc.stderr
    assert a.read_bytes() == b.read_bytes()
    # --date replaces the run's date, and nothing else
    c = tmp_path / "c.yaml"
    run_gpumux("calibrate", *files, "--profile", "h100-sxm-80gb", "-o", c, "--date",
               "2027-01-02", check=0)
    assert c.read_text() == a.read_text().replace("2026-11-20", "2027-01-02")
    # run_all.sh's bookkeeping beside the data changes nothing (an empty resolution.csv, an
    # nvidia-smi query that failed)
    folder = tmp_path / "raw"
    folder.mkdir()
    for f in files:
        (folder / f.name).write_bytes(f.read_bytes())
    (folder / "resolution.csv").write_text("")
    (folder / "nvidia-smi-before.csv").write_text("Failed to initialize NVML\n")
    (folder / "steps.csv").write_text("step,rc\nlaunch_probe,0\n")
    d = tmp_path / "d.yaml"
    run_gpumux("calibrate", folder, "--profile", "h100-sxm-80gb", "-o", d, "-q", check=0)
    assert d.read_text() == a.read_text().replace(str(synthetic_raw), str(folder))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"""name: s
duration: 50ms
gpus: [{{name: gpu0, model: "{a}", sharing: {{mode: time-slicing}}}}]
tenants:
  - {{name: x, device: gpu0, workload: {{model: resnet50, batch: 1, arrivals: {{process: poisson, rate: 200/s}}}}}}
  - {{name: y, device: gpu0, workload: {{model: resnet50, batch: 1, arrivals: {{process: poisson, rate: 200/s}}}}}}
""")
    run_gpumux("run", scenario, "--json", "-q", check=0)


def test_fit_picks_keys_and_refuses_files_it_cannot_use(tmp_path, synthetic_raw):
    out = tmp_path / "p.yaml"
    run_gpumux("calibrate", synthetic_raw / "launch.csv", "--profile", "h200-141gb", "-o", out,
               "--fit", "launch_overhead", check=0)
    assert set(profile_entries(out.read_text())) == {"launch_overhead"}
    # a launch CSV cannot inform the time-slice
    one_error_line(run_gpumux("calibrate", synthetic_raw / "launch.csv", "--fit", "timeslice"),
                   "--fit timeslice", "no data file")
    one_error_line(run_gpumux("calibrate", synthetic_raw / "launch.csv",
                              synthetic_raw / "ts_n2_meta.csv", synthetic_raw / "ts_n2_gaps.csv",
                              "--fit", "timeslice"),
                   f"{synthetic_raw / 'launch.csv'}:1: header", "informs launch_overhead")
    # the same files as a folder: its launch.csv is what the run wrote beside them, let be
    run_gpumux("calibrate", synthetic_raw, "--profile", "h200-141gb", "-o", out, "--fit",
               "timeslice", check=0)
    assert set(profile_entries(out.read_text())) == {"timeslice"}
    one_error_line(run_gpumux("calibrate", synthetic_raw / "launch.csv", "--fit",
                              "kernel_fixed_cost"), "--fit kernel_fixed_cost")
    one_error_line(run_gpumux("calibrate", synthetic_raw / "launch.csv", "--fit", "nonsense"),
                   "--fit: unknown parameter 'nonsense'")
    # -o needs a base profile when no catalog point names one
    one_error_line(run_gpumux("calibrate", synthetic_raw, "-o", out), "--profile",
                   "NVIDIA H200")
    # catalog points beside microbenchmarks: their fit would absorb the old launch overhead
    points = tmp_path / "points.csv"
    points.write_text("id,source,model,phase,batch,seq_len,dtype,runtime,profile,mig,metric,"
                      "value,unit\nb1,one,bert-base,inference,1,128,fp16,tensorrt,a100-80gb,,"
                      "latency,1.0,ms\n")
    one_error_line(run_gpumux("calibrate", points, synthetic_raw / "launch.csv"),
                   f"{synthetic_raw / 'launch.csv'}: calibration/microbench output and catalog")
    # a meta file without its gaps file
    one_error_line(run_gpumux("calibrate", synthetic_raw / "ts_n2_meta.csv"), "ts_n2_gaps.csv")


def copy_with(tmp_path, src, name, edit):
    path = tmp_path / name
    path.write_text(edit(src.read_text()))
    return path


def test_bad_files_are_one_line_naming_file_line_and_column(tmp_path, synthetic_raw):
    raw = synthetic_raw
    gaps = raw / "ts_n2_gaps.csv"

    def lines_of(text):
        return text.splitlines(keepends=True)

    def set_cell(text, line, column, value):
        rows = lines_of(text)
        header = rows[0].strip().split(",")
        cells = rows[line - 1].rstrip("\n").split(",")
        cells[header.index(column)] = value
        rows[line - 1] = ",".join(cells) + "\n"
        return "".join(rows)

    # negative, non-numeric, a gap that ends before it starts
    for value, why in (("-5", "non-negative"), ("fast", "non-negative")):
        bad = copy_with(tmp_path, gaps, "ts_n2_gaps.csv", lambda t: set_cell(t, 4, "block", value))
        one_error_line(run_gpumux("calibrate", raw / "ts_n2_meta.csv", bad),
                       f"{bad}:4: block:", why)
    bad = copy_with(tmp_path, gaps, "ts_n2_gaps.csv",
                    lambda t: set_cell(t, 3, "gap_end_ns", "1000"))
    one_error_line(run_gpumux("calibrate", raw / "ts_n2_meta.csv", bad),
                   f"{bad}:3: gap_end_ns:", "before gap_start_ns")
    # a missing column: the file's name says what it should be
    bad = copy_with(tmp_path, gaps, "ts_n2_gaps.csv",
                    lambda t: t.replace("gap_end_ns", "gap_stop_ns", 1))
    one_error_line(run_gpumux("calibrate", raw / "ts_n2_meta.csv", bad),
                   f"{bad}:1: gap_end_ns: missing column")
    bad = copy_with(tmp_path, raw / "launch.csv", "launch.csv",
                    lambda t: t.replace("value", "val", 1))
    one_error_line(run_gpumux("calibrate", bad), f"{bad}:1: value: missing column")
    bad = copy_with(tmp_path, raw / "launch.csv", "launch.csv",
                    lambda t: set_cell(t, 2, "value", "-2.2"))
    one_error_line(run_gpumux("calibrate", bad), f"{bad}:2: value:", "non-negative")
    # a header of no known kind, an empty file, a short row
    bad = tmp_path / "what.csv"
    bad.write_text("a,b,c\n1,2,3\n")
    one_error_line(run_gpumux("calibrate", bad), f"{bad}:1: header: not a file")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    one_error_line(run_gpumux("calibrate", empty), f"{empty}:1: header: empty file")
    bad = copy_with(tmp_path, raw / "sk_sync_kernels.csv", "sk_sync_kernels.csv",
                    lambda t: "".join(lines_of(t)[:5]) + "0,1,2\n")
    one_error_line(run_gpumux("calibrate", raw / "sk_sync_meta.csv", raw / "sk_sync_gaps.csv",
                              bad), f"{bad}:6: row:")
    bad = copy_with(tmp_path, raw / "run-info.csv", "run-info.csv",
                    lambda t: t.replace("2026-11-20", "yesterday"))
    one_error_line(run_gpumux("calibrate", raw / "launch.csv", bad), f"{bad}:2: date_utc:")
    one_error_line(run_gpumux("calibrate", raw / "launch.csv", "--date", "20-11-2026"),
                   "--date")


@pytest.mark.parametrize("trace", ["llama7b-decode-a100.csv", "llama7b-decode-a100.pt.trace.json",
                                   "llama7b-decode-a100.sqlite", "orion/resnet50_4_fwd.csv"])
def test_a_kernel_trace_is_refused_saying_what_it_lacks(trace):
    path = REPO / "scenarios" / "traces" / "kernels" / trace
    one_error_line(run_gpumux("calibrate", path), f"{path}:1: header: a kernel trace",
                   "no FLOPs or bytes")


def test_python_calibrate_equals_the_cli_on_microbench_output(synthetic_raw, tmp_path):
    import gpumux as gm  # the module built beside the binary
    out = tmp_path / "cli.yaml"
    proc = run_gpumux("calibrate", synthetic_raw, "--profile", "h200-141gb", "-o", out, "--json")
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)["microbench"]
    mine = tmp_path / "py.yaml"
    res = gm.calibrate(synthetic_raw, profile="h200-141gb", output=mine)
    assert {k: v for k, v in res.items() if k not in ("report", "profile_text")} == cli
    assert mine.read_text() == out.read_text() == res["profile_text"]
    assert "timeslice" in res["report"]
    # The same files listed one by one, and a subset of the keys.
    files = sorted(str(p) for p in synthetic_raw.glob("*.csv"))
    assert gm.calibrate(files)["values"] == cli["values"]
    only = gm.calibrate(synthetic_raw, fit=["timeslice"], profile="h200-141gb",
                        output=tmp_path / "t.yaml")
    assert set(profile_entries(only["profile_text"])) == {"timeslice"}


def test_python_calibrate_refuses_mixed_or_unknown_microbench_requests(synthetic_raw, tmp_path):
    import gpumux as gm
    points = REPO / "calibration" / "fit" / "solo-latency.csv"
    with pytest.raises(gm.ScenarioError, match="catalog points in one call"):
        gm.calibrate([str(synthetic_raw / "launch.csv"), str(points)])
    # The same checks as the CLI's --fit, in the same words (one shared definition).
    with pytest.raises(gm.ScenarioError, match="fit block_round_cost: no data file given informs"):
        gm.calibrate(synthetic_raw, fit=["block_round_cost"])
    with pytest.raises(gm.ScenarioError, match="fit: unknown parameter 'nonsense'"):
        gm.calibrate(synthetic_raw, fit=["nonsense"])
    # A file named one by one must inform a key asked for; a folder's other files are let be.
    files = sorted(str(p) for p in synthetic_raw.glob("*.csv"))
    with pytest.raises(gm.ScenarioError, match="launch.csv:1: header: this file informs"):
        gm.calibrate(files, fit=["timeslice"])
    with pytest.raises(gm.ScenarioError, match="output: say which profile"):
        gm.calibrate(synthetic_raw, output=tmp_path / "x.yaml")
    assert not (tmp_path / "x.yaml").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(gm.ScenarioError, match="a folder with no .csv file"):
        gm.calibrate(tmp_path / "empty")
