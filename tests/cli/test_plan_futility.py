"""The futility rule of `gpumux plan` (docs/plan.md, "Stopping a unit that cannot be met"):
scripts/plan_answer_diff.py plans a small scenario with and without it (GPUMUX_PLAN_FUTILITY)
and finds the same answer, with units stopped early and fewer simulations. Drives $GPUMUX_BIN."""
import json
import os
import subprocess
import sys

from conftest import GPUMUX, REPO

# A random instance of tests/support/plan_instances.hpp (the one of test_plan_futility.cpp's
# planner test where the rule stops a unit): three tenants on up to two GPUs of two models.
NODE = """
name: random
seed: 427
duration: 2s
warmup: 200ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}, {model: a100-sxm4-40gb, cost_per_hour: 1.5}]
  max_gpus: 2
tenants:
  - name: t0
    memory: 12GiB
    workload:
      arrivals: {process: poisson, rate: 45/s}
      request:
        kernels:
          - {name: k, duration: 829us, sm_fraction: 0.25, memory_bound: 0.11}
    slo: {p99: 16580us}
  - name: t1
    memory: 31GiB
    isolation: memory
    workload:
      arrivals: {process: poisson, rate: 131/s}
      request:
        kernels:
          - {name: k, duration: 2753us, sm_fraction: 0.71, memory_bound: 0.39}
    slo: {p99: 13765us}
  - name: t2
    memory: 26GiB
    isolation: fault
    workload:
      arrivals: {process: poisson, rate: 79/s}
      request:
        kernels:
          - {name: k, duration: 1961us, sm_fraction: 0.73, memory_bound: 0.18}
    slo: {p99: 49025us}
"""


def plan(path, futility):
    env = dict(os.environ, GPUMUX_PLAN_FUTILITY="1" if futility else "0")
    proc = subprocess.run([GPUMUX, "plan", str(path), "--json", "--quiet", "--jobs", "2"],
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_the_same_answer_with_and_without_the_futility_rule(tmp_path):
    path = tmp_path / "node.yaml"
    path.write_text(NODE)
    script = REPO / "scripts" / "plan_answer_diff.py"
    proc = subprocess.run([sys.executable, str(script), "--gpumux", GPUMUX, str(path),
                           "--jobs", "2"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("the same answer"), proc.stdout
    with_rule, without = plan(path, True), plan(path, False)
    assert with_rule["search"]["projected_at_bound"] > 0
    assert without["search"]["projected_at_bound"] == 0
    assert with_rule["search"]["simulations"] < without["search"]["simulations"]
    # The units it stopped are counted among the undecided ones, and the note says so.
    assert with_rule["search"]["inconclusive_at_bound"] >= with_rule["search"]["projected_at_bound"]
    assert any("projected not to be met" in n for n in with_rule["notes"]), with_rule["notes"]


def test_the_diff_script_finds_a_changed_answer(tmp_path):
    # The comparison can fail: a changed cost is reported, with its path, and exit 1.
    path = tmp_path / "node.yaml"
    path.write_text(NODE)
    first = plan(path, True)
    second = json.loads(json.dumps(first))
    second["ranked"][0]["cost_per_hour"] += 1
    second["search"]["simulations"] += 7  # a counter: not part of the answer
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(first))
    b.write_text(json.dumps(second))
    script = REPO / "scripts" / "plan_answer_diff.py"
    proc = subprocess.run([sys.executable, str(script), str(a), str(b)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 1, proc.stdout
    assert "$.ranked[0].cost_per_hour" in proc.stdout
    assert "simulations" not in proc.stdout.split("\n", 1)[1]
    a.write_text(json.dumps(first))
    proc = subprocess.run([sys.executable, str(script), str(a), str(a)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout
