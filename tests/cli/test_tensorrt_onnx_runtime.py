"""The tensorrt-onnx runtime through the CLI (docs/workloads.md, "TensorRT from ONNX"): a
misspelt name is one line naming file, line, column and key, exit 2, nothing on stdout; the
runtime runs, and `gpumux inspect` shows the exported graph's kernels: per BERT layer 14 more
than demoBERT's 7 (21: the softmax one kernel), two more for the embedding's layer norm and one
for the pooler's tanh.
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json

from conftest import run_gpumux

SCENARIO = """name: t
seed: 1
duration: 200ms
gpus: [{name: g, model: a100-80gb}]
tenants:
  - name: a
    device: g
    workload:
      model: bert-large
      batch: 8
      seq_len: 384
      arrivals: {process: closed, concurrency: 1}
      runtime: RUNTIME
"""


def write(tmp_path, runtime):
    path = tmp_path / f"{runtime}.yaml"
    path.write_text(SCENARIO.replace("RUNTIME", runtime))
    return path


def test_a_misspelt_runtime_is_one_line_with_exit_2(tmp_path):
    for runtime in ("tensorrt_onnx", "TensorRT-ONNX", "tensorrt-onx"):
        path = write(tmp_path, runtime)
        proc = run_gpumux("run", path)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert f"{path}:13:16: tenants.0.workload.runtime: unknown runtime '{runtime}'" in lines[0]
        assert "tensorrt-onnx" in lines[0]
        assert proc.stdout == ""


def test_the_exported_graph_launches_fourteen_more_kernels_per_layer(tmp_path):
    kernels = {}
    for runtime in ("tensorrt", "tensorrt-onnx"):
        proc = run_gpumux("inspect", write(tmp_path, runtime), "--json", check=0)
        tenant = json.loads(proc.stdout)["tenants"][0]
        kernels[runtime] = sum(k["count"] for k in tenant["kernels"])
        assert run_gpumux("run", write(tmp_path, runtime), "--json", check=0).returncode == 0
    layers = 24  # bert-large (calibration/workloads/bert-large.yaml)
    assert kernels["tensorrt-onnx"] - kernels["tensorrt"] == 14 * layers + 2 + 1
