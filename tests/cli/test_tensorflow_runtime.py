"""The tensorflow and tensorflow-xla runtimes through the CLI (docs/workloads.md, "Runtimes"):
a misspelt runtime is one line naming file, line, column and key, exit 2, nothing on stdout;
both runtimes run, and XLA's fused request launches fewer kernels (`gpumux inspect`). Drives the
built binary ($GPUMUX_BIN, default build/gpumux)."""
import json

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


def write(tmp_path, runtime):
    path = tmp_path / f"{runtime}.yaml"
    path.write_text(SCENARIO.replace("RUNTIME", runtime))
    return path


def test_a_misspelt_runtime_is_one_line_with_exit_2(tmp_path):
    for runtime in ("tensorflow-jit", "TensorFlow", "tensorflow_xla"):
        path = write(tmp_path, runtime)
        proc = run_gpumux("run", path)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert f"{path}:12:16: tenants.0.workload.runtime: unknown runtime '{runtime}'" in lines[0]
        assert "tensorflow, tensorflow-xla" in lines[0]
        assert proc.stdout == ""


def test_xla_launches_fewer_kernels_than_the_graph_executor(tmp_path):
    kernels = {}
    for runtime in ("tensorflow", "tensorflow-xla"):
        proc = run_gpumux("inspect", write(tmp_path, runtime), "--json", check=0)
        tenant = json.loads(proc.stdout)["tenants"][0]
        kernels[runtime] = sum(k["count"] for k in tenant["kernels"])
        assert run_gpumux("run", write(tmp_path, runtime), "--json", check=0).returncode == 0
    assert 0 < kernels["tensorflow-xla"] < kernels["tensorflow"]
