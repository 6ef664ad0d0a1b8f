#!/usr/bin/python3
"""Validate gpumux's MIG scaling law against MISO's A100-40GB per-slice training latencies.

Model under test (models/gpu/kernel_run.hpp): a kernel with solo time D on the whole GPU, grid width f
(sm_fraction) and roofline position m (memory_bound) takes, alone on a MIG instance with S SMs and
B = memory_slices / 8 of the bandwidth,

    t = D * ((1 - m) / sigma + m / beta),  sigma = min(1, S / (f * S_gpu)),  beta = min(1, B).

Data: calibration/validation/data/miso/mig_latency/<slice>_<model>_train<batch>.json (MISO, SoCC'22,
MIT licence, see data/miso/SOURCE.md): per-iteration training latencies in seconds, keyed by epoch.

For each model the script
  1. takes a robust iteration time per slice (median over epochs 1.., epoch 0 is warm-up),
  2. fits (D, m) with f = 1 by least squares on log-times over every slice measured, and (D, m, f),
  3. compares with two one-parameter baselines: "1/7 per compute slice" (t ∝ 7 / compute slices)
     and "SM-count only" (m = 0, f = 1: t ∝ S_gpu / S),
  4. does leave-one-slice-out: fit on the other slices, predict the held-out one,
  5. also fits t = t0 + D * g(m): a closed-loop `think` time t0 per iteration (host time that does
     not shrink with SMs) plus one f = 1 kernel, to show what a fixed per-iteration cost explains.
End to end, it writes a scenario with the fitted kernels of one model (with and without think) on
a100-sxm4-40gb MIG instances, runs `gpumux run --json` and checks the simulated latency against
the formula and the request count against one request per think + latency.

Usage:  /usr/bin/python3 calibration/validation/miso_mig.py [--gpumux build/gpumux]
        [--report calibration/validation/miso-mig-a100.md] [--json results.json] [--no-e2e]
Writes the Markdown report (default: next to this script) and, with --json, the numbers.
"""
from __future__ import annotations

import json
import math
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import minimize_scalar

from common import argument_parser, run_scenario

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = HERE / "data" / "miso" / "mig_latency"
PROFILE = REPO / "calibration" / "profiles" / "a100-sxm4-40gb.yaml"
PROFILE_NAME = "a100-sxm4-40gb"
E2E_MODEL = "transformer_train32"  # the model used for the end-to-end simulator check

FILE_RE = re.compile(r"^(?P<slice>\dg\.\d+gb)_(?P<model>.+)\.json$")


# ---------------------------------------------------------------------------------------------
# Device geometry: read from the same profile the simulator embeds.
def load_geometry(path: Path = PROFILE) -> dict:
    prof = yaml.safe_load(path.read_text())
    gpu_sms = int(prof["sms"]["value"])
    mem_slices = int(prof["mig"]["memory_slices"]["value"])
    compute_slices = int(prof["mig"]["compute_slices"]["value"])
    slices = {}
    for p in prof["mig"]["profiles"]:
        slices[p["name"]] = {
            "sms": int(p["sms"]),
            "bandwidth": p["memory_slices"] / mem_slices,
            "compute_slices": int(p["compute_slices"]),
        }
    launch = prof["launch_overhead"]["value"]
    m = re.fullmatch(r"([0-9.]+)\s*(ns|us|ms)", str(launch))
    launch_ns = float(m.group(1)) * {"ns": 1.0, "us": 1e3, "ms": 1e6}[m.group(2)]
    return {"gpu_sms": gpu_sms, "compute_slices": compute_slices, "slices": slices,
            "launch_overhead_ns": launch_ns}


def stretch(geo: dict, slice_name: str, m: float, f: float = 1.0) -> float:
    """g = t / D for a kernel (m, f) alone on a MIG instance: the inverse of rate_max."""
    s = geo["slices"][slice_name]
    sigma = min(1.0, s["sms"] / (f * geo["gpu_sms"]))
    beta = min(1.0, s["bandwidth"])
    return (1.0 - m) / sigma + m / beta


# ---------------------------------------------------------------------------------------------
# Data
def load_measurements(data_dir: Path = DATA) -> dict:
    """{model: {slice: {"t": robust s, "n": iterations used, "iqr_rel": ..., "t_all": ...}}}"""
    out: dict = {}
    for path in sorted(data_dir.glob("*.json")):
        mt = FILE_RE.match(path.name)
        if not mt:
            continue
        epochs = json.loads(path.read_text())
        keys = sorted(epochs, key=int)
        # Warm-up: epoch 0 holds the multi-second first iteration (CUDA context, cuDNN autotune)
        # and the ramp that follows; every file has >= 5 epochs, so drop epoch 0 entirely.
        kept = np.concatenate([np.asarray(epochs[k], float) for k in keys[1:]])
        everything = np.concatenate([np.asarray(epochs[k], float) for k in keys])
        q1, med, q3 = np.percentile(kept, [25, 50, 75])
        out.setdefault(mt["model"], {})[mt["slice"]] = {
            "t": float(med),
            "n": int(kept.size),
            "epochs": len(keys),
            "iqr_rel": float((q3 - q1) / med),
            # Sensitivity of the warm-up rule: median of all but the first 10 iterations.
            "t_alt": float(np.median(everything[10:])),
        }
    return out


# ---------------------------------------------------------------------------------------------
# Fits. All fit log t = log D + log g(slice; params) in least squares; for fixed shape params the
# optimal log D is the mean residual, so only the shape params are searched.
def _fit_shape(slices, times, shape, grid_axes):
    """Grid search then local refinement over shape params; returns (params, logD, rms)."""
    logt = np.log(np.asarray(times))

    def sse(params):
        lg = np.log([shape(s, *params) for s in slices])
        r = logt - lg
        r = r - r.mean()
        return float(r @ r)

    best = None
    for params in np.array(np.meshgrid(*grid_axes, indexing="ij")).reshape(len(grid_axes), -1).T:
        v = sse(params)
        if best is None or v < best[0] - 1e-15:
            best = (v, tuple(params))
    params = list(best[1])
    # Coordinate refinement within one grid step (bounded).
    steps = [ax[1] - ax[0] if len(ax) > 1 else 0 for ax in grid_axes]
    for _ in range(4):
        for i, ax in enumerate(grid_axes):
            if len(ax) < 2:
                continue
            lo = max(ax[0], params[i] - steps[i])
            hi = min(ax[-1], params[i] + steps[i])

            def f1(x, i=i):
                p = list(params)
                p[i] = x
                return sse(p)

            res = minimize_scalar(f1, bounds=(lo, hi), method="bounded",
                                  options={"xatol": 1e-7})
            if res.fun <= sse(params):
                params[i] = float(res.x)
    lg = np.log([shape(s, *params) for s in slices])
    logD = float(np.mean(logt - lg))
    rms = math.sqrt(sse(params) / len(slices))
    return tuple(params), logD, rms


M_GRID = np.linspace(0.0, 1.0, 201)
F_GRID = np.linspace(0.05, 1.0, 96)
ZERO = np.array([0.0])


def _fit_think(slices, times, shape, m_axis):
    """t = t0 + D * shape(s, m): for each m, linear least squares on relative error in (t0, D),
    both >= 0 (closed-loop `think` time t0 + one kernel (D, m); not a log fit because t0 is
    additive). Returns (m, t0, D, rms_rel)."""
    t = np.asarray(times, float)
    best = None
    for m in m_axis:
        g = np.array([shape(s, m) for s in slices])
        A = np.stack([np.ones_like(g), g], 1) / t[:, None]
        sol, *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)
        if sol[0] < 0:  # t0 = 0: scale-only fit
            u = g / t
            sol = np.array([0.0, float(u.sum() / (u @ u))])
        if sol[1] <= 0:
            continue
        r = A @ sol - 1.0
        v = float(r @ r)
        if best is None or v < best[0] - 1e-15:
            best = (v, float(m), float(sol[0]), float(sol[1]))
    v, m, t0, D = best
    return m, t0, D, math.sqrt(v / len(slices))


# name -> (params, description); every predictor is something gpumux can express except naive.
PREDICTORS = {
    "naive-1/7": (1, "t = D7 * 7 / compute slices (\"1/7 of the GPU per slice\")"),
    "sm-only": (1, "gpumux with m = 0, f = 1: t = D * S_gpu / S"),
    "gpumux(D,m)": (2, "gpumux, f = 1: fitted D, m (the brief's model)"),
    "sm-only(D,f)": (2, "gpumux with m = 0: fitted D, f (is the bandwidth term needed once f is free?)"),
    "gpumux(D,m,f)": (3, "gpumux: fitted D, m, f"),
    "gpumux(D,m)+think": (3, "gpumux, f = 1, plus a closed-loop think time t0 per iteration "
                              "(host time that does not shrink with SMs): t = t0 + D*g(m)"),
}


def fit(key, geo, slices, times):
    """Fit predictor `key`; returns {"params", "D", "rms_log", "predict"}."""
    times = np.asarray(times, float)
    logt = np.log(times)
    if key == "gpumux(D,m)+think":
        m, t0, D, rms = _fit_think(slices, times, lambda s, m: stretch(geo, s, m, 1.0), M_GRID)
        pred = lambda s: t0 + D * stretch(geo, s, m, 1.0)  # noqa: E731
        r = np.log([pred(s) for s in slices]) - logt
        return {"params": {"m": m, "t0": t0}, "D": D, "rms_log": float(np.sqrt(r @ r / len(r))),
                "predict": pred}
    if key in ("naive-1/7", "sm-only"):
        shape = ((lambda s: geo["compute_slices"] / geo["slices"][s]["compute_slices"])
                 if key == "naive-1/7" else (lambda s: stretch(geo, s, 0.0, 1.0)))
        lg = np.log([shape(s) for s in slices])
        logD = float(np.mean(logt - lg))
        r = logt - lg - logD
        return {"params": {}, "D": math.exp(logD), "rms_log": float(np.sqrt(r @ r / len(r))),
                "predict": lambda s: math.exp(logD) * shape(s)}
    axes = {"gpumux(D,m)": [M_GRID, np.array([1.0])], "sm-only(D,f)": [ZERO, F_GRID],
            "gpumux(D,m,f)": [M_GRID, F_GRID]}[key]
    shape = lambda s, m, f: stretch(geo, s, m, f)  # noqa: E731
    params, logD, rms = _fit_shape(slices, times, shape, axes)
    names = [n for n, ax in zip(["m", "f"], axes) if len(ax) > 1]
    return {"params": {n: params[i] for i, n in enumerate(["m", "f"]) if n in names},
            "D": math.exp(logD), "rms_log": rms,
            "predict": lambda s: math.exp(logD) * shape(s, *params)}


# ---------------------------------------------------------------------------------------------
def analyse(geo, meas):
    order = sorted(geo["slices"], key=lambda s: geo["slices"][s]["sms"])
    results = {}
    for name in sorted(meas):
        slices = [s for s in order if s in meas[name]]
        times = [meas[name][s]["t"] for s in slices]
        per = {}
        for key, (npar, _desc) in PREDICTORS.items():
            full = fit(key, geo, slices, times)
            rel = {s: full["predict"](s) / meas[name][s]["t"] - 1 for s in slices}
            loo = {}
            for i, s in enumerate(slices):
                rest = [x for j, x in enumerate(slices) if j != i]
                rest_t = [x for j, x in enumerate(times) if j != i]
                sub = fit(key, geo, rest, rest_t)
                loo[s] = sub["predict"](s) / meas[name][s]["t"] - 1
            per[key] = {"params": full["params"], "D": full["D"], "rms_log": full["rms_log"],
                        "pred": {s: full["predict"](s) for s in slices},
                        "rel_err": rel, "loo_err": loo, "n_params": npar,
                        "loo_exact": len(slices) - 1 <= npar}
        # f identifiability: f values whose best (D, m) fit is within 25 % of the best rms.
        best_rms = per["gpumux(D,m,f)"]["rms_log"]
        ok_f = []
        for fval in F_GRID:
            _, _, r = _fit_shape(slices, times, lambda s, m, f: stretch(geo, s, m, f),
                                 [M_GRID, np.array([fval])])
            if r <= max(1.25 * best_rms, best_rms + 0.01):
                ok_f.append(float(fval))
        per["gpumux(D,m,f)"]["f_range"] = [min(ok_f), max(ok_f)]
        results[name] = {"slices": slices, "times": times, "models": per}
    return results


def summary(results):
    out = {}
    for key in PREDICTORS:
        fit_errs = [abs(e) for r in results.values() for e in r["models"][key]["rel_err"].values()]
        loo_errs = [abs(e) for r in results.values() for e in r["models"][key]["loo_err"].values()]
        per = {}
        for name, r in results.items():
            le = [abs(e) for e in r["models"][key]["loo_err"].values()]
            fe = [abs(e) for e in r["models"][key]["rel_err"].values()]
            per[name] = {"fit_median_abs": float(np.median(fe)), "fit_max_abs": float(max(fe)),
                         "loo_median_abs": float(np.median(le)), "loo_max_abs": float(max(le))}
        out[key] = {"fit_median_abs": float(np.median(fit_errs)),
                    "fit_max_abs": float(max(fit_errs)),
                    "loo_median_abs": float(np.median(loo_errs)),
                    "loo_max_abs": float(max(loo_errs)), "n_loo": len(loo_errs),
                    "per_model": per}
    return out


# ---------------------------------------------------------------------------------------------
# End to end: the simulator must reproduce the formula for the fitted kernels.
E2E_DURATION_NS = 3_000_000_000


def e2e_check(geo, results, gpumux: str, model: str = E2E_MODEL) -> dict:
    """One closed-loop tenant (concurrency 1) per (fit, slice), each on its own single-instance
    GPU: the plain gpumux(D,m) fit, and the gpumux(D,m)+think fit with `think: t0`."""
    r = results[model]
    variants = []
    for key in ("gpumux(D,m)", "gpumux(D,m)+think"):
        fr = r["models"][key]
        variants.append({"fit": key, "D_ns": int(round(fr["D"] * 1e9)),
                         "m": round(fr["params"]["m"], 6),
                         "think_ns": int(round(fr["params"].get("t0", 0.0) * 1e9))})
    lines = [f"name: miso-e2e-{model.replace('_', '-')}",
             "description: generated by calibration/validation/miso_mig.py (end-to-end check)",
             "seed: 1", f"duration: {E2E_DURATION_NS}ns", "gpus:"]
    cases = [(v, s) for v in variants for s in r["slices"]]
    for i, (_v, s) in enumerate(cases):
        lines.append(f"  - {{name: g{i}, model: {PROFILE_NAME}, mig: [{s}], "
                     "sharing: {mode: exclusive}}")
    lines.append("tenants:")
    for i, (v, s) in enumerate(cases):
        think = f", think: {v['think_ns']}ns" if v["think_ns"] else ""
        lines += [f"  - name: t{i}", f"    device: g{i}/0", "    memory: 1GiB",
                  "    workload:", f"      arrivals: {{process: closed, concurrency: 1{think}}}",
                  f"      request: {{kernels: [{{name: iteration, duration: {v['D_ns']}ns, "
                  f"sm_fraction: 1.0, memory_bound: {v['m']}}}]}}"]
    text = "\n".join(lines) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        out = run_scenario(gpumux, text, Path(tmp) / "miso-e2e.yaml", timeout=60)
    rows = []
    for i, (v, s) in enumerate(cases):
        t = out["tenants"][f"t{i}"]
        # Closed loop, concurrency 1, no host gap: latency = launch overhead + D * g (ceil to ns);
        # a request starts every think + latency, the first at 0.
        formula = geo["launch_overhead_ns"] + v["D_ns"] * stretch(geo, s, v["m"])
        period = v["think_ns"] + t["latency_ns"]["p50"]
        rows.append({"fit": v["fit"], "slice": s, "sim_ns": t["latency_ns"]["p50"],
                     "sim_max_ns": t["latency_ns"]["max"], "formula_ns": formula,
                     "rel_diff": max(abs(t["latency_ns"][q] - formula) / formula
                                     for q in ("p50", "max", "mean")),
                     "requests": t["requests"],
                     "requests_expected": E2E_DURATION_NS // period + 1,
                     "iteration_ns": v["think_ns"] + formula,
                     "measured_ns": r["times"][r["slices"].index(s)] * 1e9})
    return {"model": model, "variants": variants, "scenario": text, "rows": rows,
            "max_rel_diff": max(x["rel_diff"] for x in rows),
            "requests_match": all(x["requests"] == x["requests_expected"] for x in rows)}


# ---------------------------------------------------------------------------------------------
def pct(x):
    return "—" if x is None else f"{100 * x:+.1f}%"


def apct(x):
    return "—" if x is None else f"{100 * x:.1f}%"


def fmt_params(fr):
    p = [f"D = {1e3 * fr['D']:.2f} ms"]
    for k, v in fr["params"].items():
        p.append(f"{k} = {1e3 * v:.2f} ms" if k == "t0" else f"{k} = {v:.3f}")
    return ", ".join(p)


def report(geo, meas, results, summ, e2e) -> str:
    L = []
    add = L.append
    add("# MIG scaling: gpumux vs MISO A100-40GB measurements")
    add("")
    add("Generated by `/usr/bin/python3 calibration/validation/miso_mig.py`; do not edit by hand.")
    add("Data: MISO (Li et al., SoCC'22): per-iteration training latencies of one job alone on each")
    add("A100-40GB MIG slice, copied in `data/miso/` (MIT; see `data/miso/SOURCE.md`). Geometry read")
    add(f"from `calibration/profiles/{PROFILE_NAME}.yaml` (S_gpu = {geo['gpu_sms']} SMs; bandwidth "
        "B = memory slices / 8), the same file the simulator embeds.")
    add("")
    add("Law under test (models/gpu/kernel_run.hpp): `t = D * g`, `g = (1-m)/sigma + m/beta`, "
        "`sigma = min(1, S/(f*S_gpu))`, `beta = min(1, B)`. (D, m, f) fits are least squares on "
        "log-times; the `+think` fit is least squares on relative error.")
    add("")
    add("Predictors (all but naive are expressible in a gpumux scenario):")
    add("")
    for k, (npar, desc) in PREDICTORS.items():
        add(f"* `{k}` ({npar} parameter{'s' if npar > 1 else ''}): {desc}")
    add("")
    add(f"On the A100 every MIG compute slice has exactly {geo['slices']['1g.5gb']['sms']} SMs "
        f"(7g = {geo['slices']['7g.40gb']['sms']} = 7 x 14), so `naive-1/7` and `sm-only` "
        "predict the same scaling and get identical errors.")
    add("")
    add("## Measured iteration times")
    add("")
    add("Robust time = median of all iterations after epoch 0 (epoch 0 holds the 4-14 s first "
        "iteration and the warm-up ramp). `alt` = median of all but the first 10 iterations "
        "(sensitivity to the warm-up rule). Latencies are logged at 0.1 ms resolution. Batch "
        "sizes x iterations per epoch: resnet 128 x 391 = CIFAR-10-sized epochs (32x32 images), "
        "transformer 32 x 25, bert 4 x 250; bert has no 1g.5gb file.")
    add("")
    add("| model | slice | SMs | BW | iterations | median (ms) | IQR/median | alt (ms) |")
    add("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        for s in r["slices"]:
            d = meas[name][s]
            g = geo["slices"][s]
            add(f"| {name} | {s} | {g['sms']} | {g['bandwidth']:.3f} | {d['n']} | "
                f"{1e3 * d['t']:.2f} | {100 * d['iqr_rel']:.1f}% | {1e3 * d['t_alt']:.2f} |")
    add("")
    add("## Fits per model")
    add("")
    add("Cells: prediction error of the full fit (in-sample) / of the leave-one-slice-out fit "
        "(fitted on the other slices, predicting this one). A `*` marks LOO fits with as many "
        "parameters as remaining points (exact interpolation, fragile).")
    add("")
    for name, r in results.items():
        mods = r["models"]
        add(f"### {name}")
        add("")
        for k, fr in mods.items():
            extra = ""
            if k == "gpumux(D,m,f)":
                lo, hi = fr["f_range"]
                extra = (f"; f within 25% of the best rms: [{lo:.2f}, {hi:.2f}]"
                         + (" — f not identifiable" if hi - lo > 0.3 else ""))
            add(f"* `{k}`: {fmt_params(fr)}; rms log error {fr['rms_log']:.3f}{extra}")
        add("")
        add("| predictor | " + " | ".join(f"{s} ({1e3 * t:.1f} ms)"
                                          for s, t in zip(r["slices"], r["times"])) + " |")
        add("|---|" + "---:|" * len(r["slices"]))
        for k, fr in mods.items():
            star = "*" if fr["loo_exact"] else ""
            add(f"| {k} | " + " | ".join(f"{pct(fr['rel_err'][s])} / {pct(fr['loo_err'][s])}{star}"
                                         for s in r["slices"]) + " |")
        add("")
    add("## Summary over all models and slices")
    add("")
    add("| predictor | params | in-sample median abs err | in-sample max | LOO median abs err "
        "| LOO max | LOO points |")
    add("|---|---:|---:|---:|---:|---:|---:|")
    for k, v in summ.items():
        add(f"| {k} | {PREDICTORS[k][0]} | {apct(v['fit_median_abs'])} | {apct(v['fit_max_abs'])} | "
            f"{apct(v['loo_median_abs'])} | {apct(v['loo_max_abs'])} | {v['n_loo']} |")
    add("")
    add("LOO median abs error per model:")
    add("")
    add("| predictor | " + " | ".join(results) + " |")
    add("|---|" + "---:|" * len(results))
    for k, v in summ.items():
        add(f"| {k} | " + " | ".join(apct(v["per_model"][n]["loo_median_abs"]) for n in results)
            + " |")
    add("")
    if e2e:
        add("## End-to-end check: the simulator implements the validated formula")
        add("")
        add(f"`{e2e['model']}`'s fitted kernels, each as one closed-loop tenant (concurrency 1, "
            f"`think` = t0 for the `+think` fit) on its own single-instance `{PROFILE_NAME}`; "
            "`gpumux run --json`; tenant `latency_ns` (p50, mean and max) vs "
            f"`launch_overhead ({geo['launch_overhead_ns']:.0f} ns) + D * g`, and the request "
            f"count in {E2E_DURATION_NS / 1e9:g} s vs one request per `think + latency`.")
        add("")
        for v in e2e["variants"]:
            add(f"* `{v['fit']}`: D = {v['D_ns']} ns, m = {v['m']}, f = 1, think = "
                f"{v['think_ns']} ns")
        add("")
        add("| fit | slice | gpumux p50 (ns) | formula (ns) | rel. diff | requests (expected) | "
            "iteration = think + formula (ms) | MISO measured (ms) |")
        add("|---|---|---:|---:|---:|---:|---:|---:|")
        for row in e2e["rows"]:
            add(f"| {row['fit']} | {row['slice']} | {row['sim_ns']} | {row['formula_ns']:.1f} | "
                f"{row['rel_diff']:.1e} | {row['requests']} ({row['requests_expected']}) | "
                f"{row['iteration_ns'] / 1e6:.2f} | {row['measured_ns'] / 1e6:.2f} |")
        add("")
        add(f"Max relative difference: {e2e['max_rel_diff']:.1e} (completions are rounded up to "
            f"whole ns); request counts match: {e2e['requests_match']}.")
        add("")
    add("## Conclusion")
    add("")
    L.extend(conclusion(results, summ))
    add("")
    return "\n".join(L)


def conclusion(results, summ):
    S = summ
    g = S["gpumux(D,m)"]["per_model"]
    best = min(g, key=lambda k: g[k]["loo_median_abs"])
    worst = max(g, key=lambda k: g[k]["loo_median_abs"])
    rw = results[worst]
    t0s = ", ".join(f"{n} {1e3 * r['models']['gpumux(D,m)+think']['params']['t0']:.1f} ms "
                    f"({100 * r['models']['gpumux(D,m)+think']['params']['t0'] / r['times'][-1]:.0f}% "
                    "of its 7g time)" for n, r in results.items())
    steps = [r["times"][r["slices"].index("3g.20gb")] / r["times"][r["slices"].index("4g.20gb")]
             for r in results.values()]
    ms = "; ".join(f"{n} {r['models']['gpumux(D,m)']['params']['m']:.2f} "
                   f"({r['models']['gpumux(D,m)+think']['params']['m']:.2f} with think)"
                   for n, r in results.items())
    fres = ", ".join(f"{n} f = {r['models']['gpumux(D,m,f)']['params']['f']:.2f}"
                     for n, r in results.items())
    return [
        f"* **Headline.** With f = 1 as in the brief, gpumux(D,m) predicts a held-out slice with a "
        f"median abs error of {apct(S['gpumux(D,m)']['loo_median_abs'])} (max "
        f"{apct(S['gpumux(D,m)']['loo_max_abs'])}) over {S['gpumux(D,m)']['n_loo']} held-out "
        f"points; the naive 1/7 rule (= SM-only on A100) gets "
        f"{apct(S['naive-1/7']['loo_median_abs'])}. Letting f (sm_fraction) be fitted gives "
        f"{apct(S['gpumux(D,m,f)']['loo_median_abs'])} (max {apct(S['gpumux(D,m,f)']['loo_max_abs'])}),"
        f" and adding a per-iteration think time gives "
        f"{apct(S['gpumux(D,m)+think']['loo_median_abs'])} (max "
        f"{apct(S['gpumux(D,m)+think']['loo_max_abs'])}).",
        f"* **Where it works.** `{best}` (the job that scales best) fits with m = "
        f"{results[best]['models']['gpumux(D,m)']['params']['m']:.2f} and a LOO median error of "
        f"{apct(g[best]['loo_median_abs'])}. The measured 3g→4g speed-up (42→56 SMs at the same "
        f"4/8 memory slices) is {min(steps):.2f}-{max(steps):.2f}x, not the 1.33x an SM-only law (f = 1) "
        f"predicts: this is what the bandwidth term m is for (fitted m: {ms}).",
        f"* **Where it fails.** `{worst}` barely scales: its 1g/7g time ratio is "
        f"{rw['times'][0] / rw['times'][-1]:.2f}x where any f = 1 law gives 7-8x, so one (D, m) "
        f"cannot fit it (LOO median {apct(g[worst]['loo_median_abs'])}). Two mechanisms, both "
        f"expressible in gpumux, explain the data: (a) kernels too small to fill the big slices "
        f"(CIFAR-sized 32x32 images): {fres}, i.e. the resnet grid fills only ~"
        f"{results[worst]['models']['gpumux(D,m,f)']['params']['f'] * 108:.0f} SMs; (b) a fixed "
        f"per-iteration host cost that does not shrink with SMs (Python/framework, launch, "
        f"optimizer and data-loader work): fitted t0 = {t0s}. With f = 1 and no t0 the big "
        "slices are always predicted too fast (7g errors are all negative).",
        "* **Is the bandwidth term needed?** Compare `gpumux(D,m,f)` with `sm-only(D,f)` and "
        "`gpumux(D,m)` with `sm-only` in the tables: the in-sample fit improves with m, and m is "
        "the only way to get the flat 3g→4g step; with only 4-5 points per job, the extra "
        "parameter costs some out-of-sample accuracy (LOO of `gpumux(D,m)` vs `sm-only`).",
        "* **Caveats.** Three jobs, 4-5 slices each: LOO errors are indicative, not a "
        "distribution; a 3-parameter fit on 4 slices (bert) interpolates exactly in LOO. D, m, "
        "f, t0 are effective per-iteration parameters of a whole training step (thousands of "
        "kernels), not kernel measurements. Not validated here: co-location (MISO measures one "
        "job per slice; gpumux MIG instances are isolated by construction), 1g.10gb and +me "
        "profiles, other GPUs.",
        "* **Recommendation for scenario authors.** Describe a training/inference step on MIG "
        "with f < 1 for small-input models and a `think`/`host_gap` for host-side time; a single "
        "f = 1 kernel under-predicts the big-slice time (overstates the benefit of a big slice) "
        "by up to "
        f"{apct(-min(min(r['models']['gpumux(D,m)']['rel_err'].values()) for r in results.values()))}"
        " here.",
    ]


def main(argv=None):
    ap = argument_parser(__doc__, "miso-mig-a100.md")
    ap.add_argument("--no-e2e", action="store_true", help="skip the gpumux end-to-end check")
    args = ap.parse_args(argv)

    geo = load_geometry()
    meas = load_measurements()
    results = analyse(geo, meas)
    summ = summary(results)
    e2e = None if args.no_e2e else e2e_check(geo, results, args.gpumux)
    Path(args.report).write_text(report(geo, meas, results, summ, e2e))
    if args.json:
        js = {"summary": summ,
              "models": {n: {"slices": r["slices"], "times_s": r["times"],
                             "fits": r["models"]} for n, r in results.items()},
              "e2e": e2e}
        Path(args.json).write_text(json.dumps(js, indent=1))
    print(f"wrote {args.report}")
    for k, v in summ.items():
        print(f"{k:14s} fit median {apct(v['fit_median_abs']):>7s}  LOO median "
              f"{apct(v['loo_median_abs']):>7s}  LOO max {apct(v['loo_max_abs']):>7s}")
    if e2e:
        print(f"e2e ({e2e['model']}): max relative diff gpumux vs formula {e2e['max_rel_diff']:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
