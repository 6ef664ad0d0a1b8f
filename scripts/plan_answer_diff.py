#!/usr/bin/env python3
"""Compares the answers of two `gpumux plan --json` outputs: everything but the search's counters
and wall time and the `notes` lines (the futility rule, docs/plan.md "Stopping a unit that cannot
be met", changes how many units were simulated how long, and the note that counts them, never a
ranked row, cost, ratio, configuration, tenant row, reason or the chosen plan).

    scripts/plan_answer_diff.py A.json B.json     # exit 0: the same answer; 1: the differences

or, to plan a scenario with and without the rule with one binary:

    scripts/plan_answer_diff.py --gpumux build/gpumux SCENARIO.yaml [gpumux plan options ...]
"""
import json
import os
import subprocess
import sys

# search keys that count work or time, not the answer
COUNTERS = {"units", "units_pruned", "simulations", "longer_windows", "inconclusive_at_bound",
            "projected_at_bound", "batches", "dp_rounds", "jobs", "wall_s"}


def answer(plan):
    plan = dict(plan)
    plan.pop("notes", None)
    plan["search"] = {k: v for k, v in plan.get("search", {}).items() if k not in COUNTERS}
    return plan


def differences(a, b, path="$"):
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append(f"{path}.{key}: only in {'the second' if key in b else 'the first'}")
            else:
                out += differences(a[key], b[key], f"{path}.{key}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} != {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def plan_json(gpumux, args, futility):
    env = dict(os.environ, GPUMUX_PLAN_FUTILITY="1" if futility else "0")
    proc = subprocess.run([gpumux, "plan", *args, "--json", "--quiet"], env=env,
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"gpumux plan {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def main(argv):
    if len(argv) >= 2 and argv[0] == "--gpumux":
        gpumux, args = argv[1], argv[2:]
        first, second = plan_json(gpumux, args, False), plan_json(gpumux, args, True)
        labels = ("without the rule", "with it")
    elif len(argv) == 2:
        with open(argv[0]) as f:
            first = json.load(f)
        with open(argv[1]) as f:
            second = json.load(f)
        labels = tuple(argv)
    else:
        sys.exit(__doc__)
    found = differences(answer(first), answer(second))
    counts = " ".join(f"{k}={first['search'].get(k)}->{second['search'].get(k)}"
                      for k in ("simulations", "longer_windows", "inconclusive_at_bound",
                                "projected_at_bound"))
    if found:
        print(f"the answers differ ({labels[0]} -> {labels[1]}):")
        print("\n".join(found))
        return 1
    print(f"the same answer ({labels[0]} -> {labels[1]}); {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
