#!/usr/bin/env python3
"""Peer comparison: the same M/D/1 queue in gpumux and in SimPy 3, measured in the same run.

Both simulate Poisson arrivals to one server with a fixed 1 ms service time, at each load
rho = rate x 1 ms of --rho (default a sweep from 0.1 to 0.95: a queue that is mostly empty to one
that is mostly long). Reports wall time per simulated request for each and the ratio (target:
gpumux >= 100x faster at every load). Also checks both against the Pollaczek-Khinchine mean
(W = S + rho S / (2 (1 - rho))), so the comparison is of equal work. At each load each peer runs
--repeat times, alternating (gpumux, SimPy, gpumux, ...), and the minimum time per request of each
is compared: on a shared machine the minimum is the run least disturbed by others (a single run
can be 2-3x slower under load, in either peer). Wall clock: gpumux's own `wall_s` (run loop and
summary) and SimPy's env.run(). CPU time, the fairer measure on a loaded machine: SimPy's
process time around env.run(); gpumux's process CPU less that of the same run for 1 % of the
requests (start-up, parsing and output cancel; the summary's percentiles do not).

usage: /usr/bin/python3 bench/compare_simpy.py [--gpumux build/gpumux] [--requests 200000]
                                               [--repeat 3] [--rho 0.1,0.3,...]
                                               [--gpumux-requests 2000000]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import simpy


def simpy_md1(n_requests, rate, service_s, seed=1):
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    rng = random.Random(seed)
    latencies = []

    def request(env):
        arrival = env.now
        with server.request() as slot:
            yield slot
            yield env.timeout(service_s)
        latencies.append(env.now - arrival)

    def source(env):
        for _ in range(n_requests):
            yield env.timeout(rng.expovariate(rate))
            env.process(request(env))

    env.process(source(env))
    start, cpu = time.perf_counter(), time.process_time()
    env.run()
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return wall, sum(latencies) / len(latencies), len(latencies), cpu


SCENARIO = """
name: md1-bench
seed: 1
duration: {duration}
output: {{sample: 10s}}
gpus: [{{name: gpu0, model: h100-sxm-80gb}}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {{process: poisson, rate: {rate}/s}}
      request: {{kernels: [{{name: k, duration: {service_us}us}}]}}
"""


def gpumux_md1(binary, n_requests, rate, service_s):
    """(run loop + summary wall s, mean latency s, completed, process CPU s)."""
    duration_s = n_requests / rate
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "md1.yaml")
        with open(path, "w") as f:
            f.write(SCENARIO.format(duration=f"{duration_s}s", rate=rate,
                                    service_us=round(service_s * 1e6)))
        out_path = os.path.join(tmp, "out.json")
        with open(out_path, "w") as out:
            proc = subprocess.Popen([binary, "run", path, "--json"], stdout=out,
                                    stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
        if status != 0:
            raise SystemExit(f"gpumux exited with status {status}")
        with open(out_path) as f:
            summary = json.load(f)
    tenant = summary["tenants"]["t"]
    return (summary["wall_s"], tenant["latency_ns"]["mean"] * 1e-9, tenant["completed"],
            usage.ru_utime + usage.ru_stime)


def compare_at(args, rho, service):
    """One load: the minimum ns/request of each peer over --repeat alternating runs, by wall
    clock and by CPU time (gpumux: the process's, less that of the same run for 1% of the
    requests, so start-up and output cancel)."""
    rate = round(rho / service, 6)
    pk = service + rho * service / (2 * (1 - rho))
    g_walls, s_walls, g_cpus, s_cpus = [], [], [], []
    g_requests = args.gpumux_requests or args.requests
    base_n = max(1, g_requests // 100)
    for _ in range(max(1, args.repeat)):
        g_wall, g_mean, g_n, g_cpu = gpumux_md1(args.gpumux, g_requests, rate, service)
        _, _, b_n, b_cpu = gpumux_md1(args.gpumux, base_n, rate, service)
        s_wall, s_mean, s_n, s_cpu = simpy_md1(args.requests, rate, service)
        g_walls.append(g_wall / g_n)
        s_walls.append(s_wall / s_n)
        g_cpus.append(max(g_cpu - b_cpu, 1e-9) / max(g_n - b_n, 1))
        s_cpus.append(s_cpu / s_n)
    return {"rho": rho, "pk": pk, "g": min(g_walls), "s": min(s_walls), "g_mean": g_mean,
            "s_mean": s_mean, "g_n": g_n, "s_n": s_n, "g_walls": g_walls, "s_walls": s_walls,
            "g_cpu": min(g_cpus), "s_cpu": min(s_cpus)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpumux", default="build/gpumux")
    parser.add_argument("--requests", type=int, default=200000)
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each peer per load, alternating; the minimum of each is "
                             "compared")
    parser.add_argument("--gpumux-requests", type=int, default=0,
                        help="requests of each gpumux run (default --requests): more make its "
                             "CPU time, a few tens of ms at 200k, stand out of the clock's tick")
    parser.add_argument("--rho", default="0.1,0.3,0.5,0.7,0.8,0.9,0.95",
                        help="comma-separated loads (arrival rate x the 1 ms service time)")
    args = parser.parse_args()
    service = 1e-3
    rows = [compare_at(args, float(r), service) for r in args.rho.split(",")]
    print(f"M/D/1, 1 ms service, {args.requests} requests per SimPy run, "
          f"{args.gpumux_requests or args.requests} per gpumux run; ns per request, minimum of "
          f"{max(1, args.repeat)} alternating runs of each peer; mean latency in ms against "
          f"Pollaczek-Khinchine (gpumux's includes the profile's launch overhead)")
    print(f"{'rho':>5} {'gpumux ns':>10} {'SimPy ns':>10} {'speed-up':>9} "
          f"{'CPU: gpumux':>12} {'SimPy':>8} {'speed-up':>9} {'P-K ms':>8} "
          f"{'gpumux ms':>10} {'SimPy ms':>9}  every run, wall (gpumux | SimPy)")
    worst = worst_cpu = float("inf")
    for r in rows:
        ratio, ratio_cpu = r["s"] / r["g"], r["s_cpu"] / r["g_cpu"]
        worst, worst_cpu = min(worst, ratio), min(worst_cpu, ratio_cpu)
        print(f"{r['rho']:5.2f} {r['g'] * 1e9:10.1f} {r['s'] * 1e9:10.1f} {ratio:8.1f}x "
              f"{r['g_cpu'] * 1e9:12.1f} {r['s_cpu'] * 1e9:8.0f} {ratio_cpu:8.1f}x "
              f"{r['pk'] * 1e3:8.4f} {r['g_mean'] * 1e3:10.4f} {r['s_mean'] * 1e3:9.4f}  "
              f"{' '.join(f'{w * 1e9:.0f}' for w in r['g_walls'])} | "
              f"{' '.join(f'{w * 1e9:.0f}' for w in r['s_walls'])}")
    print(f"lowest speed-up {worst:.1f}x by wall clock, {worst_cpu:.1f}x by CPU time "
          f"({'ok' if min(worst, worst_cpu) >= 100 else 'BELOW'} target >= 100x at every load)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
