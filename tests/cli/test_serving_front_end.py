"""A catalog tenant served through a front end (`workload.serving:`, docs/workloads.md "Serving
front end"): its latency is the GPU-alone latency plus the front end's time, which `gpumux
inspect` shows with its origin; the GPU's busy time does not change (the front end is host
time); `io_dtype:` sets the payload's bytes; bad values exit 2 naming file, line and key.
Also: kernel-families.yaml's `serving:` is calibration/fit/triton_frontend.py's fit, and its
calibration points are not validation points."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GPUMUX, run_gpumux

ROOT = Path(__file__).resolve().parents[2]


def scenario(tmp_path: Path, serving: str | None, extra: str = "", name="s.yaml") -> Path:
    lines = ["name: fe", "seed: 3", "duration: 2s", "warmup: 0s",
             "gpus:", "  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}",
             "tenants:", "  - name: api", "    device: gpu0", "    workload:",
             "      arrivals: {process: constant, rate: 50/s}",
             "      model: resnet50", "      batch: 8"]
    if serving:
        lines.append(f"      serving: {serving}")
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def summary(path: Path) -> dict:
    return json.loads(run_gpumux("run", path, "--json", check=0).stdout)


def front_end_ns(path: Path) -> float:
    tenant = json.loads(run_gpumux("inspect", path, "--json", check=0).stdout)["tenants"][0]
    return tenant["time_alone"]["front_end_ns"], tenant["time_alone"]


def test_latency_is_gpu_alone_plus_front_end_and_busy_time_unchanged(tmp_path):
    alone = scenario(tmp_path, None, name="alone.yaml")
    served = scenario(tmp_path, "triton-grpc", name="served.yaml")
    t_fe, terms = front_end_ns(served)
    assert t_fe > 0
    assert terms["serving"] == "triton-grpc"
    assert "front_end triton-grpc (latency kernel-families serving.triton-grpc" in terms[
        "host_origin"]
    assert front_end_ns(alone)[0] == 0 and front_end_ns(alone)[1]["serving"] == "none"
    a, s = summary(alone), summary(served)
    la, ls = a["tenants"]["api"]["latency_ns"], s["tenants"]["api"]["latency_ns"]
    # One request at a time (20 ms apart, each a few ms): the front end adds exactly T_fe.
    assert ls["mean"] - la["mean"] == pytest.approx(t_fe, abs=1.0)
    assert ls["p99"] - la["p99"] == pytest.approx(t_fe, abs=1.0)
    # The GPU did the same work: the front end is host time, it holds no SM.
    assert a["tenants"]["api"]["completed"] == s["tenants"]["api"]["completed"]
    busy_a = a["devices"]["gpu0"]["sm_busy"]
    busy_s = s["devices"]["gpu0"]["sm_busy"]
    assert busy_a > 0
    assert busy_s == pytest.approx(busy_a, rel=1e-6)


def test_inspect_text_shows_the_term_and_user_origin(tmp_path):
    path = scenario(tmp_path, "triton-grpc",
                    "      host: {front_end_latency: 1ms, front_end_bandwidth: 1GB/s, "
                    "input_bytes: 2MB, output_bytes: 0B}\n")
    text = run_gpumux("inspect", path, check=0).stdout
    assert "serving front end triton-grpc: 3.000 ms per request" in text
    assert "front_end triton-grpc (latency user, bandwidth user)" in text


def test_io_dtype_scales_the_payload_and_inspect_names_it(tmp_path):
    # fp32 tensors are twice the fp16 compute dtype's bytes: with the front end's latency at 0,
    # T_fe is the payload over W, so it doubles exactly (to the ns).
    terms = "      host: {front_end_latency: 0ns, front_end_bandwidth: 1GB/s}\n"
    fp16 = scenario(tmp_path, "triton-grpc", terms, name="fp16.yaml")
    fp32 = scenario(tmp_path, "triton-grpc", terms + "      io_dtype: fp32\n", name="fp32.yaml")
    t16, _ = front_end_ns(fp16)
    t32, origin = front_end_ns(fp32)
    assert t16 == 8 * (3 * 224 * 224 + 1000) * 2
    assert t32 == 2 * t16
    assert "bytes catalog (io_dtype fp32)" in origin["host_origin"]


@pytest.mark.parametrize("extra, line, key, message", [
    ("      serving: triton-grcp\n", 14, "serving", "unknown serving front end"),
    ("      serving: triton-grpc\n      host: {front_end_latency: -1ms}\n", 15,
     "host.front_end_latency", ""),
    ("      serving: triton-grpc\n      host: {front_end_bandwidth: 10B/s}\n", 15,
     "host.front_end_bandwidth", "at least 1MB/s"),
    ("      host: {front_end_latency: 1ms}\n", 14, "front_end_latency", "give workload.serving"),
    ("      serving: triton-grpc\n      phase: training\n", 14, "serving",
     "serves inference requests"),
    ("      io_dtype: tf32\n", 14, "io_dtype", "uint8"),
    ("      io_dtype: fp32\n      phase: training\n", 14, "io_dtype", "inference request"),
])
def test_bad_values_exit_2_with_file_line_key(tmp_path, extra, line, key, message):
    path = scenario(tmp_path, None, extra)
    done = run_gpumux("run", path, "--json")
    assert done.returncode == 2, done.stdout + done.stderr
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{path.name}:{line}" in err, err
    assert key in err and message in err, err


def test_shipped_values_are_the_fit():
    done = subprocess.run([sys.executable, str(ROOT / "calibration/fit/triton_frontend.py"),
                           "--check", "--gpumux", GPUMUX],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_calibration_points_are_published_points():
    points = list(csv.DictReader((ROOT / "calibration/fit/triton-frontend.csv").open()))
    published = {}
    for name in ("solo.csv", "small_batch.csv"):
        for r in csv.DictReader((ROOT / "calibration/validation/data/published" / name).open()):
            published[r["id"]] = r
    assert len(points) >= 6
    for p in points:
        assert float(published[p["id"]]["value"]) == float(p["value"]), p["id"]
        if p["backend_ms"]:
            infer = published[p["id"].removesuffix("-avg") + "-compute-infer"]
            assert float(infer["value"]) == float(p["backend_ms"]), p["id"]
    # Most Triton points stay validation points.
    triton = [i for i, r in published.items()
              if "triton" in r["source"] and not i.endswith("-compute-infer")
              and not r["source"].startswith("mlperf")]
    assert len(points) < len(triton) / 2


def test_tensorflow_backend_entry_is_the_protocol_plus_its_input_stage(tmp_path):
    # triton-grpc-tensorflow = triton-grpc + the TensorFlow backend's fixed input stage (the
    # intercept of its README's Server Compute Input, calibration/data/triton-backend-input), same bandwidth:
    # the two entries' front-end times differ by that constant at every payload, to the us the
    # yaml writes.
    sys.path.insert(0, str(ROOT / "calibration" / "fit"))
    import triton_frontend
    stages = triton_frontend.input_stages()
    c_tf, c_ort = stages["tensorflow"][0], stages["onnxruntime"][0]
    assert c_tf > 0.1 and c_ort == 0.0  # ms: ONNX Runtime's intercept is clamped at 0
    for batch in (1, 8):
        base = scenario(tmp_path, "triton-grpc", name=f"grpc{batch}.yaml").read_text()
        for name, serving in (("g", "triton-grpc"), ("t", "triton-grpc-tensorflow")):
            (tmp_path / f"{name}{batch}.yaml").write_text(
                base.replace("batch: 8", f"batch: {batch}").replace(
                    "serving: triton-grpc", f"serving: {serving}"))
        t_g, _ = front_end_ns(tmp_path / f"g{batch}.yaml")
        t_t, origin = front_end_ns(tmp_path / f"t{batch}.yaml")
        assert origin["serving"] == "triton-grpc-tensorflow"
        assert t_t - t_g == pytest.approx(c_tf * 1e6, abs=1e3)


def test_backend_input_stage_points_are_the_readmes_online_rows():
    data = ROOT / "calibration" / "data" / "triton-backend-input" / "online-compute-input.csv"
    rows = list(csv.DictReader(data.open()))
    assert {r["backend"] for r in rows} == {"onnxruntime", "tensorflow"}
    for r in rows:
        # Little's law needs the server busy: an execution's parts fit in 1/X per instance.
        t_exec = sum(float(r[k]) for k in ("compute_input_ms", "compute_infer_ms",
                                           "compute_output_ms"))
        assert float(r["inferences_per_s"]) * t_exec * 1e-3 / int(r["instances"]) >= 1
