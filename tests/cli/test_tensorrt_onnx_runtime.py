"""The tensorrt-onnx runtime through the CLI (docs/workloads.md, "TensorRT from ONNX"): a
misspelt name is one line naming file, line, column and key, exit 2, nothing on stdout; the
runtime runs, and `gpumux inspect` shows the exported graph's kernels: per BERT layer 14 more
than demoBERT's 7 (21: the softmax one kernel), two more for the embedding's layer norm and one
for the pooler's tanh.
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""

from cli_support import assert_misspelt_runtimes_refused, kernel_counts, scenario_writer
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


def test_a_misspelt_runtime_is_one_line_with_exit_2(tmp_path):
    assert_misspelt_runtimes_refused(run_gpumux, scenario_writer(tmp_path, SCENARIO),
                                     ("tensorrt_onnx", "TensorRT-ONNX", "tensorrt-onx"), 13,
                                     "tensorrt-onnx")


def test_the_exported_graph_launches_fourteen_more_kernels_per_layer(tmp_path):
    kernels = kernel_counts(run_gpumux, scenario_writer(tmp_path, SCENARIO),
                            ("tensorrt", "tensorrt-onnx"))
    layers = 24  # bert-large (calibration/workloads/bert-large.yaml)
    assert kernels["tensorrt-onnx"] - kernels["tensorrt"] == 14 * layers + 2 + 1
