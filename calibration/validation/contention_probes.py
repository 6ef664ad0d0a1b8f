#!/usr/bin/env python3
"""Contention probes of issue "Contention physics": the closed-form situations whose answers were
unphysical before the SM-residency / bandwidth / launch-cost laws (models/gpu/device.hpp).

Prints one line per probe with what gpumux now gives; the issue's "before" figures are quoted
beside them. The probes of issue 23 (per-SM bandwidth, a MIG slice's L2) run under every
registered contention law (`contention_law:`), the default `residency` and the last release's
`fluid`. Usage: contention_probes.py [--gpumux build/gpumux]
"""
import argparse
import json
import subprocess
import tempfile
from pathlib import Path


def run(gpumux, yaml_text, *extra, law=None):
    if law is not None:
        extra = (*extra, "--set", f"contention_law={law}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.yaml"
        path.write_text(yaml_text)
        out = subprocess.run([gpumux, "run", str(path), "--json", *extra], check=True,
                             capture_output=True, text=True).stdout
    return json.loads(out)


def header(model="h100-sxm-80gb", mode="mps", duration="2s"):
    return (f"name: probe\nduration: {duration}\ngpus:\n  - {{name: gpu0, model: {model}, "
            f"sharing: {{mode: {mode}}}}}\ntenants:\n")


def client(name, kernel, arrivals="{process: closed, concurrency: 1}", extra=""):
    return (f"  - {{name: {name}, device: gpu0, workload: {{arrivals: {arrivals}, {extra}"
            f"request: {{kernels: [{kernel}]}}}}}}\n")


def streaming(gpumux, n, mode):
    kernel = "{name: s, duration: 200us, memory_bound: 1.0, sm_fraction: 1.0}"
    text = header(mode=mode) + "".join(client(f"c{i}", kernel) for i in range(n))
    summary = run(gpumux, text)
    done = sum(t["completed"] for t in summary["tenants"].values())
    return done * 200e-6 / (summary["sim_time_ns"] * 1e-9)  # share of the HBM kept busy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpumux", default="build/gpumux")
    g = parser.parse_args().gpumux

    one = streaming(g, 1, "mps")
    for n in (2, 4, 8, 16, 48):
        print(f"MPS, {n:2d} streaming clients: aggregate HBM throughput {streaming(g, n, 'mps') / one:.3f} "
              f"x one client (time-slicing: {streaming(g, n, 'time-slicing') / one:.3f})")
    print("  before: 2 -> 0.72, 4 -> 0.46, 8 -> 0.26, 16 -> 0.14 (time-slicing 16: 0.94)")

    victim = "{name: v, duration: 1ms, memory_bound: 1.0, sm_fraction: 0.5}"
    alone = run(g, header() + client("v", victim))["tenants"]["v"]["latency_ns"]["mean"]
    light = run(g, header() + client("v", victim) +
                client("l", "{name: l, duration: 1ms, memory_bound: 0.01, sm_fraction: 0.5}"))
    print(f"a memory_bound 0.01 neighbour costs a streaming kernel "
          f"{light['tenants']['v']['latency_ns']['mean'] / alone - 1:+.1%} (before: +41%)")

    full = "{name: k, duration: 1ms, sm_fraction: 1.0, memory_bound: 0.5}"
    solo = run(g, header() + client("a", full))
    pair = run(g, header() + client("a", full) + client("b", full))
    rate = lambda s: sum(t["throughput_per_s"] for t in s["tenants"].values())
    print(f"two full-grid kernels (f=1, m=0.5) under MPS: aggregate {rate(pair) / rate(solo):.2f}x "
          f"one (before: 2.0x)")
    streams = run(g, header(mode="exclusive") +
                  client("a", full, "{process: closed, concurrency: 2}"))
    print(f"two concurrent requests of one tenant, exclusive GPU: {rate(streams) / rate(solo):.2f}x "
          f"(before: 2.0x)")

    infer = "{name: k, duration: 100us, sm_fraction: 0.2}"
    solo_inf = run(g, header(duration="20s") + client("i", infer, "{process: constant, rate: 7/s}"))
    shared = run(g, header(duration="20s") +
                 client("t", "{name: step, duration: 10ms, memory_bound: 0.3}") +
                 client("i", infer, "{process: constant, rate: 7/s}"))
    solo_t = run(g, header(duration="20s") + client("t", "{name: step, duration: 10ms, memory_bound: 0.3}"))
    print(f"100 us inference kernel beside a full-grid 10 ms training kernel (MPS): "
          f"{shared['tenants']['i']['latency_ns']['mean'] / solo_inf['tenants']['i']['latency_ns']['mean']:.1f}x "
          f"its solo latency, training keeps "
          f"{shared['tenants']['t']['throughput_per_s'] / solo_t['tenants']['t']['throughput_per_s']:.3f} "
          f"of its throughput (before: 1.14x, 1.000)")

    tiny = ("name: probe\nduration: 1s\ngpus:\n  - {name: gpu0, model: h200-141gb}\ntenants:\n"
            "  - {name: a, device: gpu0, workload: {arrivals: {process: closed, concurrency: 1}, "
            "request: {GRAPHkernels: [{name: tiny, duration: 1us, repeat: 1000}]}}}\n")
    stream = run(g, tiny.replace("GRAPH", ""))["tenants"]["a"]["latency_ns"]["p50"]
    graph = run(g, tiny.replace("GRAPH", "cuda_graph: true, "))["tenants"]["a"]["latency_ns"]["p50"]
    print(f"1000 back-to-back 1 us kernels on an H200: {stream / 1e6:.2f} ms in a stream, "
          f"{graph / 1e6:.2f} ms as a CUDA graph (before: 1.00 ms)")

    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "antipattern-training-plus-inference-timesliced.yaml"
    busy = []
    for sample in ("100ms", "1s", "7s"):
        out = subprocess.run([g, "run", str(scenario), "--json", "--set",
                              f"output={{sample: {sample}}}"],
                             check=True, capture_output=True, text=True).stdout
        busy.append(next(iter(json.loads(out)["devices"].values()))["sm_busy"])
    print("training-plus-inference sm_busy with output.sample 100ms / 1s / 7s: "
          + " / ".join(f"{b:.4f}" for b in busy) + " (before: 0.995 / 0.968 / 0.851)")

    issue23(g)


LAWS = ("residency", "fluid")


def latency(gpumux, text, name, law):
    return run(gpumux, text, law=law)["tenants"][name]["latency_ns"]["p50"]


def issue23(g):
    """Issue 23's probes, each under every law: slowdown of one kernel against alone."""
    stream = "{name: s, duration: 1ms, memory_bound: 1.0, sm_fraction: 1.0}"
    for law in LAWS:
        alone = latency(g, header(mode="exclusive") + client("a", stream), "a", law)
        row = []
        for pct in (1, 12):
            text = header(mode=f"mps, active_thread_percentage: {pct}") + client("a", stream)
            row.append(f"{pct}%: {latency(g, text, 'a', law) / alone:.2f}x")
        narrow = "{name: s, duration: 10ms, memory_bound: 1.0, sm_fraction: 0.05}"
        dram = run(g, header(mode="exclusive") + client("a", narrow),
                   law=law)["devices"]["gpu0"]["dram_busy"]
        print(f"[{law}] streaming kernel under MPS active_thread_percentage "
              + ", ".join(row) + f" of solo; a 5%-SM streaming kernel's dram_busy {dram:.3f} "
              "(before: 1.0x, 1.0x; dram_busy ~1)")
    for law in LAWS:
        row = []
        for ws in ("10MB", "40MB"):
            kernel = ("{name: k, duration: 1ms, memory_bound: 1.0, sm_fraction: 1.0, "
                      f"working_set: {ws}}}")
            text = ("name: probe\nduration: 1s\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb, "
                    "mig: [1g.10gb]}\ntenants:\n  - {name: a, device: gpu0/0, workload: "
                    "{arrivals: {process: closed, concurrency: 1}, request: {kernels: ["
                    + kernel + "]}}}\n")
            whole = latency(g, header(mode="exclusive") + client("a", kernel), "a", law)
            row.append(f"{ws}: {latency(g, text, 'a', law) / whole:.1f}x")
        print(f"[{law}] lone kernel on an H100 1g.10gb, working set " + ", ".join(row)
              + " its whole-GPU time (before: 8.0x, 8.0x; closed form 13.8x, 21x)")
    grid = "{name: k, duration: 1ms, sm_fraction: 1.0, blocks: 132}"
    for law in LAWS:
        whole = latency(g, header(mode="exclusive") + client("a", grid), "a", law)
        row = []
        for slice_name in ("3g.40gb", "4g.40gb"):
            text = ("name: probe\nduration: 1s\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb, "
                    f"mig: [{slice_name}]}}\ntenants:\n  - {{name: a, device: gpu0/0, workload: "
                    "{arrivals: {process: closed, concurrency: 1}, request: {kernels: ["
                    + grid + "]}}}\n")
            row.append(f"{slice_name}: {latency(g, text, 'a', law) / whole:.2f}x")
        print(f"[{law}] one-wave full grid (132 blocks) on " + ", ".join(row)
              + " (before: 2.20x, 2.06x; closed form 3.0x, 3.0x)")


if __name__ == "__main__":
    main()
