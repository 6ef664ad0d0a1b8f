#!/usr/bin/env python3
"""Peer comparison: the same M/D/1 queue in gpumux and in SimPy 3, measured in the same run.

Both simulate Poisson arrivals (rho = 0.7) to one server with a fixed 1 ms service time.
Reports wall time per simulated request for each and the ratio (target: gpumux >= 100x faster).
Also checks both against the Pollaczek-Khinchine mean, so the comparison is of equal work.
Each peer runs --repeat times, alternating (gpumux, SimPy, gpumux, ...), and the minimum time per
request of each is compared: on a shared machine the minimum is the run least disturbed by
others (a single run can be 2-3x slower under load, in either peer).

usage: /usr/bin/python3 bench/compare_simpy.py [--gpumux build/gpumux] [--requests 200000]
                                               [--repeat 3]
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
    start = time.perf_counter()
    env.run()
    wall = time.perf_counter() - start
    return wall, sum(latencies) / len(latencies), len(latencies)


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
    duration_s = n_requests / rate
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "md1.yaml")
        with open(path, "w") as f:
            f.write(SCENARIO.format(duration=f"{duration_s}s", rate=rate,
                                    service_us=round(service_s * 1e6)))
        out = subprocess.run([binary, "run", path, "--json"], check=True, capture_output=True,
                             text=True).stdout
    summary = json.loads(out)
    tenant = summary["tenants"]["t"]
    return summary["wall_s"], tenant["latency_ns"]["mean"] * 1e-9, tenant["completed"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpumux", default="build/gpumux")
    parser.add_argument("--requests", type=int, default=200000)
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each peer, alternating; the minimum of each is compared")
    args = parser.parse_args()
    rate, service = 700.0, 1e-3
    rho = rate * service
    pk = service + rate * service ** 2 / (2 * (1 - rho))

    g_per = s_per = float("inf")
    g_walls, s_walls = [], []
    for _ in range(max(1, args.repeat)):
        g_wall, g_mean, g_n = gpumux_md1(args.gpumux, args.requests, rate, service)
        s_wall, s_mean, s_n = simpy_md1(args.requests, rate, service)
        g_walls.append(g_wall / g_n)
        s_walls.append(s_wall / s_n)
        g_per = min(g_per, g_wall / g_n)
        s_per = min(s_per, s_wall / s_n)
    g_wall, s_wall = g_per * g_n, s_per * s_n
    print(f"M/D/1 rho={rho:.2f}, Pollaczek-Khinchine mean latency {pk * 1e3:.4f} ms")
    print(f"gpumux : {g_n:8d} requests  {g_wall:8.3f} s  {g_per * 1e9:9.1f} ns/request  "
          f"mean {g_mean * 1e3:.4f} ms (includes the profile's launch overhead)")
    print(f"SimPy 3: {s_n:8d} requests  {s_wall:8.3f} s  {s_per * 1e9:9.1f} ns/request  "
          f"mean {s_mean * 1e3:.4f} ms")
    print(f"speed-up per request: {s_per / g_per:.1f}x (target >= 100x), minimum of "
          f"{len(g_walls)} runs each; every run, ns/request: gpumux "
          f"{' '.join(f'{w * 1e9:.0f}' for w in g_walls)}, SimPy "
          f"{' '.join(f'{w * 1e9:.0f}' for w in s_walls)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
