"""calibration/fit/rerun_chain.py writes each stage's values where the product reads them: a
one-line profile entry (`KEY: {value: V, fitted: "..."}`, under its parent map) and a block
entry of kernel-families.yaml (`value:` and a folded `fitted: >-` text) get the new value and
provenance, every other line stays byte for byte, and the files still load. A key that is not
there is refused (exit), never added somewhere else."""
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "calibration" / "fit"))


def changed_lines(before: str, after: str) -> set:
    a, b = before.split("\n"), after.split("\n")
    return {i for i in range(max(len(a), len(b)))
            if i >= len(a) or i >= len(b) or a[i] != b[i]}


def test_a_profile_entry_gets_its_value_and_provenance_and_nothing_else_moves(tmp_path):
    yaml = pytest.importorskip("yaml")
    import rerun_chain as rc
    source = (REPO / "calibration" / "profiles" / "a100-80gb.yaml").read_text()
    path = tmp_path / "a100-80gb.yaml"
    path.write_text(source)
    rc.set_flow_entry(path, "harness_per_request", "mlperf-loadgen", "12345ns", "fitted",
                      'a "quoted" provenance')
    rc.set_flow_entry(path, None, "kernel_fixed_cost", "2222ns", "fitted", "p")
    doc = yaml.safe_load(path.read_text())
    assert doc["harness_per_request"]["mlperf-loadgen"] == {
        "value": "12345ns", "fitted": 'a "quoted" provenance'}
    assert doc["kernel_fixed_cost"] == {"value": "2222ns", "fitted": "p"}
    assert len(changed_lines(source, path.read_text())) == 2
    with pytest.raises(SystemExit):
        rc.set_flow_entry(path, "host_per_request", "no-such-runtime", "1ns", "fitted", "p")


def test_a_kernel_families_block_gets_its_value_and_rewrapped_provenance(tmp_path):
    yaml = pytest.importorskip("yaml")
    import rerun_chain as rc
    source = (REPO / "calibration" / "workloads" / "kernel-families.yaml").read_text()
    path = tmp_path / "kernel-families.yaml"
    path.write_text(source)
    text = "a provenance long enough to be wrapped over several lines " * 4
    rc.set_block_entry(path, ["runtimes", "onnxruntime", "kernel_fixed_cost"], "7us", text)
    rc.set_block_entry(path, ["serving", "triton-grpc", "bandwidth"], "999MB/s", "w")
    before, after = yaml.safe_load(source), yaml.safe_load(path.read_text())
    ort = after["runtimes"]["onnxruntime"]["kernel_fixed_cost"]
    assert ort["value"] == "7us" and ort["fitted"] == text.strip()
    assert after["serving"]["triton-grpc"]["bandwidth"] == {"value": "999MB/s", "fitted": "w"}
    # everything else as it was
    after["runtimes"]["onnxruntime"]["kernel_fixed_cost"] = \
        before["runtimes"]["onnxruntime"]["kernel_fixed_cost"]
    after["serving"]["triton-grpc"]["bandwidth"] = before["serving"]["triton-grpc"]["bandwidth"]
    assert after == before
    assert all(len(line) <= 100 for line in path.read_text().split("\n")
               if "a provenance long enough" in line)
    with pytest.raises(SystemExit):
        rc.set_block_entry(path, ["runtimes", "no-such-runtime", "host_per_op"], "1us", "p")
