"""The shipped node, scenarios/plan/plan-h100-node.yaml, planned end to end (minutes: the vLLM
server's p99 needs a window of minutes to be conclusive, so the planner grows it; label slow):
- the plan finds a setup on conclusive verdicts only, and `gpumux run best.yaml --fail-on-slo`
  reproduces the planner's numbers with every target shown met (interval under target less
  headroom) over the window the plan chose;
- the plan table README.md quotes, and the answer README.md and docs/plan.md state, are what
  the planner prints today (scripts/docs_numbers.py entries plan, plan-prose, plan-answer)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt)

REPO = Path(__file__).resolve().parents[2]
GPUMUX = str(Path(os.environ.get("GPUMUX_BIN") or REPO / "build" / "gpumux").resolve())
NODE = str(REPO / "scenarios" / "plan" / "plan-h100-node.yaml")


def gpumux(*args):
    return subprocess.run([GPUMUX, *args], capture_output=True, text=True, timeout=1800)


def test_shipped_scenario_plans_on_conclusive_verdicts_and_best_yaml_reproduces(tmp_path):
    best = tmp_path / "best.yaml"
    proc = gpumux("plan", NODE, "--json", "-o", str(best))
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["found"] and best.exists()
    winner = plan["ranked"][0]
    assert winner["setup"] == "best" and winner["cost_per_hour"] == 4.0 * winner["gpus"]
    # Every ranked setup rests on conclusive verdicts, with the samples behind them.
    for setup in plan["ranked"]:
        for tenant in setup.get("tenants", []):
            assert tenant["met"] and not tenant["inconclusive"], (setup["setup"], tenant)
    # The vLLM server needed a longer window than the scenario's 20 s, within max_duration.
    assert 20 < winner["duration_s"] <= 600
    assert plan["search"]["longer_windows"] > 0
    # gpumux run confirms: every SLO shown met, the planner's numbers.
    run = gpumux("run", str(best), "--json", "--fail-on-slo")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    for tenant in winner["tenants"]:
        measured = summary["tenants"][tenant["tenant"]]
        assert measured["device"] == tenant["device"] and measured["failed"] == 0
        if "slo" not in measured:
            continue
        assert measured["slo_verdict"] == "met"
        ratio = max(c["value_ns"] / c["target_ns"] for c in measured["slo"].values())
        assert abs(ratio - tenant["worst_slo_ratio"]) < 1e-9
        for check in measured["slo"].values():  # the scenario's headroom: 10 %
            assert check["high_ns"] <= 0.9 * check["target_ns"], (tenant["tenant"], check)
        worst = max(measured["slo"].values(), key=lambda c: c["value_ns"] / c["target_ns"])
        assert tenant["samples"] == worst["samples"]
        assert f"{worst['samples']} samples" in tenant["closest"]


def test_the_quoted_plan_is_the_plan():
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "docs_numbers.py"), "--gpumux",
                        GPUMUX, "--check", "--only", "plan", "plan-prose", "plan-answer"],
                       capture_output=True, text=True, timeout=1800, cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
