#!/usr/bin/python3
"""Predict Gavel's V100 co-location throughputs with gpumux's MPS law (no fitted interference).

Data: calibration/validation/data/gavel/v100_scale_factor_1.json, an exact subset of Gavel's
scheduler/simulation_throughputs.json (Narayanan et al., "Heterogeneity-Aware Cluster Scheduling
Policies for Deep Learning Workloads", OSDI'20, https://github.com/stanford-futuredata/gavel, MIT;
see data/gavel/SOURCE.md): for each single-GPU job type J, `J["null"]` is its isolated throughput
(steps/s) and `J[K]` = [throughput of J, throughput of K] when J and K share one V100.

Law under test (models/gpu/device.hpp, models/gpu/concurrent.hpp): SM residency (a kernel's
resident blocks hold f x S SMs until it ends; newcomers get SMs as kernels finish, FIFO by launch
order), HBM bandwidth shared max-min with the aggregate conserved, bounded L2-capacity
interference from each kernel's `working_set`, per-kernel launch overhead. Nothing is fitted to
the co-location numbers: each job type is mapped to kernels from its isolated throughputs (the
same solo baseline any normalised prediction needs) and from published characteristics of the
model (JOB_FAMILIES below; guesses are labelled assumptions), then every pair is simulated through
the CLI (`gpumux run X.yaml --json`, mode: mps) and the normalised throughputs r = co-located /
isolated are compared with Gavel's.

Mapping of a job (family F, batch b, isolated iteration time T = 1/throughput on the V100):
* per-sample GPU time c_F = min over F's batch sizes of T(b)/b: the family's most efficient batch
  is assumed to keep the V100 busy (assumption: large-batch training is GPU-bound);
* grid width f(b) = min(1, b x tiles_per_sample / 80): output tiles of a representative layer
  (one 128x64 cuBLAS/cuDNN tile = 8192 outputs per block) against the V100's 80 SMs (one wave);
  waves = max(1, b x tiles_per_sample / 80);
* GPU time per iteration G = min(T, c_F b / f) (SM time is conserved: a kernel that fills only f
  of the GPU runs as long as a full one with 1/f the work); families with one batch size take
  G = gpu_busy x T (assumption in the table);
* the rest of T is host (CPU / data-loader / Python) time: K kernels of G/K each (kernels of about
  KERNEL_MS; assumption, kept coarse for speed), launched by a CPU that paces them `host_gap`
  apart and runs ahead of the GPU (PyTorch's asynchronous launch), so alone an iteration takes T;
* memory_bound m and working_set WS per family (table); WS is scaled by the L2 ratio of the
  simulated GPU to the V100 (40 MiB / 6 MiB) so that WS/L2 is the V100's.

GPU difference: V100 is not in calibration/profiles; pairs run on `a100-sxm4-40gb` as a stand-in
with the V100 durations. Only dimensionless quantities enter r: f (fraction of SMs), m, WS/L2
(scaled), host/GPU time split. What does not carry over: rho = HBM/L2 bandwidth (A100 0.32 vs
about 0.4 on V100, which bounds the L2 penalty phi <= 1/rho) and the launch overhead (A100 1.86 us).

Usage:  /usr/bin/python3 calibration/validation/gavel_mps.py [--gpumux build/gpumux]
        [--report calibration/validation/gavel-mps-v100.md] [--json out.json]
        [--subset N]   (every k-th pair so that about N pairs run: for the test suite)
"""
from __future__ import annotations

import ast
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

from common import argument_parser, run_scenario

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = HERE / "data" / "gavel" / "v100_scale_factor_1.json"
PROFILE = "a100-sxm4-40gb"
V100_SMS = 80                    # V100 datasheet
V100_L2_MIB = 6.0                # V100 datasheet (6,144 KB L2)
SIM_L2_MIB = 40.0                # a100-sxm4-40gb profile l2_cache
KERNEL_MS = 0.5                  # assumption: kernel granularity (coarser than real, for speed)
JITTER = 0.1                     # kernel durations uniform +-10 % (assumption: avoids phase lock)
DURATION_S, WARMUP_S = 30.0, 3.0
PAIRS_PER_RUN = 40

# Per family: tiles_per_sample (output tiles of 8192 elements per sample, representative layer),
# m (memory-bound share of GPU time), ws_mib (L2 working set on the V100), gpu_busy (only for
# single-batch families), and where each number comes from.
JOB_FAMILIES = {
    "ResNet-18": dict(
        tiles=2.8, m=0.35, ws_mib=2.0,
        why="CIFAR-10 32x32 inputs (Gavel workloads/pytorch/image_classification/cifar10). Output "
            "elements per sample per stage 64x32x32 .. 512x4x4 = 65536 .. 8192, i.e. 8 .. 1 tiles "
            "(geometric mean 2.8): f = 0.56 at batch 16, full from 32. m = 0.35 and WS = 2 MiB "
            "(weights of a 128-256-channel 3x3 conv, re-read by every tile) are assumptions: "
            "BN/ReLU/elementwise are the memory-bound share of conv training."),
    "ResNet-50": dict(
        tiles=12.0, m=0.35, ws_mib=2.0,
        why="ImageNet 224x224 (Gavel imagenet/main.py, torchvision ResNet-50). Smallest stage "
            "2048x7x7 = 100k outputs = 12 tiles per sample: full grid (f = 1) at every batch. "
            "m, WS: same assumptions as ResNet-18."),
    "Transformer": dict(
        tiles=2.0, m=0.39, ws_mib=4.0,
        why="Multi30k de-en, d_model 512, FFN 2048 (Gavel translation/, attention-is-all-you-need-"
            "pytorch). About 30 tokens per sentence pair (assumption): 30x512 = 1.9 tiles per "
            "sample for d_model GEMMs, 7.5 for FFN; 2 as representative -> f = 0.4 / 0.8 / 1 at "
            "batch 16 / 32 / >= 64. m = 0.39: normalisation + elementwise operators take 37-39 % "
            "of transformer training time (Ivanov et al., 'Data Movement Is All You Need', MLSys'21, "
            "arXiv:2007.00072). WS = one FFN weight matrix 512x2048x4 B = 4 MiB."),
    "LM": dict(
        tiles=1000.0, m=0.42, ws_mib=26.6,
        why="Wikitext-2 2-layer LSTM, emsize = nhid = 200, bptt 35 (Gavel language_modeling/main.py "
            "defaults); GPU time is dominated by the decoder GEMM 35b x 33278 x 200 and its softmax "
            "(full grid at every batch). Roofline: intensity about 24-33 flop/B against the V100's "
            "15.7 TFLOP/s / 900 GB/s = 17 -> m = 1/(1 + I/17) = 0.34-0.42; 0.42 (batch 5) used. "
            "WS = decoder weights 200 x 33278 x 4 B = 26.6 MiB (exceeds the 6 MiB L2 alone)."),
    "Recommendation": dict(
        tiles=1000.0, m=0.5, ws_mib=16.0,
        why="Recoder autoencoder on ML-20M (Gavel recommendation/): GEMMs batch x ~20k items x 200 "
            "(full grid at every batch); WS = 20k x 200 x 4 B = 16 MiB; m = 0.5 is an assumption "
            "(sparse gathers and elementwise beside skinny GEMMs)."),
    "A3C": dict(
        tiles=34.0, m=0.5, ws_mib=0.5, gpu_busy=0.3,
        why="Pong, 84x84x4 frames, 4 conv layers of 32 channels + LSTM (Gavel rl/): 20-step rollouts "
            "(assumption), 32x21x21 outputs = 1.7 tiles per frame, 34 per rollout -> f = 0.43. gpu_busy 0.3 is an "
            "assumption (environment stepping on the CPU dominates); m, WS assumptions."),
    "CycleGAN": dict(
        tiles=128.0, m=0.5, ws_mib=2.3, gpu_busy=0.9,
        why="monet2photo 256x256, batch 1, ResNet-9 generators (Gavel cyclegan/): 256x64x64 = 1M "
            "outputs = 128 tiles per image -> full grid. gpu_busy 0.9 and m = 0.5 (instance norm on "
            "large activations) are assumptions; WS = a 256-channel 3x3 conv's weights 2.3 MiB."),
}


# ---------------------------------------------------------------------------------------------
def load_pairs(path: Path = DATA):
    raw = json.loads(path.read_text())
    keys = list(raw)
    names = [ast.literal_eval(k)[0] for k in keys]
    alone = [raw[k]["null"] for k in keys]
    pairs, dropped = [], []
    for i, a in enumerate(keys):
        for j in range(i, len(keys)):
            x, y = raw[a][keys[j]]
            x2, y2 = raw[keys[j]][a]
            assert abs(x - y2) < 1e-9 and abs(y - x2) < 1e-9, (a, keys[j])
            if x == 0 and y == 0:          # did not run together (e.g. out of 16 GB)
                dropped.append((names[i], names[j]))
                continue
            pairs.append({"a": i, "b": j, "ra": x / alone[i], "rb": y / alone[j]})
    return {"names": names, "alone": alone, "pairs": pairs, "dropped": dropped}


def family_of(name: str) -> tuple[str, int | None]:
    fam = name.split(" (")[0]
    b = int(name.split("batch size ")[1].rstrip(")")) if "batch size" in name else None
    return fam, b


def job_mapping(P) -> list[dict]:
    """Kernels of every job type, from its isolated throughput and JOB_FAMILIES."""
    T = {n: 1000.0 / x for n, x in zip(P["names"], P["alone"])}  # ms per iteration
    c = {}
    for n in P["names"]:
        fam, b = family_of(n)
        if b is not None:
            c[fam] = min(c.get(fam, float("inf")), T[n] / b)
    jobs = []
    for n in P["names"]:
        fam, b = family_of(n)
        F = JOB_FAMILIES[fam]
        tiles = F["tiles"] * (b if b is not None else 1)
        f = min(1.0, tiles / V100_SMS)
        waves = max(1.0, tiles / V100_SMS)
        if b is not None:
            G = min(T[n], c[fam] * b / f)
        else:
            G = F["gpu_busy"] * T[n]
        K = int(min(200, max(4, round(G / KERNEL_MS))))
        jobs.append({"name": n, "family": fam, "batch": b, "T_ms": T[n], "f": f, "waves": waves,
                     "m": F["m"], "ws_mib": F["ws_mib"], "G_ms": G, "gpu_busy": G / T[n], "K": K})
    return jobs


def launch_overhead_ms() -> float:
    doc = yaml.safe_load((REPO / "calibration" / "profiles" / f"{PROFILE}.yaml").read_text())
    v = str(doc["launch_overhead"]["value"])
    assert v.endswith("us"), v
    return float(v[:-2]) / 1000.0


def tenant(name: str, gpu: str, job: dict, L_ms: float) -> dict:
    """A closed-loop training job: one request = one iteration of K kernels. The CPU paces launches
    host_gap apart (ready_k = max(finish_{k-1}, start + k g) + L), so alone an iteration takes T."""
    T, K = job["T_ms"], job["K"]
    d = job["G_ms"] / K
    if K * (d + L_ms) >= T:            # GPU-bound: back to back
        d, g = T / K - L_ms, 0.0
    else:
        g = (T - L_ms - d) / (K - 1)
    ns = lambda ms: f"{int(round(ms * 1e6))}ns"  # noqa: E731
    kernel = {"name": "k", "duration": {"uniform": {"min": ns(d * (1 - JITTER)),
                                                   "max": ns(d * (1 + JITTER))}},
              "sm_fraction": round(job["f"], 4), "memory_bound": job["m"],
              "waves": round(job["waves"], 3), "repeat": K}
    ws = job["ws_mib"] * SIM_L2_MIB / V100_L2_MIB
    if ws > 0:
        kernel["working_set"] = f"{int(ws * 2**20)}B"
    req = {"kernels": [kernel]}
    if g > 0:
        req["host_gap"] = ns(g)
    return {"name": name, "device": gpu, "memory": "1GiB",
            "workload": {"arrivals": {"process": "closed", "concurrency": 1}, "request": req}}


def run_batch(gpumux: str, groups: list, jobs: list, L_ms: float, tmp: Path, tag: str,
              client_order: str | None = None) -> dict:
    """groups: list of (key, [job index, ...]); each group on its own MPS GPU (the MPS
    `client_order`, when given: interleaved | launch_order; else gpumux's default)."""
    gpus, tenants = [], []
    sharing = {"mode": "mps"}
    if client_order:
        sharing["client_order"] = client_order
    for gi, (key, members) in enumerate(groups):
        g = f"g{gi}"
        gpus.append({"name": g, "model": PROFILE, "sharing": dict(sharing)})
        for ti, j in enumerate(members):
            tenants.append(tenant(f"{key}-{ti}", g, jobs[j], L_ms))
    scen = {"name": f"gavel-{tag}", "seed": 1, "duration": f"{DURATION_S}s",
            "warmup": f"{WARMUP_S}s", "gpus": gpus, "tenants": tenants}
    out = run_scenario(gpumux, scen, tmp / f"gavel-{tag}.yaml")["tenants"]
    return {k: v["throughput_per_s"] for k, v in out.items()}


def predict(P, jobs, gpumux: str, subset: int | None) -> dict:
    L_ms = launch_overhead_ms()
    pairs = P["pairs"]
    if subset:
        step = max(1, len(pairs) // subset)
        pairs = pairs[::step]
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        solo = run_batch(gpumux, [(f"s{j}", [j]) for j in range(len(jobs))], jobs, L_ms, tmp, "solo")
        solo = {j: solo[f"s{j}-0"] for j in range(len(jobs))}
        got = {}
        for start in range(0, len(pairs), PAIRS_PER_RUN):
            chunk = pairs[start:start + PAIRS_PER_RUN]
            groups = [(f"p{start + i}", [p["a"], p["b"]]) for i, p in enumerate(chunk)]
            got.update(run_batch(gpumux, groups, jobs, L_ms, tmp, f"pairs{start}"))
    rows = []
    for i, p in enumerate(pairs):
        for side, j, meas in (("a", p["a"], p["ra"]), ("b", p["b"], p["rb"])):
            raw = got[f"p{i}-{0 if side == 'a' else 1}"] / solo[j]
            pred = min(1.0, raw)  # Gavel's co-located throughputs are clipped at the isolated one
            rows.append({"pair": [P["names"][p["a"]], P["names"][p["b"]]], "job": P["names"][j],
                         "partner": P["names"][p["b"] if side == "a" else p["a"]],
                         "measured": meas, "predicted": pred, "predicted_raw": raw,
                         "error": pred / meas - 1, "abs_diff": pred - meas})
    solo_err = {P["names"][j]: solo[j] * jobs[j]["T_ms"] / 1000.0 - 1 for j in range(len(jobs))}
    return {"rows": rows, "n_pairs_simulated": len(pairs), "solo_rel_err": solo_err}


def summarise(P, res: dict) -> dict:
    rows = res["rows"]
    rel = [abs(r["error"]) for r in rows]
    ab = [abs(r["abs_diff"]) for r in rows]
    S_meas = [rows[k]["measured"] + rows[k + 1]["measured"] for k in range(0, len(rows), 2)]
    S_pred = [rows[k]["predicted"] + rows[k + 1]["predicted"] for k in range(0, len(rows), 2)]
    S_raw = [rows[k]["predicted_raw"] + rows[k + 1]["predicted_raw"] for k in range(0, len(rows), 2)]
    base = {  # trivial predictors, for scale
        "r = 1 (no slowdown)": [abs(1 / r["measured"] - 1) for r in rows],
        "r = 0.5 (ideal taking turns)": [abs(0.5 / r["measured"] - 1) for r in rows],
    }
    ok = [abs(rows[k]["error"]) for k in range(len(rows)) if S_meas[k // 2] >= 1]
    lost = [abs(rows[k]["error"]) for k in range(len(rows)) if S_meas[k // 2] < 1]
    return {"n_points": len(rows), "median_abs_rel": statistics.median(rel), "max_abs_rel": max(rel),
            "median_abs_rel_S_ge_1": statistics.median(ok) if ok else None,
            "median_abs_rel_S_lt_1": statistics.median(lost) if lost else None,
            "n_points_S_lt_1": len(lost),
            "median_abs_diff": statistics.median(ab), "max_abs_diff": max(ab),
            "rmse": (sum(x * x for x in ab) / len(ab)) ** 0.5,
            "frac_over_25": sum(1 for x in rel if x > 0.25) / len(rel),
            "pair_total_measured": S_meas, "pair_total_predicted": S_pred,
            "pair_total_raw": S_raw,
            "frac_measured_S_below_1": sum(1 for s in S_meas if s < 1) / len(S_meas),
            "min_pred_S": min(S_raw), "max_pred_S": max(S_raw),
            "baselines_median_abs_rel": {k: statistics.median(v) for k, v in base.items()},
            "max_solo_rel_err": max(abs(v) for v in res["solo_rel_err"].values())}


# ---------------------------------------------------------------------------------------------
def report(P, jobs, res, S) -> str:
    L = []
    add = L.append
    add("# MPS co-location: gpumux's residency + bandwidth + L2 law against Gavel's V100 pairs")
    add("")
    add("Generated by `/usr/bin/python3 calibration/validation/gavel_mps.py`; do not edit by hand. "
        "Data: Gavel (Narayanan et al., OSDI'20, https://github.com/stanford-futuredata/gavel) "
        "`scheduler/simulation_throughputs.json`, V100, single-GPU jobs; exact subset in "
        "`data/gavel/` (MIT; see `data/gavel/SOURCE.md`).")
    add("")
    add("**Prediction, not a fit.** The MPS interference factor alpha is gone; no parameter below "
        "was tuned to the co-location numbers. Each job type is mapped to kernels from its "
        "isolated throughput and published model characteristics (table), every pair runs through "
        f"`gpumux run --json` (mode: mps, `{PROFILE}` as a V100 stand-in, {PAIRS_PER_RUN} pairs per "
        f"scenario on separate GPUs, {DURATION_S:g} s measured after {WARMUP_S:g} s warm-up), and "
        "r = co-located / isolated throughput is compared with Gavel's.")
    add("")
    add("## Data")
    add("")
    add(f"* {len(P['names'])} job types, {len(P['pairs']) + len(P['dropped'])} unordered pairs "
        f"(self pairs included); {len(P['dropped'])} stored as `[0, 0]` (did not run together) are "
        f"dropped: {len(P['pairs'])} pairs = {2 * len(P['pairs'])} normalised throughputs; "
        f"{res['n_pairs_simulated']} pairs simulated here.")
    add("* Gavel's co-located values never exceed the isolated one (83 are exactly 1.0): clipped "
        "at 1, so predictions are clipped at 1 too.")
    add("* **Sharing mode unknown.** Gavel's worker dispatcher has a `use_mps` option that defaults "
        "to off; the file does not say which mode produced it. "
        f"{100 * S['frac_measured_S_below_1']:.0f}% of the measured pairs have a total "
        "r_a + r_b < 1 (they lost throughput against taking turns), which neither MPS physics "
        "nor ideal time-slicing produce (see the conclusion).")
    add("")
    add("## Mapping: job type -> kernels")
    add("")
    add("Per job (family F, batch b, isolated V100 iteration time T): per-sample GPU time "
        "c_F = min_b T(b)/b (the family's most efficient batch is assumed GPU-bound); grid width "
        f"f = min(1, b x tiles/{V100_SMS}) (output tiles of 8192 elements of a representative layer "
        "against the V100's 80 SMs); waves = max(1, b x tiles/80); GPU time G = min(T, c_F b / f) "
        "(SM time conserved); the rest of T is CPU time that paces the kernel launches "
        f"(`host_gap`); K = G / {KERNEL_MS} ms kernels (assumption: coarse kernels for speed), "
        f"durations uniform +-{100 * JITTER:.0f}% (assumption: avoids artificial phase locking); "
        f"working_set scaled by {SIM_L2_MIB:g}/{V100_L2_MIB:g} MiB (A100 / V100 L2) so that WS/L2 "
        "is the V100's.")
    add("")
    add("| family | source and assumptions |")
    add("|---|---|")
    for fam, F in JOB_FAMILIES.items():
        add(f"| {fam} | {F['why']} |")
    add("")
    add("| job | T (ms) | f | waves | m | WS (V100 MiB) | GPU busy G/T | kernels K | solo sim error |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for j in jobs:
        add(f"| {j['name']} | {j['T_ms']:.1f} | {j['f']:.2f} | {j['waves']:.1f} | {j['m']:.2f} | "
            f"{j['ws_mib']:.1f} | {j['gpu_busy']:.2f} | {j['K']} | "
            f"{100 * res['solo_rel_err'][j['name']]:+.1f}% |")
    add("")
    add("GPU difference: the A100 profile is a stand-in; only dimensionless quantities enter r "
        "(f, m, WS/L2, host/GPU split). Not carried over: rho = HBM/L2 bandwidth (A100 0.32; V100 "
        "about 0.4), which bounds the L2 penalty at 1/rho, and the launch overhead (1.86 us).")
    add("")
    add("## Result")
    add("")
    add(f"{S['n_points']} normalised throughputs: median |error| **{100 * S['median_abs_rel']:.1f}%**, "
        f"max **{100 * S['max_abs_rel']:.0f}%** (error = predicted/measured - 1); median "
        f"|predicted - measured| {S['median_abs_diff']:.3f}, max {S['max_abs_diff']:.3f}, RMSE "
        f"{S['rmse']:.3f}; {100 * S['frac_over_25']:.0f}% of points off by more than 25%. Split by the "
        f"measured pair total: pairs with S >= 1 (within what the law can produce) median |error| "
        f"{100 * (S['median_abs_rel_S_ge_1'] or 0):.1f}%; the {S['n_points_S_lt_1']} points of pairs "
        f"with S < 1 median {100 * (S['median_abs_rel_S_lt_1'] or 0):.0f}%.")
    add("")
    add("For scale, trivial predictors: " + "; ".join(
        f"{k}: median |error| {100 * v:.1f}%" for k, v in S["baselines_median_abs_rel"].items())
        + ". (The retired alpha fit reached RMSE 0.188 in-sample with 27 fitted parameters.)")
    add("")
    add(f"Predicted pair totals r_a + r_b (unclipped) range {S['min_pred_S']:.3f}-{S['max_pred_S']:.3f}: "
        "never below taking turns (1) beyond launch-overhead noise, never above 2.")
    add("")
    add("| job | partner | measured r | predicted r | error |")
    add("|---|---|---:|---:|---:|")
    for r in res["rows"]:
        add(f"| {r['job']} | {r['partner']} | {r['measured']:.3f} | {r['predicted']:.3f} | "
            f"{100 * r['error']:+.1f}% |")
    add("")
    add("## Conclusion")
    add("")
    add("* **What the law gets right**: self pairs and pairs of GPU-bound, full-grid jobs run at "
        "about 0.5 each (residency serialises full-grid kernels: no double-booked SMs), and pairs "
        "of host-bound small-batch jobs keep r near 1 (each fills the other's idle GPU time).")
    add(f"* **What it cannot produce**: {100 * S['frac_measured_S_below_1']:.0f}% of measured pairs "
        "lose total throughput (S < 1, down to 0.35 for Recommendation self pairs). Under the new "
        "law the only loss beyond taking turns is the L2 penalty, bounded by 1/rho and only while "
        "kernels co-run; fair HBM sharing conserves the aggregate. Candidate causes outside the "
        "model: CPU / data-loader contention between the two training processes (A3C's self pair "
        "at 0.51 despite a mostly idle GPU), GPU memory pressure, and time-slicing if Gavel ran "
        "without MPS. These points are the large errors; they are reported, not tuned away.")
    add("* **Assumptions that matter most**: GPU busy fraction (c_F rule, and the 0.3 / 0.9 guesses "
        "for A3C / CycleGAN) and the grid width of small-batch jobs. m and WS matter only where "
        "kernels co-run (f < 1), i.e. little here.")
    add("")
    return "\n".join(L)


def main(argv=None):
    ap = argument_parser(__doc__, "gavel-mps-v100.md")
    ap.add_argument("--subset", type=int, help="simulate about this many pairs (every k-th)")
    args = ap.parse_args(argv)

    P = load_pairs()
    jobs = job_mapping(P)
    res = predict(P, jobs, os.path.abspath(args.gpumux), args.subset)
    S = summarise(P, res)
    Path(args.report).write_text(report(P, jobs, res, S))
    if args.json:
        js = {"n_jobs": len(P["names"]), "n_pairs": len(P["pairs"]), "n_dropped": len(P["dropped"]),
              "n_pairs_simulated": res["n_pairs_simulated"], "profile": PROFILE,
              "jobs": jobs, "rows": res["rows"], "solo_rel_err": res["solo_rel_err"], "summary": S}
        Path(args.json).write_text(json.dumps(js, indent=1))
    print(f"wrote {args.report}")
    print(f"gavel MPS: {res['n_pairs_simulated']} pairs, {S['n_points']} points, median |error| "
          f"{100 * S['median_abs_rel']:.1f}%, max {100 * S['max_abs_rel']:.0f}%, RMSE {S['rmse']:.3f}; "
          f"pred S in [{S['min_pred_S']:.3f}, {S['max_pred_S']:.3f}]; solo max err "
          f"{100 * S['max_solo_rel_err']:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
