"""What calibration/microbench/fit.py writes from its fit: the profile snippet (YAML with each
measured value and its provenance), the Markdown report and the JSON (numpy values as plain
numbers). Imported by fit.py."""
import re

import numpy as np


def fmt_us(v):
    if v >= 100:
        return f"{v:.0f}us"
    if v >= 10:
        return f"{v:.1f}us"
    return f"{v:.2f}us"


def snippet(res):
    src = f"gpumux calibration/microbench on {res['gpu']}, {res['date']}, driver {res['driver']}"
    lines = [f"# measured by calibration/microbench (fit.py) on {res['gpu']}; paste over the "
             "matching entries of calibration/profiles/<model>.yaml"]
    T, S = res.get("timeslice_us"), res.get("switch_us")
    ns = sorted({r["nproc"] for r in res.get("timeslice_runs", []) if r.get("nproc", 0) >= 2})
    nspan = (f"{ns[0]}-{ns[-1]}" if len(ns) > 1 else f"{ns[0]}") if ns else "?"
    if T:
        lines.append(f'timeslice: {{value: {fmt_us(T["median"])}, source: "{src}: median slice '
                     f'between context switches of {nspan} spinning processes (p10 {T["p10"]:.0f}us, '
                     f'p90 {T["p90"]:.0f}us, n={T["n"]})"}}')
    if S and res.get("preemption_latency_us") is not None:
        lines.append(f'context_switch: {{value: {fmt_us(res["context_switch_us"])}, source: "{src}: '
                     f"median idle from a short kernel's end to the resume of the spinner beside it "
                     f'(switch with no state to save; spinner-to-spinner gap S = {S["median"]:.1f}us)"}}')
        lines.append(f'preemption_latency: {{value: {fmt_us(res["preemption_latency_us"])}, source: '
                     f'"{src}: S - context_switch, S = median idle between two spinning contexts '
                     f'(p99 {S["p99"]:.1f}us, n={S["n"]})"}}')
    elif S:
        lines.append(f'context_switch: {{value: {fmt_us(S["median"])}, source: "{src}: median idle '
                     f'between two spinning contexts, save + restore (p99 {S["p99"]:.1f}us, n={S["n"]})"}}')
        lines.append('preemption_latency: {value: 0us, assumption: "folded into context_switch: the '
                     'short-kernel probe that separates them did not run"}')
    if S:
        lines.append("# cache_refill: the simulator adds it to every switch to another context; S "
                     "above is all the idle a spinner sees, so a cold-L2 slowdown is not in it. Keep "
                     "cache_refill as an assumption, or set 0us to reproduce S exactly.")
    lp = res.get("launch", {})
    if "launch_stream_us" in lp:
        lines.append(f'launch_overhead: {{value: {fmt_us(lp["launch_stream_us"]["value"])}, source: '
                     f'"{src}: empty kernels back to back on one stream, median of 5 x '
                     f'{lp["launch_stream_us"]["param"].split("=")[-1].split("x")[0]} (launch_probe)"}}')
    if "bw_read_GBps" in lp:
        m = re.search(r"bytes=(\d+)", lp["bw_read_GBps"]["param"])
        size = f"a {int(m.group(1)) / 2**30:g} GiB buffer" if m else "a large buffer"
        m = re.search(r"reps=(\d+)", lp["bw_read_GBps"]["param"])
        reps = f"best of {m.group(1)}" if m else "best of the repetitions"
        lines.append(f'hbm_bandwidth_measured: {{value: {lp["bw_read_GBps"]["value"]:.0f}GB/s, '
                     f'source: "{src}: read kernel over {size}, {reps} (launch_probe)"}}')
    return "\n".join(lines) + "\n"


def _f(v, nd=1):
    return "–" if v is None else f"{v:.{nd}f}"


def report_md(res):
    L = [f"# Calibration microbenchmarks: {res['gpu']}", "",
         f"Date {res['date']}, driver {res['driver']}, CUDA {res['cuda'] or '?'}. "
         "Produced by `calibration/microbench/fit.py`; method in `calibration/microbench/README.md`.", ""]
    if res["warnings"]:
        L += ["**Warnings**", ""] + [f"* {w}" for w in res["warnings"]] + [""]
    T, S = res.get("timeslice_us"), res.get("switch_us")
    L += ["## Summary", "", "| quantity | value |", "|---|---|"]
    if T:
        L.append(f"| timeslice T (median; p10–p90) | {T['median']:.1f} µs ({T['p10']:.1f}–{T['p90']:.1f}), n={T['n']} |")
    else:
        L.append("| timeslice T | not measured |")
    if S:
        L.append(f"| switch gap S between two spinners (median; p99) | {S['median']:.2f} µs ({S['p99']:.2f}), n={S['n']} |")
    L.append(f"| switch in (spinner → short kernel start), median | {_f(res.get('switch_in_us'), 2)} µs |")
    L.append(f"| switch out (short kernel end → spinner), median | {_f(res.get('switch_out_us'), 2)} µs |")
    L.append(f"| → context_switch / preemption_latency | {_f(res.get('context_switch_us'), 2)} / "
             f"{_f(res.get('preemption_latency_us'), 2)} µs |")
    L.append(f"| %globaltimer tick (min nonzero delta) / mean update | {res.get('globaltimer_tick_ns')} ns / "
             f"{_f(res.get('globaltimer_mean_update_ns'), 0)} ns |")
    for k, name in (("launch_stream_us", "launch, stream (per kernel)"), ("launch_graph_us", "launch, graph (per kernel)"),
                    ("launch_sync_p50_us", "launch + sync round trip p50"), ("bw_read_GBps", "DRAM read"),
                    ("bw_write_GBps", "DRAM write"), ("bw_copy_GBps", "DRAM copy (read + write)")):
        if k in res.get("launch", {}):
            v = res["launch"][k]
            L.append(f"| {name} | {v['value']:.2f} {v['unit'].replace('us', 'µs')} |")
    L += ["", "## Time-slicing by number of processes", "",
          "| run | N | window ms | T median | T p10 | T p90 | S median | S p99 | S per gap | wait median | wait p99 | predicted wait | stalls | shares | concurrent |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["timeslice_runs"]:
        if "error" in r:
            L.append(f"| {r['label']} | – | {r['error']} |")
            continue
        t, s, w, g = r["timeslice_us"], r["switch_us"], r["wait_us"], r["switch_per_gap_us"]
        L.append(f"| {r['label']} | {r['nproc']} | {r['window_ms']:.0f} | {_f(t.get('median'))} | {_f(t.get('p10'))} | "
                 f"{_f(t.get('p90'))} | {_f(s.get('median'), 2)} | {_f(s.get('p99'), 2)} | {_f(g.get('median'), 2)} | "
                 f"{_f(w.get('median'))} | {_f(w.get('p99'))} | {_f(r.get('predicted_wait_us'))} | "
                 f"{r['stalls_us'].get('n', 0)} (max {_f(r['stalls_us'].get('max'))}) | "
                 f"{', '.join(f'{v:.3f}' for v in r['share'].values())} | {r['concurrent_fraction']:.4f} |")
    L += ["", "All durations in µs. T: slices between switch gaps; S: idle between consecutive slices of "
          "different contexts; S per gap: (gap − others' runs) / (runs + 1); wait: a context's switch gaps; "
          "predicted wait = (N−1)(T+S)+S; shares: each context's fraction of the window.", ""]
    sk = res.get("short_kernels", {})
    if sk:
        L += ["## Short kernels beside a spinner", "",
              "| run | mode | neighbours | kernels | exec median | latency median | latency p99 | wait median | wait mean | wait p99 | in gap | switch in | switch out |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for label, r in sk.items():
            if "error" in r:
                L.append(f"| {label} | {r['error']} |")
                continue
            w = r.get("wait_us", {})
            L.append(f"| {label} | {r['mode']} | {r['neighbours']} | {r['kernels']} | {_f(r['exec_us'].get('median'), 2)} | "
                     f"{_f(r['latency_us'].get('median'))} | {_f(r['latency_us'].get('p99'))} | {_f(w.get('median'))} | "
                     f"{_f(w.get('mean'))} | {_f(w.get('p99'))} | {_f(r.get('kernels_in_spinner_gap'), 3)} | "
                     f"{_f(r.get('switch_in_us', {}).get('median'), 2)} | {_f(r.get('switch_out_us', {}).get('median'), 2)} |")
        if res.get("short_wait_predicted_mean_us") is not None:
            L += ["", f"Simulator closed form for the mean wait at a uniformly random arrival "
                  f"(instruction preemption): T/2 + P + C = {res['short_wait_predicted_mean_us']:.1f} µs; "
                  f"measured mean: {_f(sk['sync']['wait_us'].get('mean'))} µs."]
        mdl = sk.get("sync", {}).get("model")
        if mdl:
            L += ["", "The same model per kernel (slices back to back from the spinner's resume at the "
                  "previous kernel's completion; wait = rest of the slice + switch in): "
                  f"model mean {mdl['model_mean_us']:.1f} µs, measured {mdl['measured_mean_us']:.1f} µs, "
                  f"median |error| {mdl['median_abs_error_us']:.1f} µs, correlation {_f(mdl['correlation'], 3)}.",
                  "", "| phase in slice | n | measured mean µs | model mean µs |", "|---|---|---|---|"]
            L += [f"| {b['phase_from']:.1f}–{b['phase_from'] + 0.1:.1f} | {b['n']} | "
                  f"{b['measured_mean_us']:.1f} | {b['model_mean_us']:.1f} |" for b in mdl["by_phase"]]
        L.append("")
    L += ["## Profile snippet", "", "```yaml", snippet(res).rstrip(), "```", ""]
    return "\n".join(L)


def _jsonable(o):
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    if isinstance(o, np.generic):
        return o.item()
    return o
