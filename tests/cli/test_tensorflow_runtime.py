"""The tensorflow and tensorflow-xla runtimes through the CLI (docs/workloads.md, "Runtimes"):
a misspelt runtime is one line naming file, line, column and key, exit 2, nothing on stdout;
both runtimes run, and XLA's fused request launches fewer kernels (`gpumux inspect`). Drives the
built binary ($GPUMUX_BIN, default build/gpumux)."""

from cli_support import assert_misspelt_runtimes_refused, kernel_counts, scenario_writer
from conftest import run_gpumux

SCENARIO = """name: t
seed: 1
duration: 200ms
gpus: [{name: g, model: a100-sxm4-40gb}]
tenants:
  - name: a
    device: g
    workload:
      model: resnet50
      batch: 1
      arrivals: {process: closed, concurrency: 1}
      runtime: RUNTIME
"""


def test_a_misspelt_runtime_is_one_line_with_exit_2(tmp_path):
    assert_misspelt_runtimes_refused(run_gpumux, scenario_writer(tmp_path, SCENARIO),
                                     ("tensorflow-jit", "TensorFlow", "tensorflow_xla"), 12,
                                     "tensorflow, tensorflow-xla")


def test_xla_launches_fewer_kernels_than_the_graph_executor(tmp_path):
    kernels = kernel_counts(run_gpumux, scenario_writer(tmp_path, SCENARIO),
                            ("tensorflow", "tensorflow-xla"))
    assert 0 < kernels["tensorflow-xla"] < kernels["tensorflow"]
