"""Conventions a newcomer expects: COMMAND --help/-h, `gpumux models`, nvidia-smi names as model
aliases, Kubernetes quantities, PROFILE:COUNT MIG layouts, -o extensions, an overload warning.
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")


def scenario(tmp_path, gpu, tenant_memory="8GiB", rate="50/s"):
    path = tmp_path / "s.yaml"
    path.write_text(f"""\
name: conv
duration: 2s
gpus:
  - {gpu}
tenants:
  - name: a
    device: gpu0
    memory: {tenant_memory}
    workload:
      arrivals: {{process: poisson, rate: {rate}}}
      request: {{kernels: [{{name: k, duration: 1ms}}]}}
""")
    return str(path)


@pytest.mark.parametrize("command,names", [
    ("run", ["SCENARIO.yaml", "--output", "OUT.h5", "--seed N", "--set KEY=VALUE", "--fail-on-slo"]),
    ("validate", ["SCENARIO.yaml", "--set KEY=VALUE"]),
    ("compare", ["SCENARIO.yaml", "--strategies A,B", "OUT.h5"]),
    ("mig", ["GPU_MODEL", "--check LAYOUT", "3g.40gb:2"]),
    ("models", ["gpumux models"]),
    ("strategies", ["gpumux strategies"]),
    ("report", ["OUT.h5", "--json"]),
])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_command_has_help(command, names, flag):
    proc = gpumux(command, flag)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"usage: gpumux {command}")
    assert "examples:\n  gpumux " + command in out
    for name in names:
        assert name in out, (name, out)
    # help wins wherever it is, even after a positional argument or a bad option
    assert gpumux(command, "x.yaml", "--bogus", flag).stdout == out


def test_help_for_unknown_command_is_one_line_exit_2():
    proc = gpumux("help", "frobnicate")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


def test_strategies_lists_the_registry():
    proc = gpumux("strategies")
    assert proc.returncode == 0, proc.stderr
    out = "\n" + proc.stdout
    for mode in ("exclusive", "time-slicing", "mps", "mps-static-partition"):
        assert f"\n{mode}: " in out, mode
    assert "time_slicing" in out and "active_thread_percentage" in out
    assert "compare --strategies: as-is, exclusive, dedicated, time-slicing, mps" in out
    assert "mig+mps-static-partition" in out
    assert gpumux("strategies", "extra").returncode == 2


def test_models_lists_numbers_and_nvidia_smi_names():
    proc = gpumux("models")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:] if line.strip()}
    h100 = rows["h100-sxm-80gb"]
    assert " 132 " in h100 and "79.2 GiB" in h100 and "3.35 TB/s" in h100
    assert "989.4 TFLOPS" in h100 and "312.0 TFLOPS" in rows["a100-80gb"]  # dense FP16 tensor
    assert "3g.40gb" in h100 and h100.rstrip().endswith("NVIDIA H100 80GB HBM3")
    assert "NVIDIA A100-SXM4-40GB" in rows["a100-sxm4-40gb"]
    assert "1g.6gb" in rows["a30-24gb"]
    for name, smi in (("l4-24gb", "NVIDIA L4"), ("l40s-48gb", "NVIDIA L40S"),
                      ("a10g-24gb", "NVIDIA A10G"), ("h100-pcie-80gb", "NVIDIA H100 PCIe")):
        assert rows[name].rstrip().endswith(smi), rows[name]
    assert " - " in rows["l4-24gb"] and "3g.40gb" in rows["h100-pcie-80gb"]  # MIG only where it exists
    assert gpumux("models", "extra").returncode == 2


@pytest.mark.parametrize("alias", ["NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3",
                                   "nvidia h100 80gb hbm3"])
def test_nvidia_smi_name_is_a_model_alias(tmp_path, alias):
    path = scenario(tmp_path, f'{{name: gpu0, model: "{alias}"}}')
    proc = gpumux("validate", path)
    assert proc.returncode == 0, proc.stderr
    assert "h100-sxm-80gb" in proc.stdout and "132 SMs" in proc.stdout
    mig = gpumux("mig", alias)
    assert mig.returncode == 0 and mig.stdout.startswith("h100-sxm-80gb ")


def test_unknown_model_names_the_line_and_mentions_aliases(tmp_path):
    path = scenario(tmp_path, '{name: gpu0, model: "NVIDIA B200"}')
    proc = gpumux("validate", path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "s.yaml:4:" in proc.stderr and "gpus.0.model" in proc.stderr
    assert "gpumux models" in proc.stderr


@pytest.mark.parametrize("quantity,gib", [("30Gi", 30.0), ("500Mi", 500 / 1024)])
def test_kubernetes_quantities_for_sizes(tmp_path, quantity, gib):
    path = scenario(tmp_path, "{name: gpu0, model: h100-sxm-80gb}", tenant_memory=quantity)
    proc = gpumux("run", path, "--json")
    assert proc.returncode == 0, proc.stderr
    peak = json.loads(proc.stdout)["devices"]["gpu0"]["memory_peak_bytes"]
    assert peak == round(gib * 2**30)


def test_milli_is_not_a_size(tmp_path):
    path = scenario(tmp_path, "{name: gpu0, model: h100-sxm-80gb}", tenant_memory="1500m")
    proc = gpumux("validate", path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "s.yaml:8:13:" in proc.stderr and "tenants.0.memory" in proc.stderr and "milli" in proc.stderr


def test_profile_count_in_scenario_mig_layout(tmp_path):
    path = scenario(tmp_path, "{name: gpu0, model: h100-sxm-80gb, mig: [3g.40gb:1, 1g.10gb:4]}")
    path = path.replace("device: gpu0", "device: gpu0/4")
    text = Path(path).read_text().replace("device: gpu0\n", "device: gpu0/4\n")
    Path(path).write_text(text)
    proc = gpumux("validate", path)
    assert proc.returncode == 0, proc.stderr
    devices = [line.split()[0] for line in proc.stdout.splitlines()[1:]]
    assert devices == ["gpu0/0", "gpu0/1", "gpu0/2", "gpu0/3", "gpu0/4"]
    assert "gpu0/0  3g.40gb" in proc.stdout and "gpu0/4  1g.10gb" in proc.stdout
    # the string form too, and a bad count is bad input naming the line
    Path(path).write_text(text.replace("[3g.40gb:1, 1g.10gb:4]", '"3g.40gb:1,1g.10gb:4"'))
    assert gpumux("validate", path).returncode == 0
    Path(path).write_text(text.replace("[3g.40gb:1, 1g.10gb:4]", "[3g.40gb:1, 1g.10gb:x]"))
    bad = gpumux("validate", path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "s.yaml:4:" in bad.stderr and "gpus.0.mig.1" in bad.stderr and "PROFILE:COUNT" in bad.stderr


def test_mig_check_with_counts():
    fits = gpumux("mig", "h100-sxm-80gb", "--check", "3g.40gb:1,2g.20gb:1,1g.10gb:2")
    assert fits.returncode == 0, fits.stdout + fits.stderr
    assert [l.split()[1] for l in fits.stdout.splitlines() if l.strip().startswith("#")] == \
        ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    # understood, and answered: two 3g.40gb take all 8 memory slices, no room for the 1g.10gb
    full = gpumux("mig", "h100-sxm-80gb", "--check", "3g.40gb:2,1g.10gb:1")
    assert full.returncode == 1 and full.stdout.startswith("does not fit") and "1g.10gb (#2)" in full.stdout
    assert gpumux("mig", "h100-sxm-80gb", "--check", "3g.40gb:2").returncode == 0
    # mig-parted's A100 40GB example
    assert gpumux("mig", "a100-sxm4-40gb", "--check", "3g.20gb:2").returncode == 0
    bad = gpumux("mig", "h100-sxm-80gb", "--check", "1g.10gb:0")
    assert bad.returncode == 2 and "PROFILE:COUNT" in bad.stderr and bad.stderr.count("\n") == 1


@pytest.mark.parametrize("name", ["out.csv", "out.json", "out", "dir.h5/out.txt"])
def test_output_extension_gpumux_does_not_write_is_bad_input(tmp_path, name):
    for command in (["run", QUICKSTART], ["compare", QUICKSTART, "--strategies", "mps"]):
        proc = gpumux(*command, "-o", name, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and ".h5 or .hdf5" in proc.stderr
        assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["out.h5", "OUT.HDF5"])
def test_hdf5_extensions_are_written(tmp_path, name):
    proc = gpumux("run", QUICKSTART, "--set", "duration=1s", "--set", "warmup=0s", "-q", "-o", name,
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / name).read_bytes()[:8] == b"\x89HDF\r\n\x1a\n"


def test_overload_warning_is_one_line_and_only_when_overloaded():
    over = gpumux("run", QUICKSTART, "--set", "tenants.0.workload.arrivals.rate=1000/s", "-q")
    assert over.returncode == 0
    lines = over.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpumux: warning: tenant chat: offered load exceeds")
    normal = gpumux("run", QUICKSTART, "-q")
    assert normal.returncode == 0 and normal.stderr == ""


@pytest.mark.parametrize("name", ["hybrid-h100", "mps-h100", "mig-all-balanced-a100",
                                  "antipattern-training-plus-inference-timesliced",
                                  "pattern-llm-serving", "trace-azure-llm"])
def test_shipped_scenarios_do_not_warn_of_overload(name):
    for path in [REPO / "scenarios" / f"{name}.yaml"]:
        proc = gpumux("run", str(path), "-q", cwd=REPO / "scenarios")
        assert proc.returncode in (0, 1), proc.stderr
        assert "offered load exceeds" not in proc.stderr, (path.name, proc.stderr)


def test_cost_is_printed_with_currency(tmp_path):
    path = tmp_path / "priced.yaml"
    text = Path(QUICKSTART).read_text()
    assert text.count("    model: h100-sxm-80gb\n") == 1
    path.write_text(text.replace("    model: h100-sxm-80gb\n",
                                 "    model: h100-sxm-80gb\n    cost_per_hour: 3.6\n"))
    table = gpumux("run", str(path), "--set", "duration=2s", "--set", "warmup=0s")
    assert table.returncode == 0, table.stderr
    assert "GPU cost: $" in table.stdout and "USD" in table.stdout and "$/h" in table.stdout
    cmp = gpumux("compare", str(path), "--strategies", "mps,dedicated", "--set", "duration=2s",
                 "--set", "warmup=0s")
    assert cmp.returncode == 0, cmp.stderr
    assert "GPU cost (USD)" in cmp.stdout and "$0.0" in cmp.stdout
