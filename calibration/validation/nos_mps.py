#!/usr/bin/python3
"""Predict nos's MPS measurements (A100 80GB PCIe, 1/3/5/7 YOLOS-small pods) with gpumux's MPS law.

Data: calibration/validation/data/timeslicing/measurements.csv, rows nos-mps-N (nebuly-ai/nos,
demos/gpu-sharing-comparison/README.md, https://github.com/nebuly-ai/nos; see
data/timeslicing/SOURCE.md): N pods on one A100 80GB PCIe under MPS, each running YOLOS-small
inference back to back; mean inference time per pod.

Kernel mapping (first principles; assumptions labelled; nothing fitted to the 3/5/7-pod points):
* Input: HF YolosImageProcessor default resize (shortest edge 800, longest 1333); a 4:3 COCO-like
  image -> 800 x 1066 -> 50 x 66 = 3300 patches + 100 detection tokens: N_TOK = 3400 (assumption:
  the demo's image size is not published).
* YOLOS-small = DeiT-S encoder: 12 layers, d = 384, 6 heads, MLP 4d (Fang et al., "You Only Look
  at One Sequence", NeurIPS'21, arXiv:2106.00666). FLOPs per layer 8 N d^2 (QKV, out) + 16 N d^2
  (MLP) + 4 N^2 d (scores, AV) = 29.8 GFLOP -> 358 GFLOP. FP32 (TF32 off for matmul by default
  since PyTorch 1.12; assumption on the demo's version), at 80 % of the 19.5 TFLOP/s peak
  (assumption) -> 22.9 ms.
* Attention scores 6 x N^2 x 4 B = 277 MB per layer, moved about 6 times (bmm write, scale
  read+write, softmax read+write, AV read; HF eager attention) -> 20 GB over 12 layers at the
  PCIe card's 1,935 GB/s x 0.9 (assumption) = 11.5 ms; other elementwise (LayerNorm, GELU, adds
  on N x d and N x 4d) about 1 ms. GPU time per inference G = 35.4 ms, m = 12.5 / 35.4 = 0.35.
* K = 230 kernels (12 layers x ~17 eager ops + ~26 for patch embedding, position-embedding
  interpolation and the class/box heads; assumption from the HF module structure), all full grid
  (a 3400 x 384 GEMM output is 160 tiles of 128 x 64 > 108 SMs), working_set = one MLP weight
  matrix 384 x 1536 x 4 B = 2.4 MB; the CPU dispatches one op every 20 us (assumption: eager
  PyTorch per-op overhead) and runs ahead of the GPU.
* The rest of the measured solo time (87.96 ms, nos-mps-1) is CPU pre/post-processing (image
  decode, resize, normalise, box post-processing): the closed loop's `think` time. Each pod has
  its own CPU cores (24 vCPUs for 7 pods; assumption: no CPU contention).
* Predicted inference time per pod = gpumux request latency + think.

Profile: `a100-80gb` (SXM4 bandwidth 2,039 GB/s in the profile; the PCIe card has 1,935 GB/s: the
GPU time above is computed for the PCIe card and given to gpumux as kernel durations, so the
profile's bandwidth only enters through sharing, where it cancels).

Usage:  /usr/bin/python3 calibration/validation/nos_mps.py [--gpumux build/gpumux]
        [--report calibration/validation/nos-mps-a100.md] [--json out.json]
"""
from __future__ import annotations

import csv
import os
import statistics
import sys
import tempfile
from pathlib import Path

from common import argument_parser, run_scenario, write_outputs

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "timeslicing" / "measurements.csv"
PROFILE = "a100-80gb"

N_TOK, D, LAYERS = 3400, 384, 12
GEMM_FLOPS = LAYERS * (8 * N_TOK * D * D + 16 * N_TOK * D * D + 4 * N_TOK * N_TOK * D)
GEMM_MS = GEMM_FLOPS / (0.8 * 19.5e12) * 1e3
ATTN_BYTES = LAYERS * 6 * (6 * N_TOK * N_TOK * 4)
MEM_MS = ATTN_BYTES / (0.9 * 1935e9) * 1e3 + 1.0
G_MS = GEMM_MS + MEM_MS
M = MEM_MS / G_MS
K = 230
HOST_GAP_US = 20.0
WS = "2.4MB"


def load() -> dict:
    return {r["setup"]: float(r["measured"]) for r in csv.DictReader(DATA.open())
            if r["setup"].startswith("nos-mps-")}


def pod(i: int, think_ms: float) -> dict:
    d_ns = int(round(G_MS / K * 1e6))
    return {"name": f"pod{i}", "device": "gpu0", "memory": "2GiB",
            "workload": {"arrivals": {"process": "closed", "concurrency": 1,
                                      "think": f"{int(round(think_ms * 1e6))}ns"},
                         "request": {"kernels": [{"name": "op",
                                                  "duration": {"uniform": {"min": f"{int(d_ns * 0.9)}ns",
                                                                           "max": f"{int(d_ns * 1.1)}ns"}},
                                                  "sm_fraction": 1.0, "memory_bound": round(M, 4),
                                                  "working_set": WS, "repeat": K}],
                                     "host_gap": f"{HOST_GAP_US}us"}}}


def run(gpumux: str, n: int, think_ms: float, tmp: Path) -> float:
    scen = {"name": f"nos-mps-{n}", "seed": 1, "duration": "60s", "warmup": "5s",
            "gpus": [{"name": "gpu0", "model": PROFILE, "sharing": {"mode": "mps"}}],
            "tenants": [pod(i, think_ms) for i in range(n)]}
    out = run_scenario(gpumux, scen, tmp / f"nos-mps-{n}.yaml", timeout=300)["tenants"]
    return statistics.mean(t["latency_ns"]["mean"] / 1e6 for t in out.values())


def validate(gpumux: str) -> dict:
    meas = load()
    solo = meas["nos-mps-1"]
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        gpu_latency_solo = run(gpumux, 1, 1.0, tmp)     # think does not enter the GPU latency alone
        think = solo - gpu_latency_solo
        rows = []
        for n in (3, 5, 7):
            pred = run(gpumux, n, think, tmp) + think
            m = meas[f"nos-mps-{n}"]
            rows.append({"mechanism": "MPS", "source": "nos (A100 80GB PCIe)",
                         "setup": f"{n} YOLOS-small pods under MPS: mean inference time per pod",
                         "measured": m, "predicted": pred, "unit": "ms", "error": pred / m - 1,
                         "reason": ""})
    errs = [abs(r["error"]) for r in rows]
    return {"profile": PROFILE, "gpu_ms": G_MS, "gemm_ms": GEMM_MS, "mem_ms": MEM_MS, "m": M,
            "kernels": K, "think_ms": think, "gpu_latency_solo_ms": gpu_latency_solo,
            "rows": rows, "median_abs_error": statistics.median(errs), "max_abs_error": max(errs)}


def report(res: dict) -> str:
    L = ["# MPS validation: nos YOLOS-small pods on an A100 80GB PCIe", "",
         "Generated by `calibration/validation/nos_mps.py` (data: `data/timeslicing/measurements.csv`, "
         "rows nos-mps-N; source nebuly-ai/nos, https://github.com/nebuly-ai/nos, "
         "`demos/gpu-sharing-comparison/README.md`). No interference parameter; nothing fitted to "
         "the 3/5/7-pod points.", "",
         "## Kernel mapping", "",
         f"* GPU time per inference {res['gpu_ms']:.1f} ms = {res['gemm_ms']:.1f} ms of FP32 GEMMs "
         f"({GEMM_FLOPS / 1e9:.0f} GFLOP at 80 % of 19.5 TFLOP/s) + {res['mem_ms']:.1f} ms of "
         "memory-bound attention-score and elementwise traffic; m = "
         f"{res['m']:.2f}; {res['kernels']} full-grid kernels, working_set {WS}, CPU dispatch "
         f"every {HOST_GAP_US:g} us (derivation and assumptions in the script's docstring: "
         f"{N_TOK} tokens, DeiT-S dimensions from the YOLOS paper, HF eager attention).",
         f"* gpumux's solo GPU latency {res['gpu_latency_solo_ms']:.1f} ms; the rest of the measured "
         f"solo time, {res['think_ms']:.1f} ms, is CPU pre/post-processing (closed-loop think time).",
         "", "| setup | measured | predicted | error |", "|---|---:|---:|---:|"]
    for r in res["rows"]:
        L.append(f"| {r['setup']} | {r['measured']:.1f} ms | {r['predicted']:.1f} ms | "
                 f"{100 * r['error']:+.1f}% |")
    L += ["", f"Median |error| {100 * res['median_abs_error']:.1f}%, max "
          f"{100 * res['max_abs_error']:.1f}%.", "",
          "Reading: the measured times grow as about 50 + 38 N ms (CPU time plus N GPU shares: "
          "the pods' CPU phases do not hide behind the other pods' GPU work), while gpumux "
          "overlaps each pod's CPU think with the others' kernels and saturates at about N x G. "
          "The slope matches the first-principles G (35 ms); the intercept is what is missed. "
          "Candidate causes outside the model: CPU contention (each pod's PyTorch intra-op pool "
          "on 24 shared vCPUs), pods synchronising into lockstep. The time-slicing validation "
          "(timeslicing.py) maps the same pod as GPU-saturating for its whole 88 ms; the two "
          "mappings are not reconciled (the demo's GPU busy fraction is not published).", ""]
    return "\n".join(L)


def main(argv=None) -> int:
    args = argument_parser(__doc__, "nos-mps-a100.md").parse_args(argv)
    res = validate(os.path.abspath(args.gpumux))
    write_outputs(args, report(res), res)
    print(f"nos MPS: {len(res['rows'])} points, median |error| {100 * res['median_abs_error']:.1f}%, "
          f"max {100 * res['max_abs_error']:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
