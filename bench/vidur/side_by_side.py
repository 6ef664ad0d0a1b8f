#!/usr/bin/env python3
"""gpumux side by side with Vidur (microsoft/vidur): Llama-2-7B on one A100-80GB, 500 Poisson
requests of 512 prompt and 128 output tokens at 2, 5 and 10 per second (SOURCE.md).

Two gpumux scenarios per load, both with Vidur's scheduler (vLLM v0 prefill-first, batch cap
128, max_tokens_in_batch 4096, 16-token KV blocks):
  tables  iteration costs from Vidur's profiled operator tables (mlp_llama2_7b_a100_tp1.csv,
          attention_llama2_7b_a100_subset.csv) in gpumux's linear iteration form:
            prefill iteration, T tokens, chunk^2 = sum of P^2:
                L (lin(T) + attn_prefill(chunk^2))  ~  a + p T + q pairs   (pairs ~ chunk^2 / 2)
            decode iteration, b sequences holding K cached tokens in all:
                L (lin(b) + attn_decode(b, K / b))  ~  A + B b + C K
          with least-squares fits (lin: T 512-4096 for prefill; prefill attention: every row of
          the subset; the decode operators, lin and attention, over the batches the run reaches,
          b 1..B: a line through b 1-128 misstates a small batch, the attention's intercept
          most. B is found from gpumux's own first run on the 1-128 fit, Little's law:
          the table's first batch >= rate x p99 end-to-end latency, the sequences in flight
          at the slowest requests; nothing is fitted to Vidur's results). gpumux kernels: a once per
          iteration, p per prompt token with q per causal pair, and a decode step of A - a
          fixed, B per sequence, C per cached token (the decode kernel runs only in decode
          iterations, so both intercepts are exact).
  card    workload: {llm: {model: llama-2-7b}}: gpumux's own roofline from the model card.
Vidur's figures are the committed vidur_results.jsonl (its run with run_vidur_timed.sh).
Summaries are gpumux's (exact nearest-rank percentiles; TPOT = (e2e - TTFT) / (D - 1)), the
conventions the kit's summarize.py applied to Vidur's request_metrics.csv.

Usage: side_by_side.py [--gpumux BIN] [--out DIR] [--json]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = 32  # Llama-2-7B num_hidden_layers
LINEAR_OPS = ["input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
              "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"]
LOADS = (2, 5, 10)
# Vidur's results on these arrivals with its timings, re-run on the idle machine 2026-12-04
# (SOURCE.md; the same summaries as the 2026-12-03 re-run under load); the first run's summaries
# are vidur_results.jsonl.
VIDUR_RESULTS = "vidur_results_2026-12-04.jsonl"


def least_squares(rows, ys):
    """Coefficients c minimising |X c - y|^2 (normal equations, Gaussian elimination)."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)]
    for i in range(n):
        pivot = max(range(i, n), key=lambda k: abs(a[k][i]))
        a[i], a[pivot], b[i], b[pivot] = a[pivot], a[i], b[pivot], b[i]
        for k in range(i + 1, n):
            f = a[k][i] / a[i][i]
            a[k] = [x - f * y for x, y in zip(a[k], a[i])]
            b[k] -= f * b[i]
    c = [0.0] * n
    for i in reversed(range(n)):
        c[i] = (b[i] - sum(a[i][j] * c[j] for j in range(i + 1, n))) / a[i][i]
    return c


def cost_model(decode_max_batch=128):
    """Iteration-cost coefficients in ms from Vidur's tables (module docstring); the decode
    iteration's linear operators fitted over batches 1..decode_max_batch."""
    lin = {}
    with open(os.path.join(HERE, "mlp_llama2_7b_a100_tp1.csv")) as f:
        for row in csv.DictReader(f):
            lin[int(row["num_tokens"])] = sum(float(row[op + "_median_ms"]) for op in LINEAR_OPS)
    decode_rows, decode_ys, prefill_rows, prefill_ys = [], [], [], []
    with open(os.path.join(HERE, "attention_llama2_7b_a100_subset.csv")) as f:
        for row in csv.DictReader(f):
            if row["is_prefill"] == "True":
                if int(row["kv_cache_size"]) != 0:
                    continue  # chunked prefill over a cache: not in a vLLM prefill
                chunk = int(row["prefill_chunk_size"])
                prefill_rows.append([1.0, chunk * chunk / 2.0])
                prefill_ys.append(float(row["time_stats.attn_prefill.median"]))
            else:
                b, kv = int(row["batch_size"]), int(row["kv_cache_size"])
                if b > decode_max_batch:
                    continue
                decode_rows.append([1.0, b, b * kv])
                decode_ys.append(float(row["time_stats.attn_decode.median"]))
    lin_prefill = least_squares([[1.0, t] for t in lin if 512 <= t <= 4096],
                                [lin[t] for t in lin if 512 <= t <= 4096])
    decode_batches = [b for b in lin if 1 <= b <= decode_max_batch]
    lin_decode = least_squares([[1.0, b] for b in decode_batches], [lin[b] for b in decode_batches])
    if lin_decode[1] < 0:
        # An operator does not get faster with more sequences: over a flat stretch of the table
        # the least squares under slope >= 0 is the mean, slope 0.
        lin_decode = [sum(lin[b] for b in decode_batches) / len(decode_batches), 0.0]
    attn_prefill = least_squares(prefill_rows, prefill_ys)
    attn_decode = least_squares(decode_rows, decode_ys)
    a = LAYERS * (lin_prefill[0] + attn_prefill[0])
    return {
        "decode_fit_max_batch": max(decode_batches),
        "iteration_ms": a,
        "prefill_per_token_ms": LAYERS * lin_prefill[1],
        "prefill_per_pair_ms": LAYERS * attn_prefill[1],
        "decode_fixed_ms": LAYERS * (lin_decode[0] + attn_decode[0]) - a,
        "decode_per_sequence_ms": LAYERS * (lin_decode[1] + attn_decode[1]),
        "decode_per_cached_token_ms": LAYERS * attn_decode[2],
    }


def table_batches():
    """The batch sizes (num_tokens) of Vidur's linear-operator table."""
    with open(os.path.join(HERE, "mlp_llama2_7b_a100_tp1.csv")) as f:
        return sorted({int(row["num_tokens"]) for row in csv.DictReader(f)})


def scenario(trace, kind, m):
    last = float(open(trace).read().strip().splitlines()[-1].split(",")[0])
    # tables: Vidur's KV cache holds 16-bit K and V of 32 layers x 4096 = 512 KiB per token
    # beside 13.5 GB of weights (its memory planner leaves room for thousands of requests).
    memory = "" if kind == "card" else "    memory: 13.5GB\n"
    text = f"""name: vidur-side-by-side-{kind}
description: Vidur side by side (bench/vidur), Llama-2-7B on one A100-80GB, {kind} costs
seed: 1
duration: {int(last) + 2}s
gpus:
  - {{name: gpu0, model: a100-80gb, sharing: {{mode: exclusive}}}}
tenants:
  - name: llama2-7b
    device: gpu0
{memory}    workload:
      arrivals: {{process: trace, file: {trace}, format: csv}}
      batching: {{max_batch: 128, scheduler: vllm, max_tokens_in_batch: 4096, kv_block: 16,
                  engine_cpu: none}}
"""
    # engine_cpu: none: Vidur's recorded runs model no CPU time per iteration (its execution time
    # predictor's skip_cpu_overhead_modeling defaults to true), so neither side charges it.
    if kind == "card":
        return text + "      llm: {model: llama-2-7b, dtype: fp16, tp: 1}\n"
    return text + f"""      memory_per_token: 512KiB
      request:
        kernels:
          - {{name: iteration, duration: {m['iteration_ms'] * 1e6:.0f}ns}}
          - {{name: prefill, duration: {m['prefill_per_token_ms'] * 1e6:.0f}ns, per_token: input,
             per_context_token: {m['prefill_per_pair_ms'] * 1e9:.3f}ps, memory_bound: 0.15}}
          - {{name: decode-step, duration: {m['decode_fixed_ms'] * 1e6:.0f}ns,
             per_sequence: {m['decode_per_sequence_ms'] * 1e6:.0f}ns,
             per_context_token: {m['decode_per_cached_token_ms'] * 1e9:.3f}ps,
             repeat: output_tokens, memory_bound: 0.85}}
"""


def run_gpumux(binary, path, out_dir, repeat=1):
    """gpumux's summary of one scenario; wall_s is the least of `repeat` runs (every run's
    results are identical: a seeded run is deterministic, which this checks)."""
    result = os.path.join(out_dir, os.path.basename(path).replace(".yaml", ".json"))
    walls, tenants = [], None
    for _ in range(max(1, repeat)):
        proc = subprocess.run([binary, "run", path, "-o", result.replace(".json", ".h5"),
                               "--json"], capture_output=True, text=True, check=True)
        j = json.loads(proc.stdout)
        walls.append(j["wall_s"])
        if tenants is not None and j["tenants"] != tenants:
            raise SystemExit(f"{path}: two runs of the same seed differ")
        tenants = j["tenants"]
    t = list(tenants.values())[0]
    row = {"n": t["completed"], "wall_s": min(walls), "events": j["events"]}
    for label, key, scale in (("ttft_ms", "ttft_ns", 1e-6), ("tpot_ms", "tpot_ns", 1e-6),
                              ("e2e_s", "latency_ns", 1e-9)):
        row[label] = {q: round(t[key][q] * scale, 3) for q in ("mean", "p50", "p90", "p99")}
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpumux", default=os.environ.get("GPUMUX_BIN", "gpumux"))
    parser.add_argument("--out", default=None)
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--vidur-results", default=os.path.join(HERE, VIDUR_RESULTS),
                        help="Vidur's summaries (and timings, when recorded) per load")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each gpumux scenario N times and keep the least wall time")
    args = parser.parse_args()
    model = cost_model()
    vidur = {}
    with open(args.vidur_results) as f:
        for line in f:
            r = json.loads(line)
            vidur[r["who"]] = r
    out_dir = args.out or tempfile.mkdtemp(prefix="gpumux-vidur-")
    rows = []
    for qps in LOADS:
        trace = os.path.join(HERE, f"gpumux_n500_qps{qps}_P512_D128.csv")
        ref = vidur[f"vidur:vllm_qps{qps}"]
        for kind in ("tables", "card"):
            path = os.path.join(out_dir, f"vidur-{kind}-qps{qps}.yaml")
            with open(path, "w") as f:
                f.write(scenario(trace, kind, model))
            got = run_gpumux(args.gpumux, path, out_dir, args.repeat)
            if kind == "tables":
                # The decode batches this load reaches (Little's law on the first run): refit
                # the decode operators over them and run again.
                in_flight = qps * got["e2e_s"]["p99"]
                batches = sorted(b for b in table_batches() if b >= in_flight)
                limit = batches[0] if batches else 128
                load_model = cost_model(limit)
                with open(path, "w") as f:
                    f.write(scenario(trace, kind, load_model))
                got = run_gpumux(args.gpumux, path, out_dir, args.repeat)
                got["decode_fit_max_batch"] = limit
            errors = {}
            for metric in ("ttft_ms", "tpot_ms", "e2e_s"):
                for q in ("mean", "p50", "p99"):
                    errors[f"{metric}.{q}"] = round(100 * (got[metric][q] / ref[metric][q] - 1), 1)
            row = {"qps": qps, "costs": kind, "gpumux": got, "vidur": ref, "error_pct": errors}
            timing = ref.get("timing_s")
            if timing:
                # Vidur's event loop (Simulator.run) and its whole run without the predictors'
                # one-off training (import, predictor load, run, write), against gpumux's run.
                wall = max(got["wall_s"], 1e-9)
                whole = timing["import_config_s"] + timing["run_s"] + timing["write_s"] + (
                    timing["init_s"] if timing["init_s"] < 60 else 0)
                row["speed_ratio"] = {"run": round(timing["run_s"] / wall),
                                      "whole": round(whole / wall) if timing["init_s"] < 60
                                      else None}
            rows.append(row)
    if args.json:
        print(json.dumps({"cost_model_ms": model}))
        for r in rows:
            print(json.dumps(r))
        return 0
    print("cost model from Vidur's tables (ms):",
          ", ".join(f"{k} {v:.6g}" for k, v in model.items()))
    print(f"{'qps':>3} {'costs':<6} " + " ".join(
        f"{m + '.' + q:>14}" for m in ("ttft", "tpot", "e2e") for q in ("p50", "p99")) +
        f" {'wall_s':>8} {'x loop':>7} {'x whole':>7}")
    for r in rows:
        cells = []
        for m in ("ttft_ms", "tpot_ms", "e2e_s"):
            for q in ("p50", "p99"):
                cells.append(f"{r['gpumux'][m][q]:>7.4g}({r['error_pct'][m + '.' + q]:+.1f}%)")
        ratio = r.get("speed_ratio", {})
        loop, whole = ratio.get("run"), ratio.get("whole")
        print(f"{r['qps']:>3} {r['costs']:<6} " + " ".join(f"{c:>14}" for c in cells) +
              f" {r['gpumux']['wall_s']:>8.4f} {loop if loop is not None else '-':>7}"
              f" {whole if whole is not None else '-':>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
