"""An eager engine's host dispatch bounds an LLM step at every TP degree (models/workload/
llm_card.hpp, engine_cpu.hpp, docs/llm-serving.md "Tensor parallelism"): each launch of n real
kernels lasts max(GPU time, n x host_per_op), so once the host is the slower side the time per
output token is kernels x host_per_op + the engine's CPU per step, flat in TP, and at TP 1 there
is no all-reduce launch. `host_per_op: vllm-v0` is the fitted constant of
calibration/fit/llm_eager_dispatch.py (a rerunnable fit, checked against the header here)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GPUMUX, run_gpumux

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "models" / "workload" / "engine_cpu.hpp"
SCRIPT = ROOT / "calibration" / "fit" / "llm_eager_dispatch.py"


def constant(name: str) -> int:
    """A Nanos constant of engine_cpu.hpp (the numbers the law uses), in ns."""
    found = re.search(name + r" = ([\d']+);", HEADER.read_text())
    assert found, name
    return int(found.group(1).replace("'", ""))


def tpot_ns(tmp_path: Path, profile: str, model: str, tp: int, host_per_op: str,
            engine: str = "vllm-v0", name: str = "s") -> float:
    """p50 TPOT of a closed-loop batch-1 llm tenant (512 prompt, 128 output tokens)."""
    devices = ", ".join(f"gpu{i}" for i in range(tp))
    gpus = "".join(f"  - {{name: gpu{i}, model: {profile}}}\n" for i in range(tp))
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"name: {name}\nseed: 1\nduration: 20s\nwarmup: 1s\ngpus:\n{gpus}tenants:\n"
        f"  - name: llm\n    device: [{devices}]\n    workload:\n"
        f"      arrivals: {{process: closed, concurrency: 1, think: 100ms}}\n"
        f"      tokens: {{input: 512, output: 128}}\n"
        f"      batching: {{max_batch: 1, engine_cpu: {engine}}}\n"
        f"      llm: {{model: {model}, dtype: fp16, tp: {tp}, host_per_op: {host_per_op}}}\n")
    done = run_gpumux("run", path, "--format", "json", timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["tenants"]["llm"]["tpot_ns"]["p50"]


def test_named_engine_is_the_fitted_constant(tmp_path):
    host = constant("kVllmV0HostPerOp")
    named = tpot_ns(tmp_path, "a100-80gb", "llama-2-70b", 8, "vllm-v0", name="named")
    typed = tpot_ns(tmp_path, "a100-80gb", "llama-2-70b", 8, f"{host}ns", name="typed")
    generic = tpot_ns(tmp_path, "a100-80gb", "llama-2-70b", 8, "10us", name="generic")
    assert named == typed
    assert named > 1.5 * generic  # 36.5 us against PyTorch's generic 10 us per kernel


def test_host_bound_step_is_kernels_times_dispatch_plus_engine_cpu(tmp_path):
    # Llama-2-70B at TP 8 on A100s: 80 layers x (8 gemm + 2 attention + 2 all-reduce) + 6
    # kernels per decode step, each dispatched in host_per_op (the GPU's 10 ms of weights per
    # token is far shorter), plus the engine's CPU for one sequence at tp > 1.
    host = constant("kVllmV0HostPerOp")
    engine = constant("kVllmV0PerIterationTp") + constant("kVllmV0PerSequenceTp")
    expected = (80 * 12 + 6) * host + engine
    got = tpot_ns(tmp_path, "a100-80gb", "llama-2-70b", 8, "vllm-v0")
    assert got == pytest.approx(expected, rel=2e-3)


def test_tp1_has_no_all_reduce_launch(tmp_path):
    # Llama-2-7B at TP 1, host-bound on an A100 at 36.5 us per kernel: 32 x (8 + 2) + 6 = 326
    # kernels per step (no 2 all-reduces per layer, which would make it 390) + the tp-1 engine.
    host = constant("kVllmV0HostPerOp")
    engine = constant("kVllmV0PerIterationTp1") + constant("kVllmV0PerSequenceTp1")
    got = tpot_ns(tmp_path, "a100-80gb", "llama-2-7b", 1, "vllm-v0")
    assert got == pytest.approx(32 * 10 * host + 6 * host + engine, rel=2e-3)


@pytest.mark.parametrize("profile", ["a100-80gb", "h100-sxm-80gb"])
def test_tpot_falls_with_tp_until_the_host_bounds_it(tmp_path, profile):
    # Eager at 36.5 us per kernel: TP 2 is GPU-bound (the weights' read per GPU, 70 GB / 2),
    # TP 4 and 8 are the host's dispatch, equal; never rising with TP.
    eager = [tpot_ns(tmp_path, profile, "llama-2-70b", tp, "vllm-v0", name=f"e{tp}")
             for tp in (2, 4, 8)]
    assert eager[0] > eager[1] * 1.05
    assert eager[1] == pytest.approx(eager[2], rel=2e-3)
    # With PyTorch's generic 10 us the host never binds: each doubling of TP still gains.
    generic = [tpot_ns(tmp_path, profile, "llama-2-70b", tp, "10us", name=f"g{tp}")
               for tp in (2, 4, 8)]
    assert generic[0] > generic[1] > generic[2]
    assert all(e >= g for e, g in zip(eager, generic))


def test_unknown_engine_for_host_per_op_is_one_line_exit_2(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\nseed: 1\nduration: 1s\ngpus:\n  - {name: gpu0, model: a100-80gb}\n"
        "tenants:\n  - name: llm\n    device: gpu0\n    workload:\n"
        "      arrivals: {process: closed, concurrency: 1}\n"
        "      tokens: {input: 16, output: 4}\n      batching: {max_batch: 1}\n"
        "      llm: {model: llama-2-7b, host_per_op: vllm-v9}\n")
    done = run_gpumux("run", path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "bad.yaml:13:" in lines[0] and "host_per_op" in lines[0] and "vllm-v9" in lines[0]


def test_header_constant_and_report_are_the_fit(tmp_path):
    report = tmp_path / "r.md"
    done = subprocess.run([sys.executable, str(SCRIPT), "--gpumux", GPUMUX, "--report",
                           str(report), "--check", str(HEADER)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    text = report.read_text()
    assert "leaving one host out" in text
    assert text == (ROOT / "calibration" / "fit" / "LLM-DISPATCH.md").read_text()
