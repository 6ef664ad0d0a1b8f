"""The host CPU's speed through the CLI (models/gpu/host_cpu.hpp, docs/workloads.md "Host CPU"):
`gpumux inspect` shows the host and speed a tenant's host times are scaled to, a scenario's
`host: {cpu_speed: ...}` replaces the profile's, a host-bound eager LLM step scales by exactly
the ratio of the speeds, and a bad speed is one line naming file, line and key with exit 2.
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json
import re
from pathlib import Path

import pytest

from conftest import run_gpumux

ROOT = Path(__file__).resolve().parents[2]
HOST_CPU = ROOT / "models" / "gpu" / "host_cpu.hpp"


def dgx_h100_speed() -> float:
    """The dgx-h100 entry's speed expression of host_cpu.hpp, evaluated (3.8 / 3.4 x ...)."""
    found = re.search(r'\{"dgx-h100", "[^"]*",\s*([\d.\s/*]+),', HOST_CPU.read_text())
    assert found
    return eval(found.group(1))  # noqa: S307 - digits and * / only


def llm_scenario(path: Path, profile: str, tp: int, host: str = "") -> Path:
    devices = ", ".join(f"gpu{i}" for i in range(tp))
    gpus = "".join(f"  - {{name: gpu{i}, model: {profile}}}\n" for i in range(tp))
    path.write_text(
        f"name: h\nseed: 1\nduration: 20s\nwarmup: 1s\ngpus:\n{gpus}tenants:\n"
        f"  - name: llm\n    device: [{devices}]\n    workload:\n"
        f"      arrivals: {{process: closed, concurrency: 1, think: 100ms}}\n"
        f"      tokens: {{input: 512, output: 128}}\n"
        f"      batching: {{max_batch: 1, engine_cpu: vllm-v0}}\n"
        f"      llm: {{model: llama-2-70b, dtype: fp16, tp: {tp}, host_per_op: vllm-v0}}\n"
        + (f"      host: {{cpu_speed: {host}}}\n" if host else ""))
    return path


def tpot(path: Path) -> float:
    done = run_gpumux("run", path, "--format", "json", timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["tenants"]["llm"]["tpot_ns"]["p50"]


def test_inspect_shows_the_profiles_host_and_the_users(tmp_path):
    done = run_gpumux("inspect", llm_scenario(tmp_path / "a.yaml", "h100-sxm-80gb", 8),
                      "--format", "json", timeout=120)
    assert done.returncode == 0, done.stderr
    host = json.loads(done.stdout)["tenants"][0]["host_cpu"]
    assert host["name"] == "dgx-h100" and host["origin"] == "profile h100-sxm-80gb"
    assert host["speed"] == pytest.approx(dgx_h100_speed(), rel=1e-12)
    done = run_gpumux("inspect", llm_scenario(tmp_path / "b.yaml", "h100-sxm-80gb", 8, "1.25"),
                      timeout=120)
    assert done.returncode == 0, done.stderr
    assert "host CPU: custom, single-thread speed 1.25" in done.stdout
    assert "(user)" in done.stdout


def test_a_host_bound_step_scales_by_the_speed_ratio(tmp_path):
    # Llama-2-70B at TP 8, eager: every decode step is its dispatch plus the engine's CPU, both
    # host time, so moving the DGX H100's tenant onto the reference host's speed multiplies
    # the TPOT by the DGX H100's speed.
    own = tpot(llm_scenario(tmp_path / "own.yaml", "h100-sxm-80gb", 8))
    ref = tpot(llm_scenario(tmp_path / "ref.yaml", "h100-sxm-80gb", 8, "dgx-a100"))
    one = tpot(llm_scenario(tmp_path / "one.yaml", "h100-sxm-80gb", 8, "1"))
    assert ref == one
    assert ref / own == pytest.approx(dgx_h100_speed(), rel=2e-3)


def test_a_bad_speed_is_one_line_with_file_line_and_key(tmp_path):
    for value, words in (("0", "between 0.05 and 20"), ("50", "between 0.05 and 20"),
                         ("epyc", "unknown host CPU 'epyc'"), ("[2]", "cpu_speed")):
        path = llm_scenario(tmp_path / "bad.yaml", "a100-80gb", 1, value)
        for command in ("validate", "run"):
            done = run_gpumux(command, path)
            assert done.returncode == 2, (value, command, done.stdout, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1, done.stderr
            assert f"{path}:15:" in lines[0] and "cpu_speed" in lines[0], lines[0]
            assert words in lines[0], lines[0]
