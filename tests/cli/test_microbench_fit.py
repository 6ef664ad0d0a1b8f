"""calibration/microbench: fit.py against synthetic probe output with known parameters, the
run_all.sh packaging, and (where nvcc exists) that the CUDA probes compile. Needs no GPU.

The synthetic generator (calibration/microbench/synthetic.py) models round-robin time-slicing
with timeslice T, spinner-to-spinner switch gap S and short-kernel switch-back C_out, plus
jitter, stalls that no other context fills, and %globaltimer quantisation. fit.py must get T,
S, context_switch = C_out and preemption_latency = S - C_out back, and must find no timeslice
in the N = 1 control.
"""
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt)

REPO = Path(__file__).resolve().parents[2]
MB = REPO / "calibration" / "microbench"
NVCC = "/usr/local/cuda/bin/nvcc"
sys.path.insert(0, str(MB))
import fit_report  # noqa: E402
import synthetic  # noqa: E402

from conftest import GPUMUX, run_gpumux


def run_fit(target, *extra):
    proc = subprocess.run([sys.executable, str(MB / "fit.py"), str(target), *extra],
                          capture_output=True, text=True, timeout=120)
    return proc


def fit_json(tmp_path, **params):
    data = tmp_path / "data"
    synthetic.write_all(str(data), **params)
    proc = run_fit(data, "--json", str(tmp_path / "m.json"), "--report", str(tmp_path / "m.md"),
                   "--snippet", str(tmp_path / "s.yaml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((tmp_path / "m.json").read_text()), proc.stdout


def by_nproc(res, n):
    return [r for r in res["timeslice_runs"] if r.get("nproc") == n]


@pytest.mark.parametrize("T,S,C,jitter,tick", [
    (1024.0, 25.0, 10.0, 5.0, 32),     # the open-gpu-kernel-modules default, fine timer
    (2000.0, 60.0, 20.0, 20.0, 1000),  # longer slice, noisier, a 1 us %globaltimer tick
])
def test_fit_recovers_timeslice_and_switch_cost(tmp_path, T, S, C, jitter, tick):
    res, stdout = fit_json(tmp_path, timeslice_us=T, switch_us=S, switch_out_us=C,
                           jitter_us=jitter, nprocs=(1, 2, 3), tick=tick)
    q = tick / 1000.0  # quantisation, us
    # pooled over N = 2 and 3
    assert res["timeslice_us"]["median"] == pytest.approx(T, abs=0.01 * T)
    assert res["timeslice_us"]["n"] > 1000
    assert res["switch_us"]["median"] == pytest.approx(S, abs=1.5 + 2 * q)
    # per N, and the N-curve closed form for a context's wait: (N-1)(T+S)+S
    for n in (2, 3):
        (r,) = by_nproc(res, n)
        assert r["timeslice_us"]["median"] == pytest.approx(T, abs=0.01 * T)
        assert r["switch_us"]["median"] == pytest.approx(S, abs=1.5 + 2 * q)
        assert r["switch_per_gap_us"]["median"] == pytest.approx(S, abs=1.5 + 2 * q)
        assert r["wait_us"]["median"] == pytest.approx((n - 1) * (T + S) + S, rel=0.01)
        assert r["concurrent_fraction"] == 0.0
        for share in r["share"].values():
            assert share == pytest.approx(T / (n * (T + S)), abs=0.01)
        assert r["stalls_us"]["n"] > 0  # stalls were generated and not taken for switches
    # short kernels: switch-back gives context_switch, the rest of S is preemption
    assert res["context_switch_us"] == pytest.approx(C, abs=1.0 + 2 * q)
    assert res["preemption_latency_us"] == pytest.approx(S - C, abs=2.0 + 3 * q)
    sync = res["short_kernels"]["sync"]
    assert sync["kernels_in_spinner_gap"] > 0.99
    # the simulator's model of each short kernel's wait (rest of the spinner's slice + switch
    # in) matches the measured wait, kernel by kernel and as a mean ~ T/2 + S
    assert sync["model"]["measured_mean_us"] == pytest.approx(sync["model"]["model_mean_us"], rel=0.02)
    assert sync["model"]["median_abs_error_us"] < 0.03 * T
    assert sync["model"]["correlation"] > 0.9
    assert sync["wait_us"]["mean"] == pytest.approx(T / 2 + S, rel=0.15)
    assert res["globaltimer_tick_ns"] == tick
    # the profile snippet carries sourced values in the loader's units
    assert f"timeslice: {{value: {fit_report.fmt_us(res['timeslice_us']['median'])}" in stdout
    assert 'source: "gpumux calibration/microbench on NVIDIA H200, 2026-11-20, driver 580.159.04' in stdout
    assert "launch_overhead: {value: 2.20us" in stdout
    assert "hbm_bandwidth_measured: {value: 4100GB/s" in stdout


def test_control_alone_yields_no_timeslice(tmp_path):
    res, stdout = fit_json(tmp_path, nprocs=(1,))
    (c,) = by_nproc(res, 1)
    assert c["timeslice_us"]["n"] == 0 and c["switch_us"]["n"] == 0
    assert c["stalls_us"]["n"] > 0  # the generator's stalls are seen, as stalls
    assert res["timeslice_us"] is None and res["switch_us"] is None
    assert res["control"]["timeslice_samples"] == 0
    assert not any("control" in w for w in res["warnings"])
    assert "timeslice:" not in stdout and "context_switch:" not in stdout


def test_reads_run_all_tarball_and_names_outputs_after_gpu(tmp_path):
    raw = tmp_path / "work" / "raw"
    synthetic.write_all(str(raw), nprocs=(1, 2))
    (raw / "steps.csv").write_text("step,rc\nts_n1,0\nts_n2,0\nsk_queued,skipped\n")
    out = tmp_path / "out"
    out.mkdir()
    with tarfile.open(out / "microbench-raw.tar.gz", "w:gz") as tf:
        tf.add(raw, arcname="raw")
    proc = run_fit(out)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["measured-nvidia-h200.json", "measured-nvidia-h200.md",
                     "microbench-raw.tar.gz", "profile-snippet-nvidia-h200.yaml"]
    res = json.loads((out / "measured-nvidia-h200.json").read_text())
    assert res["driver"] == "580.159.04" and res["gpu"] == "NVIDIA H200"
    assert any("sk_queued: skipped" in w for w in res["warnings"])
    assert (out / "measured-nvidia-h200.md").read_text().startswith("# Calibration microbenchmarks")


def test_queued_short_kernels_are_analysed_per_batch(tmp_path):
    data = tmp_path / "data"
    synthetic.write_all(str(data), nprocs=(2,))
    for kind in ("gaps", "meta"):
        (data / f"sk_queued_{kind}.csv").write_text((data / f"sk_sync_{kind}.csv").read_text())
    lines = (data / "sk_sync_kernels.csv").read_text().splitlines()
    rows = [r.split(",") for r in lines[1:]]
    for r in rows:
        r[2] = str(int(r[1]) // 4)  # batches of 4
    (data / "sk_queued_kernels.csv").write_text("\n".join([lines[0]] + [",".join(r) for r in rows]) + "\n")
    proc = run_fit(data, "--json", str(tmp_path / "m.json"))
    assert proc.returncode == 0, proc.stderr
    q = json.loads((tmp_path / "m.json").read_text())["short_kernels"]["queued"]
    assert q["mode"] == "queued" and q["kernels"] == len(rows)
    assert q["latency_us"]["n"] == len({r[2] for r in rows})
    assert q["inter_kernel_gap_us"]["n"] > 0 and q["switch_out_us"]["n"] > 0


def test_no_data_exits_nonzero(tmp_path):
    proc = run_fit(tmp_path)
    assert proc.returncode == 1
    assert "no probe output" in proc.stderr


@pytest.mark.skipif(not os.path.isfile(GPUMUX), reason="gpumux binary not built")
def test_snippet_is_accepted_by_the_profile_loader(tmp_path):
    _, stdout = fit_json(tmp_path)
    entries = {line.split(":", 1)[0]: line for line in stdout.splitlines()
               if line and not line.startswith("#")}
    assert {"timeslice", "context_switch", "preemption_latency", "launch_overhead",
            "hbm_bandwidth_measured"} <= set(entries)
    lines, out = (REPO / "calibration" / "profiles" / "h200-141gb.yaml").read_text().splitlines(), []
    i = 0
    while i < len(lines):  # replace each top-level entry (and its indented continuation)
        key = lines[i].split(":", 1)[0]
        if key in entries and not lines[i].startswith(" "):
            out.append(entries.pop(key))
            i += 1
            while i < len(lines) and lines[i].startswith("  "):
                i += 1
            continue
        out.append(lines[i])
        i += 1
    assert not entries
    profile = tmp_path / "measured-h200.yaml"
    profile.write_text("\n".join(out) + "\n")
    proc = run_gpumux("mig", profile, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_run_all_packs_what_it_has_when_the_build_fails(tmp_path):
    env = dict(os.environ, NVCC="/nonexistent/nvcc", OUT="")
    proc = subprocess.run(["bash", str(MB / "run_all.sh"), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    with tarfile.open(tmp_path / "microbench-raw.tar.gz") as tf:
        names = set(tf.getnames())
        steps = tf.extractfile("raw/steps.csv").read().decode()
    assert {"raw/run-info.csv", "raw/nvcc-version.txt", "raw/nvidia-smi-q.txt",
            "raw/steps.csv"} <= names
    rcs = dict(line.split(",") for line in steps.split())
    assert rcs["build_timeslice_probe"] != "0" and rcs["build_launch_probe"] != "0"
    assert (tmp_path / "run_all.log").is_file()


@pytest.mark.skipif(not os.path.isfile(NVCC), reason=f"{NVCC} not installed (CI without CUDA)")
def test_cuda_probes_compile_for_sm90(tmp_path):
    procs = {name: subprocess.Popen(
        [NVCC, "-arch=sm_90", "-O3", "-std=c++17", "-Xcompiler", "-Wall,-Wextra", "-o",
         str(tmp_path / name), str(MB / f"{name}.cu")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for name in ("timeslice_probe", "launch_probe", "co_dispatch_probe")}
    for name, p in procs.items():
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0, out
        assert "warning" not in out.lower(), out
        assert (tmp_path / name).is_file()
