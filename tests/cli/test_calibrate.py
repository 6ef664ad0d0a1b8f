"""`gpumux calibrate` through the CLI (docs/calibration.md): bad data files and targets are one
line with exit 2 before any simulation; a fit reports before / in-sample / out-of-sample errors per
mechanism; -o writes a profile whose fitted values a scenario then runs with. Drives the built
binary ($GPUMUX_BIN, default build/gpumux)."""
import functools
import json
from pathlib import Path

import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
gpumux = functools.partial(run_gpumux, timeout=600)

HEADER = "id,source,model,phase,batch,seq_len,dtype,runtime,profile,mig,metric,value,unit\n"


def test_a_bad_row_is_one_line_naming_file_line_and_column(tmp_path):
    data = tmp_path / "bad.csv"
    data.write_text(HEADER + "a,s,bert-base,inference,1,128,fp16,tensorrt,a100-80gb,,latency,"
                    "fast,ms\n")
    proc = gpumux("calibrate", str(data))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"{data}:2: value" in lines[0]
    assert proc.stdout == ""


def test_an_unterminated_quote_is_an_error_at_its_line(tmp_path):
    # the CSV splitter is the traces' one: a quote left open is not silently swallowed
    data = tmp_path / "q.csv"
    data.write_text(HEADER + "a,s,bert-base,inference,1,128,fp16,tensorrt,a100-80gb,,latency,1,ms\n"
                    + 'b,"s,bert-base,inference,1,128,fp16,tensorrt,a100-80gb,,latency,1,ms\n')
    proc = gpumux("calibrate", str(data))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{data}:3:" in lines[0] and "quote" in lines[0], proc.stderr


def test_an_unknown_metric_and_a_missing_file_are_refused(tmp_path):
    data = tmp_path / "m.csv"
    data.write_text(HEADER + "a,s,bert-base,inference,1,128,fp16,tensorrt,a100-80gb,,p99,1,ms\n")
    proc = gpumux("calibrate", str(data))
    assert proc.returncode == 2 and "metric" in proc.stderr
    proc = gpumux("calibrate", str(tmp_path / "absent.csv"))
    assert proc.returncode == 2 and "absent.csv" in proc.stderr


def test_a_bad_output_target_is_refused_before_fitting(tmp_path):
    data = tmp_path / "ok.csv"
    data.write_text(HEADER + "a,s,bert-base,inference,1,128,fp16,tensorrt,a100-80gb,,latency,"
                    "1,ms\n")
    proc = gpumux("calibrate", str(data), "-o", str(tmp_path / "no" / "such" / "p.yaml"))
    assert proc.returncode == 2, proc.stderr
    assert "calibrate:" not in proc.stderr  # no progress line: nothing was simulated


def test_fit_reports_errors_and_writes_a_usable_profile(tmp_path):
    # Two sources; measured values 2x and 1.5x what the unfitted profile predicts at batch 1, so
    # the fit must add time: every fitted parameter is >= 0 and the in-sample error drops.
    data = tmp_path / "d.csv"
    data.write_text(
        HEADER
        + "b1,one,bert-base,inference,1,128,fp16,tensorrt,a100-80gb,,latency,1.0,ms\n"
        + "b8,one,bert-base,inference,8,128,fp16,tensorrt,a100-80gb,,latency,2.0,ms\n"
        + "l1,two,bert-large,inference,1,128,fp16,tensorrt,a100-80gb,,latency,2.5,ms\n"
        + "l8,two,bert-large,inference,8,128,fp16,tensorrt,a100-80gb,,latency,5.0,ms\n")
    out = tmp_path / "fitted.yaml"
    proc = gpumux("calibrate", str(data), "-o", str(out), "--json", "-q")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert set(res["sources"]) == {"one", "two"}
    assert set(res["parameters"]) == {"kernel_fixed_cost", "block_round_cost",
                                      "host_per_request.tensorrt"}
    for p in res["parameters"].values():
        assert p["fitted_ns"] >= 0 and p["fold_min_ns"] <= p["fitted_ns"] <= p["fold_max_ns"]
    err = res["errors"]["all"]
    assert err["points"] == 4
    assert err["in_sample"] < err["before"]
    for row in res["points"]:
        assert row["in_sample_s"] > row["before_s"]  # measured above the unfitted prediction
    text = out.read_text()
    assert "fitted:" in text and "kernel_fixed_cost:" in text
    # The written profile runs: one request alone takes the in-sample prediction.
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"""name: s
seed: 1
duration: 200ms
warmup: 0s
gpus: [{{name: gpu0, model: "{out}", sharing: {{mode: exclusive}}}}]
tenants:
  - name: w
    device: gpu0
    workload:
      model: bert-base
      batch: 1
      seq_len: 128
      dtype: fp16
      runtime: tensorrt
      arrivals: {{process: closed, concurrency: 1, think: 1us}}
""")
    run = gpumux("run", str(scenario), "--json")
    assert run.returncode == 0, run.stderr
    mean_s = json.loads(run.stdout)["tenants"]["w"]["latency_ns"]["mean"] / 1e9
    b1 = next(r for r in res["points"] if r["id"] == "b1")
    assert abs(mean_s / b1["in_sample_s"] - 1) < 1e-3


def test_inspect_shows_the_time_alone_terms_and_their_origin(tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("""name: s
duration: 1s
gpus: [{name: gpu0, model: a100-80gb, sharing: {mode: mps}}]
tenants:
  - name: server
    device: gpu0
    workload: {model: resnet50, batch: 4, arrivals: {process: poisson, rate: 10/s}}
  - name: hand
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 10/s}
      request: {kernels: [{name: k, duration: 1ms}]}
""")
    proc = gpumux("inspect", str(scenario), "--json")
    assert proc.returncode == 0, proc.stderr
    tenants = {t["name"]: t["time_alone"] for t in json.loads(proc.stdout)["tenants"]}
    server, hand = tenants["server"], tenants["hand"]
    assert server["origin"] == "profile a100-80gb (fitted)"
    assert server["block_round_cost_ns"] > 0
    # ResNet-50 at batch 4 sends 4 x 3 x 224 x 224 fp16 in and 4 x 1000 fp16 out over the link.
    pcie = 25.2e9
    assert server["copy_ns"] == pytest.approx((4 * 3 * 224 * 224 * 2 + 4 * 1000 * 2) / pcie * 1e9,
                                              abs=1)
    assert hand["origin"] == "none" and hand["kernel_fixed_cost_ns"] == 0
    text = gpumux("inspect", str(scenario)).stdout
    assert "time alone:" in text and "(fitted)" in text


def test_python_calibrate_agrees_with_the_cli_and_writes_the_profile(tmp_path):
    import gpumux as gm  # (gpumux() here is the CLI runner)
    data = tmp_path / "d.csv"
    data.write_text(
        HEADER
        + "b1,one,bert-base,inference,1,128,fp16,tensorrt,a100-80gb,,latency,1.0,ms\n"
        + "l1,two,bert-large,inference,1,128,fp16,tensorrt,a100-80gb,,latency,2.5,ms\n")
    cli = json.loads(gpumux("calibrate", str(data), "--json", "-q").stdout)
    out = tmp_path / "p.yaml"
    res = gm.calibrate(str(data), output=out)
    assert res["parameters"].keys() == cli["parameters"].keys()
    for key, p in res["parameters"].items():
        assert p["fitted_ns"] == pytest.approx(cli["parameters"][key]["fitted_ns"], rel=1e-12)
    assert res["errors"]["all"]["out_of_sample"] == pytest.approx(
        cli["errors"]["all"]["out_of_sample"], rel=1e-12)
    assert out.read_text() == res["profile_text"] and "fitted:" in res["profile_text"]
    with pytest.raises(gm.ScenarioError):
        gm.calibrate(str(data), iterations=0)
    with pytest.raises(gm.ScenarioError):
        gm.calibrate(str(tmp_path / "absent.csv"))


def test_python_calibrate_output_never_replaces_data_nor_leaves_a_temporary_file(tmp_path):
    """gpumux.calibrate(output=) over a data file replaced the measured points; over a folder it
    failed and left its tmpXXXX.tmp beside it (found 2026-12-07, test_fuzz_new_surfaces.py's
    round)."""
    import gpumux as gm
    data = tmp_path / "points.csv"
    data.write_text(HEADER + "a,s1,resnet50,inference,1,,fp16,tensorrt,a100-80gb,,latency,1,ms\n"
                    "b,s2,resnet50,inference,2,,fp16,tensorrt,a100-80gb,,latency,1.5,ms\n")
    before = data.read_text()
    with pytest.raises(gm.ScenarioError, match="is one of the data files"):
        gm.calibrate(data, output=tmp_path / "." / "points.csv", iterations=1)
    (tmp_path / "folder").mkdir()
    with pytest.raises(gm.ScenarioError, match=r"^output .*folder: "):
        gm.calibrate(data, output=tmp_path / "folder", iterations=1, profile="a100-80gb")
    assert data.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "points.csv"]
