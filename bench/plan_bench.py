#!/usr/bin/env python3
"""Benchmark of `gpumux plan`: 8 tenants over up to 8 H100s, all six strategy families
(scenarios/plan/plan-h100-node.yaml), planned --repeat times. Prints wall time (min / median /
max), the size of the space, what the bounds pruned, units and simulations, and checks the
target: under a minute on the 2-core development machine.

usage: /usr/bin/python3 bench/plan_bench.py [--gpumux build/gpumux] [--repeat 3] [--jobs N]
                                            [--scenario FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_S = 60.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpumux", default=os.path.join(REPO, "build", "gpumux"))
    parser.add_argument("--scenario",
                        default=os.path.join(REPO, "scenarios", "plan", "plan-h100-node.yaml"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=0, help="simulation threads (0: the cores)")
    args = parser.parse_args()
    command = [args.gpumux, "plan", args.scenario, "--json"]
    if args.jobs:
        command += ["--jobs", str(args.jobs)]
    walls, plan = [], None
    for _ in range(args.repeat):
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            sys.exit(f"plan_bench: {' '.join(command)} failed: {proc.stderr.strip()}")
        plan = json.loads(proc.stdout)
    search = plan["search"]
    best = plan["ranked"][0]
    tenants = len(best.get("tenants", [])) or "?"
    print(f"gpumux plan {os.path.relpath(args.scenario, REPO)}: {tenants} tenants, up to "
          f"{plan['max_gpus']} GPUs, strategies {', '.join(plan['strategies'])}")
    print(f"  wall (s)        min {min(walls):.2f}  median {statistics.median(walls):.2f}  "
          f"max {max(walls):.2f}  ({args.repeat} runs, {search['jobs']} worker(s), "
          f"{os.cpu_count()} CPUs)")
    print(f"  space           {search['setups']:.3g} setups; {search['setups_after_bounds']:.3g} "
          f"after the bounds ({100 * search['pruned_fraction']:.2f} % pruned)")
    print(f"  units           {search['units']} considered, {search['units_pruned']} pruned, "
          f"{search['simulations']} simulated, {search['dp_rounds']} DP rounds")
    if plan["found"]:
        print(f"  best            {best['cost_per_hour']:.2f} {plan['currency']}/h on "
              f"{best['gpus']} GPU(s), worst SLO ratio {best['worst_slo_ratio']:.2f}")
    ok = max(walls) < TARGET_S
    print(f"  target          < {TARGET_S:.0f} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
