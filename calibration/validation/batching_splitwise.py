#!/usr/bin/python3
"""Continuous-batching iteration times against the Splitwise perf model (A100 and H100).

gpumux's batched serving (`batching: {max_batch: N}`) runs one iteration per generated token for
the whole batch; a decode kernel written as `{duration: D, per_sequence: P}` lasts D + P x batch
(models/run/runner.hpp). Splitwise measured the per-token (decode iteration) time of llama2-70b
and bloom-176b at batch sizes 1-64 on DGX-A100 and DGX-H100 (prompt 512, 128 output tokens;
data/splitwise/perf_model.csv, MIT; Patel et al., ISCA'24).

Method, leave one batch size out: for each (model, GPU, tensor parallelism) and each batch size b,
fit D and P by least squares to the other batch sizes, then run gpumux through the CLI with
`max_batch: b` and a closed loop of b clients (every request 64 output tokens, no prefill
kernel), and read the iteration time as mean latency / 64 less the launch overhead. The error is
predicted / measured - 1. The check is on the linear batch law: the measured curves are flat
while the step streams the weights (memory-bound) and steepen once the batch makes it
compute-bound, so the law misses the knee.

    /usr/bin/python3 calibration/validation/batching_splitwise.py [--gpumux build/gpumux]
        [--report calibration/validation/batching-splitwise.md] [--json out.json]
"""
from __future__ import annotations

import csv
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path

from common import HERE, argument_parser, run_scenario, write_outputs

DATA = HERE / "data" / "splitwise" / "perf_model.csv"
MODELS = {"a100-80gb": ("a100-80gb", 1860), "h100-80gb": ("h100-sxm-80gb", 2370)}  # launch ns
TOKENS = 64


def curves():
    """{(model, hardware, tp): {batch: mean token_time ms}} at prompt 512, 128 output tokens."""
    times = defaultdict(list)
    with open(DATA) as f:
        for r in csv.DictReader(f):
            if r["hardware"] in MODELS and r["prompt_size"] == "512" and r["token_size"] == "128":
                times[(r["model"], r["hardware"], int(r["tensor_parallel"]),
                       int(r["batch_size"]))].append(float(r["token_time"]))
    out = defaultdict(dict)
    for (model, hw, tp, b), v in times.items():
        out[(model, hw, tp)][b] = statistics.mean(v)
    return {k: v for k, v in out.items() if len(v) >= 3}


def fit(points):
    """Least squares t = D + P b."""
    n = len(points)
    mb = sum(b for b, _ in points) / n
    mt = sum(t for _, t in points) / n
    var = sum((b - mb) ** 2 for b, _ in points)
    p = sum((b - mb) * (t - mt) for b, t in points) / var
    return mt - p * mb, p


def simulate(gpumux, work: Path, name: str, model: str, launch_ns: int, d_ms: float,
             p_ms: float, batch: int) -> float:
    scenario = {
        "name": name, "seed": 1, "duration": "60s",
        "gpus": [{"name": "gpu0", "model": model, "sharing": {"mode": "exclusive"}}],
        "tenants": [{"name": "llm", "device": "gpu0", "workload": {
            "arrivals": {"process": "closed", "concurrency": batch, "think": "0ms"},
            "batching": {"max_batch": batch},
            "tokens": {"input": 1, "output": TOKENS},
            "request": {"kernels": [{
                "name": "decode-step", "duration": f"{max(d_ms, 0.001) * 1000:.3f}us",
                "per_sequence": f"{max(p_ms, 0.0) * 1000:.3f}us", "repeat": "output_tokens",
                "sm_fraction": 1.0, "memory_bound": 0.8}]}}}],
    }
    summary = run_scenario(gpumux, scenario, work / f"{name}.yaml")
    mean_ns = summary["tenants"]["llm"]["latency_ns"]["mean"]
    return (mean_ns / TOKENS - launch_ns) / 1e6


# Splitwise's models that have an LLM card (calibration/workloads/llm/): the card's own roofline
# is run at every batch as well, nothing fitted.
CARDS = {"llama2-70b": "llama-2-70b"}


def simulate_card(gpumux, work: Path, name: str, model: str, card: str, tp: int,
                  batch: int) -> float:
    """TPOT p50 (ms) of `batch` closed-loop clients of 512-token prompts and 128 output tokens
    on the card at tensor parallelism `tp`: they arrive together, prefill, decode in one batch
    and finish together, so every decode iteration holds `batch` sequences, as Splitwise's."""
    devices = [f"gpu{i}" for i in range(tp)]
    # allow_large: the work estimate assumes requests of the least time a closed loop could
    # take; these decode 128 tokens each (one to a few rounds in 20 s).
    scenario = {
        "name": name, "seed": 1, "duration": "20s", "allow_large": True,
        "gpus": [{"name": d, "model": model, "sharing": {"mode": "exclusive"}} for d in devices],
        "tenants": [{"name": "llm", "device": devices if tp > 1 else devices[0], "workload": {
            "arrivals": {"process": "closed", "concurrency": batch, "think": "0ms"},
            "batching": {"max_batch": batch},
            "tokens": {"input": 512, "output": 128},
            "llm": {"model": card, "dtype": "fp16", "tp": tp}}}],
    }
    summary = run_scenario(gpumux, scenario, work / f"{name}-card.yaml")
    return summary["tenants"]["llm"]["tpot_ns"]["p50"] / 1e6


def main():
    parser = argument_parser(__doc__, "batching-splitwise.md")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for (model, hw, tp), curve in sorted(curves().items()):
            for b, measured in sorted(curve.items()):
                d, p = fit([(x, t) for x, t in curve.items() if x != b])
                gpu, launch = MODELS[hw]
                predicted = simulate(args.gpumux, work, f"{model}-{hw}-{tp}-{b}", gpu, launch,
                                     d, p, b)
                card = None
                if model in CARDS:
                    card = simulate_card(args.gpumux, work, f"{model}-{hw}-{tp}-{b}", gpu,
                                         CARDS[model], tp, b)
                rows.append({"model": model, "hardware": hw, "tp": tp, "batch": b,
                             "measured_ms": measured, "predicted_ms": predicted,
                             "error": predicted / measured - 1, "D_ms": d, "P_ms": p,
                             "card_ms": card,
                             "card_error": None if card is None else card / measured - 1})
    errors = [abs(r["error"]) for r in rows]
    card_errors = [abs(r["card_error"]) for r in rows if r["card_error"] is not None]
    summary = {"points": len(rows), "median_abs_error": statistics.median(errors),
               "max_abs_error": max(errors), "card_points": len(card_errors),
               "card_median_abs_error": statistics.median(card_errors),
               "card_max_abs_error": max(card_errors)}
    lines = ["# Continuous-batching iteration time: Splitwise A100 / H100", "",
             "Generated by `calibration/validation/batching_splitwise.py`: decode iteration time",
             "per batch size, gpumux's `duration + per_sequence x batch` fitted leave-one-batch-out",
             "and simulated through the CLI (`batching: {max_batch: b}`, b closed-loop clients),",
             "against Splitwise's measured per-token time (prompt 512; Patel et al., ISCA'24, MIT).",
             "", f"{summary['points']} points: median |error| {summary['median_abs_error']:.1%}, "
             f"max {summary['max_abs_error']:.1%}. The largest errors are at the ends of each "
             "curve (batch 1 and 64): the measured time is flat while decode streams the weights "
             "and steepens past batch ~16-32, which a straight line cannot follow.", "",
             f"The `llama-2-70b` card's own roofline (nothing fitted: `workload: {{llm: {{model: "
             f"llama-2-70b, tp: N}}}}`, b clients of 512-token prompts decoding together, TPOT "
             f"p50): {summary['card_points']} points, median |error| "
             f"{summary['card_median_abs_error']:.1%}, max {summary['card_max_abs_error']:.1%}. "
             "The card stays nearly flat to batch 64 (+2.4 ms at A100 TP 8), as its roofline "
             "must: each GPU reads 17 GB of weights per token (9.7 ms) while batch 64's GEMMs "
             "need 1.1 TFLOP (3.5 ms at the fp16 peak) and its KV cache 1.5 GB (0.9 ms), so "
             "decode is still memory-bound. Splitwise's per-token time grows 26 ms over the "
             "same range and sits 10-30 ms above the card at batch 1 (the per-layer overhead "
             "of the TPOT points in catalog-published.md): neither is GPU work by this "
             "arithmetic, and no source here says what the profiled engine spends it on. The "
             "linear law, fitted to the measured curve, carries both; the card carries neither.",
             "",
             "| model | GPU | TP | batch | measured ms | linear law ms | error | card ms | "
             "card error |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        card = ("— | —" if r["card_ms"] is None
                else f"{r['card_ms']:.2f} | {r['card_error']:+.1%}")
        lines.append(f"| {r['model']} | {r['hardware']} | {r['tp']} | {r['batch']} | "
                     f"{r['measured_ms']:.2f} | {r['predicted_ms']:.2f} | {r['error']:+.1%} | "
                     f"{card} |")
    write_outputs(args, "\n".join(lines) + "\n", {"rows": rows, "summary": summary})
    print(f"batching: {summary['points']} points, median |error| "
          f"{summary['median_abs_error']:.1%}, max {summary['max_abs_error']:.1%}; card "
          f"{summary['card_points']} points, median |error| "
          f"{summary['card_median_abs_error']:.1%}, max {summary['card_max_abs_error']:.1%}")


if __name__ == "__main__":
    main()
