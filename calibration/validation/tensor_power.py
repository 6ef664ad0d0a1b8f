#!/usr/bin/env python3
"""The power law's tensor term on the demoBERT calibration rows and DLE's Triton BERT-large
rows, computed independently of the product's implementation (issue 33 item 4).

Without it (models/gpu/power.hpp, docs/strategies.md "Power and clocks", `tensor_energy: 0`)
    P(x) = P_idle + P_sm a x^3 + E_byte b,            x = f / f_boost,
does not see what a busy SM does. The tensor term,
    P(x) = P_idle + (P_sm a + E_t R_t) x^3 + E_byte b,
with R_t the board's tensor FLOP rate at boost (FLOP/s) and E_t the energy of one tensor FLOP
at the boost voltage (J): a compute-bound kernel's FLOP rate goes as x and the energy per FLOP
as V^2 ~ x^2 (V ~ f, the law's own assumption), so the term scales as x^3 like P_sm's.

E_t from one published measurement (the law's closed form, nothing fitted):
  Horace He, "Strangely, Matrix Multiplications on GPUs Run Faster When Given 'Predictable'
  Data!" (thonking.ai, 2024, https://www.thonking.ai/p/strangely-matrix-multiplications):
  an 8192 x 8192 x 8192 FP16 matmul (PyTorch -> cuBLAS) on an A100 with its 400 W power limit
  runs at 295 TFLOPS with all-zero inputs and 257 TFLOPS with torch.randn inputs; the post
  attributes the gap to the power cap (data-dependent switching).
Reading: zeros switch no multiplier bits (E_t R_t ~ 0), so the zero run is at boost (the law
then gives 55 + 289 + E_byte b < 400 W: consistent); the randn run is the same work at
x = 257 / 295 with P(x) = TDP. So
    E_t = ((TDP - P_idle - E_byte b) / x^3 - P_sm) / R_t(1),   R_t(1) = 295 TFLOP/s,
with the A100 profiles' P_idle = 55 W and P_sm = 289 W (assumptions there) and b = 0.2 TB/s
(assumption: a 128 MiB x 3 GEMM that L2 tiles, 403 MB of compulsory traffic in 4.3 ms is
0.1 TB/s; 6 W at 31.2 pJ/B, +-6 W moves E_t by +-4 %). The A30 (same GA100 die and voltage
curve) takes E_t x (1440 / 1410)^2 (V^2 at its boost).

Per row: a run with `power: none` gives gpumux's own busy SM fraction a, HBM traffic b and
request throughput at boost, so R_t = tensor FLOPs per request (BERT's shapes, below) x
throughput; then the run is made with `power: {sm_dynamic: P_sm + E_t R_t / a, tensor_energy:
0pJ/FLOP}`, which gives exactly the clock of the law above through the old law: it must agree
with the product's own run (the profiles' `tensor_energy`, catalog FLOPs counted per kernel).

Usage: /usr/bin/python3 calibration/validation/tensor_power.py [--gpumux build/gpumux]
"""
import argparse
import csv
import json
import subprocess
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
ROWS = ROOT / "calibration" / "fit" / "solo-latency.csv"
GEMM_CLOCK = ROOT / "calibration" / "data" / "gemm-power" / "gemm-clock.csv"  # SOURCE.md there
A100_IDLE, A100_SM_DYNAMIC, HBM_J_PER_BYTE = 55.0, 289.0, 31.2e-12  # the A100 profiles' terms
HE_HBM_BYTES_PER_S = 0.2e12  # assumption (docstring): the GEMM's HBM traffic

# Catalog BERT shapes (layers, hidden, FFN width).
BERT = {"bert-base": (12, 768, 3072), "bert-large": (24, 1024, 4096)}
POWER = {  # profile: (boost MHz, P_sm W), the profiles' values
    "a100-sxm4-40gb": (1410.0, 289.0),
    "a100-80gb": (1410.0, 289.0),
    "a30-24gb": (1440.0, 159.0),
}


def tensor_energy_a100() -> float:
    """E_t, J per tensor FLOP at the A100's boost voltage, from He's zero and randn runs."""
    with open(GEMM_CLOCK) as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    zeros, randn = rows["he-a100-8192-zeros"], rows["he-a100-8192-randn"]
    rate, x = float(zeros["tflops"]) * 1e12, float(randn["tflops"]) / float(zeros["tflops"])
    room = float(randn["tdp_w"]) - A100_IDLE - HBM_J_PER_BYTE * HE_HBM_BYTES_PER_S
    return (room / x**3 - A100_SM_DYNAMIC) / rate


def tensor_flops(model: str, batch: int, seq: int) -> float:
    """GEMM and attention FLOPs of one request (2 per multiply-add)."""
    layers, d, ffn = BERT[model]
    tokens = batch * seq
    per_layer = 2 * tokens * (4 * d * d + 2 * d * ffn) + 4 * tokens * seq * d
    return layers * per_layer + 2 * batch * d * d


def run(binary: str, tmp: Path, row: dict, power) -> dict:
    gpu = {"name": "gpu0", "model": row["profile"], "sharing": {"mode": "exclusive"}}
    if power is not None:
        gpu["power"] = power
    workload = {"model": row["model"], "batch": int(row["batch"]), "seq_len": int(row["seq_len"]),
                "phase": "inference", "dtype": row["dtype"], "runtime": row["runtime"],
                "arrivals": {"process": "closed", "concurrency": 1, "think": "1ms"}}
    scenario = {"name": row["id"], "seed": 1, "duration": "10s", "warmup": "2s", "gpus": [gpu],
                "tenants": [{"name": "w", "device": "gpu0", "workload": workload}]}
    path = tmp / f"{row['id']}.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    out = subprocess.run([binary, "run", str(path), "--json"], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


class Recording:
    """catalog_published.Gpumux that adds `power` to every gpus[] entry and keeps the summary."""

    def __init__(self, inner, power):
        self.inner, self.power, self.binary, self.last = inner, power, inner.binary, None

    def run(self, scenario: dict, h5: bool = False):
        if self.power is not None:
            for gpu in scenario["gpus"]:
                gpu["power"] = self.power
        summary, err = self.inner.run(scenario, h5)
        self.last = summary
        return summary, err


def validation_rows(binary: str, e_a100: float) -> None:
    """DeepLearningExamples' Triton BERT-large rows (validation points, small_batch.csv) under
    the same experiment, through catalog_published.py's own scenario for each."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import catalog_published as cp
    print("\n| validation point | measured | without the term (clock) | this script's law (clock, "
          "R_t) |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        inner = cp.Gpumux(binary, Path(tmp))
        for row in cp.read("small_batch.csv"):
            if row["source"] != "dle-bertl-triton" or not row["id"].endswith("-avg"):
                continue
            boost, p_sm = POWER[row["profile"]]
            e_t = e_a100 * (boost / 1410.0) ** 2
            measured = float(row["value"])
            cells = []
            today = Recording(inner, {"tensor_energy": "0pJ/FLOP"})
            pred, why = cp.predict_small_batch(today, row)
            if pred is None:
                print(f"| {row['id']} | {measured} ms | {why} | |")
                continue
            cells.append((pred, today.last["devices"]["gpu0"].get("clock_mhz", boost)))
            free = Recording(inner, "none")
            cp.predict_small_batch(free, row)
            dev, ten = free.last["devices"]["gpu0"], free.last["tenants"]["w"]
            rate = tensor_flops("bert-large", int(row["batch"]), int(row["seq_len"])) * \
                ten["throughput_per_s"]
            effective = p_sm + e_t * rate / max(dev["sm_busy"], 1e-9)
            law = Recording(inner, {"sm_dynamic": f"{effective:.3f}W", "tensor_energy": "0pJ/FLOP"})
            pred_law, _ = cp.predict_small_batch(law, row)
            cells.append((pred_law, law.last["devices"]["gpu0"].get("clock_mhz", boost)))
            text = [f"{v:.2f} ms ({v / measured - 1:+.1%}, {c:.0f} MHz)" for v, c in cells]
            print(f"| {row['id']} | {measured} ms | {text[0]} | {text[1]}, {rate / 1e12:.0f} TFLOP/s |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpumux", default=str(ROOT / "build" / "gpumux"))
    args = ap.parse_args()
    e_a100 = tensor_energy_a100()
    print(f"E_t (A100, from He's 295 / 257 TFLOPS at 400 W): {e_a100 * 1e12:.3f} pJ/FLOP; "
          f"A30: {e_a100 * (1440 / 1410) ** 2 * 1e12:.3f} pJ/FLOP")
    print("| point | measured | without the term (clock) | this script's law (clock, R_t) | "
          "the product (clock) |")
    print("|---|---:|---:|---:|---:|")
    with open(ROWS) as f, tempfile.TemporaryDirectory() as tmp:
        for row in csv.DictReader(f):
            if row["profile"] not in POWER or row["model"] not in BERT:
                continue
            boost, p_sm = POWER[row["profile"]]
            e_t = e_a100 * (boost / 1410.0) ** 2
            measured = float(row["value"]) * 1e6
            today = run(args.gpumux, Path(tmp), row, {"tensor_energy": "0pJ/FLOP"})
            product = run(args.gpumux, Path(tmp), row, None)
            free = run(args.gpumux, Path(tmp), row, "none")
            dev, ten = free["devices"]["gpu0"], free["tenants"]["w"]
            rate = tensor_flops(row["model"], int(row["batch"]), int(row["seq_len"])) * \
                ten["throughput_per_s"]
            effective = p_sm + e_t * rate / max(dev["sm_busy"], 1e-9)
            law = run(args.gpumux, Path(tmp), row,
                      {"sm_dynamic": f"{effective:.3f}W", "tensor_energy": "0pJ/FLOP"})

            def cell(s):
                lat = s["tenants"]["w"]["latency_ns"]["mean"]
                clock = s["devices"]["gpu0"].get("clock_mhz", boost)
                return f"{lat / 1e6:.2f} ms ({lat / measured - 1:+.1%}, {clock:.0f} MHz)"
            print(f"| {row['id']} | {measured / 1e6:.2f} ms | {cell(today)} | {cell(law)}, "
                  f"{rate / 1e12:.0f} TFLOP/s | {cell(product)} |")
    validation_rows(args.gpumux, e_a100)


if __name__ == "__main__":
    main()
