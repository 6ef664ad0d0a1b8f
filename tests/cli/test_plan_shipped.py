"""The shipped node, scenarios/plan/plan-h100-node.yaml, planned end to end (minutes: the vLLM
server's p99 needs a window of minutes to be conclusive, so the planner grows it; label slow).
The plan runs once, as docs/howto/plan-a-node.md quotes it (`gpumux plan
scenarios/plan/plan-h100-node.yaml --jobs 2 -o best.yaml`, scripts/docs_numbers.py's
PLAN_COMMAND), and both tests read that run:
- the plan finds a setup on conclusive verdicts, names the samples and interval behind each
  ratio, and `gpumux run best.yaml --fail-on-slo` reproduces the planner's numbers with every
  target shown met (interval under target less headroom) over the window the plan chose;
- the plan table docs/howto/plan-a-node.md quotes, and the answer it and docs/plan.md state,
  are what the planner prints today (every slow scripts/docs_numbers.py entry: the plan's table, answer,
  search counts and window from this run, and test_plan's brute-force counts)."""
import functools
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from conftest import GPUMUX, run_gpumux

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt)

REPO = Path(__file__).resolve().parents[2]
gpumux = functools.partial(run_gpumux, timeout=3600)
NODE = str(REPO / "scenarios" / "plan" / "plan-h100-node.yaml")


def docs_numbers():
    """scripts/docs_numbers.py as a module (registered first: its dataclasses look it up)."""
    if "docs_numbers" not in sys.modules:
        spec = importlib.util.spec_from_file_location("docs_numbers",
                                                      REPO / "scripts" / "docs_numbers.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["docs_numbers"] = module
        spec.loader.exec_module(module)
    return sys.modules["docs_numbers"]


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """The how-to's plan command, run once in a scratch folder: (stdout, best.yaml path)."""
    folder = tmp_path_factory.mktemp("plan-shipped")
    command = [NODE if arg.endswith("plan-h100-node.yaml") else arg
               for arg in docs_numbers().PLAN_COMMAND]
    assert command[:2] == ["plan", NODE] and command[-2:] == ["-o", "best.yaml"]
    proc = gpumux(*command, cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, folder / "best.yaml"


def test_shipped_scenario_plans_on_conclusive_verdicts_and_best_yaml_reproduces(planned):
    table, best = planned
    assert best.exists() and table.rstrip().endswith("wrote best.yaml")
    # Headroom at the confidence intervals' upper bounds (3798dde), not the point estimates.
    line = re.search(r"^best: ([0-9.]+) USD/h on (\d+) GPU\(s\); headroom \d+ % at the "
                     r"confidence intervals' upper bounds \(worst SLO "
                     r"ratio ([0-9.]+), (\S+) on (\d+) samples(?:; [0-9.]+ in the per-GPU runs "
                     r"ranked)?\); simulated ([0-9.]+) s$", table,
                     re.M)
    assert line is not None, table
    cost, gpus, worst_ratio = float(line[1]), int(line[2]), float(line[3])
    worst_tenant, worst_samples, window = line[4], int(line[5]), float(line[6])
    assert cost == 4.0 * gpus
    # The vLLM server needed a longer window than the scenario's 20 s, within max_duration.
    assert 20 < window <= 600
    assert int(re.search(r"\((\d+) over a longer window", table)[1]) > 0
    # The tenant table: each SLO tenant's closest target, with the samples and a two-sided
    # interval behind it (an inconclusive verdict is never ranked).
    rows = {}
    for m in re.finditer(r"^  (\S+)\s+(gpu\S+)\s+([0-9.]+|-)  (.*)$", table, re.M):
        rows[m[1]] = m
    assert len(rows) == 8, table
    # gpumux run confirms: every SLO shown met, the planner's numbers, over the plan's window.
    run = gpumux("run", str(best), "--json", "--fail-on-slo")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["duration_ns"] == pytest.approx(window * 1e9, rel=1e-3)
    ratios = {}
    for name, measured in summary["tenants"].items():
        row = rows[name]
        assert measured["device"] == row[2] and measured["failed"] == 0
        if "slo" not in measured:
            assert row[3] == "-" and row[4] == "best effort"
            continue
        assert measured["slo_verdict"] == "met"
        worst = max(measured["slo"].values(), key=lambda c: c["value_ns"] / c["target_ns"])
        ratios[name] = worst["value_ns"] / worst["target_ns"]
        assert f"{ratios[name]:.2f}" == row[3]
        evidence = re.search(r"\((\d+) samples, CI \[([^,]+), ([^\]]+)\]\)$", row[4])
        assert evidence is not None and evidence[3] != "-", row[4]
        assert int(evidence[1]) == worst["samples"]
        for check in measured["slo"].values():  # the scenario's headroom: 10 %
            assert check["high_ns"] <= 0.9 * check["target_ns"], (name, check)
    assert max(ratios, key=ratios.get) == worst_tenant
    assert f"{ratios[worst_tenant]:.2f}" == f"{worst_ratio:.2f}"
    assert summary["tenants"][worst_tenant]["slo"]
    assert worst_samples == max(summary["tenants"][worst_tenant]["slo"].values(),
                                key=lambda c: c["value_ns"] / c["target_ns"])["samples"]


def test_the_quoted_plan_is_the_plan(planned):
    table, _ = planned
    module = docs_numbers()
    entries = [e for e in [*module.QUOTES, *module.BLOCKS] if e.slow]  # the rest: test_docs_numbers
    assert {"plan", "plan-gke", "plan-prose", "plan-answer", "plan-numbers"} <= {
        e.name for e in entries}
    problems = module.check_entries(entries, REPO, GPUMUX,
                                    outputs={tuple(module.PLAN_COMMAND): table})
    assert problems == []
