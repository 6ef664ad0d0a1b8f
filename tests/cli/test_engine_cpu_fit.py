"""The vllm-v0 engine CPU constants in models/workload/engine_cpu.hpp are calibration/fit/
engine_cpu.py's fit of Vidur's measured overheads (a rerunnable fit, not typed-in numbers), and
the script's check notices a header that drifts from it; inspect shows the engine's terms."""
import json
import subprocess
import sys
from pathlib import Path

from conftest import run_gpumux

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = ROOT / "calibration" / "fit" / "engine_cpu.py"
HEADER = ROOT / "models" / "workload" / "engine_cpu.hpp"


def run_fit(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120)


def test_header_constants_are_the_fit():
    done = run_fit("--check", str(HEADER))
    assert done.returncode == 0, done.stderr


def test_check_fails_on_a_drifted_header(tmp_path: Path):
    drifted = tmp_path / "engine_cpu.hpp"
    text = HEADER.read_text()
    assert "kVllmV0PerSequenceTp1 = " in text
    drifted.write_text(text.replace("kVllmV0PerSequenceTp1 = ", "kVllmV0PerSequenceTp1 = 1"))
    done = run_fit("--check", str(drifted))
    assert done.returncode == 1
    assert "kVllmV0PerSequenceTp1" in done.stderr


def test_report_has_in_sample_and_held_out_columns(tmp_path: Path):
    report = tmp_path / "r.md"
    done = run_fit("--report", str(report))
    assert done.returncode == 0, done.stderr
    text = report.read_text()
    assert "leave one model out" in text and "A40 host (held out)" in text
    # The shipped report is this script's output, unedited.
    assert text == (ROOT / "calibration" / "fit" / "ENGINE-CPU.md").read_text()


def test_inspect_shows_the_engine_terms(tmp_path: Path):
    scenario = tmp_path / "llm.yaml"
    scenario.write_text(
        "name: engine\nseed: 1\nduration: 1s\n"
        "gpus:\n  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}\n"
        "tenants:\n  - name: llm\n    device: gpu0\n    workload:\n"
        "      arrivals: {process: poisson, rate: 5/s}\n"
        "      batching: {max_batch: 32, scheduler: vllm, engine_cpu: vllm-v0}\n"
        "      tokens: {input: 512, output: 64}\n"
        "      llm: {model: llama-2-7b, dtype: fp16, tp: 1}\n")
    done = run_gpumux("inspect", scenario, "--format", "json", timeout=120)
    assert done.returncode == 0, done.stderr
    engine = json.loads(done.stdout)["tenants"][0]["engine_cpu"]
    assert engine["engine"] == "vllm-v0"
    assert engine["per_iteration_ns"] == 813126
    assert engine["per_sequence_ns"] == 42314
    text = run_gpumux("inspect", scenario, timeout=120)
    assert "engine CPU per iteration" in text.stdout
