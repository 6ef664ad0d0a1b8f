#!/usr/bin/env python3
"""Fits time-slicing, launch and bandwidth parameters to the gpumux calibration microbenchmarks.

    python3 calibration/microbench/fit.py DIR [--gpu NAME] [--json PATH] [--report PATH]

DIR holds run_all.sh's microbench-raw.tar.gz (or the unpacked CSVs, or a raw/ folder of them).
Writes DIR/measured-<gpu>.json, DIR/measured-<gpu>.md and DIR/profile-snippet-<gpu>.yaml, and
prints the YAML snippet for calibration/profiles/<model>.yaml. numpy only (no pandas/scipy), so
it runs on the GPU machine's python3 and on /usr/bin/python3 alike.

How the numbers are derived (README.md beside this file has the long form):
* Each spinner's block 0 logged every jump of %globaltimer > threshold between two consecutive
  reads: the intervals its context was off the GPU. A gap is a *switch gap* when another
  spinner ran inside it, else a *stall*. Runs joined across stalls are the *slices* the context
  was granted; slices bounded by switch gaps on both sides, inside the window in which all N
  spinners were alive, are timeslice samples (T).
* All spinners' slices merged and sorted by start: the idle time between one context's slice
  end and the next context's slice start is a switch sample (S = save + restore + scheduling).
  Cross-check: per switch gap, (gap - other contexts' run time inside it) / (runs inside + 1).
* Short kernels beside a spinner: host latency minus the control's median latency is the wait;
  on the GPU, a kernel inside a spinner gap splits it into S_in (gap start to kernel start:
  preempt the spinner, switch, fetch) and C_out (kernel end to gap end: switch back; the short
  context has nothing to save). For the simulator: context_switch = C_out and
  preemption_latency = S - C_out, so that P + C reproduces S.
"""
import argparse
import csv
import datetime
import glob
import json
import os
import re
import sys
import tarfile
import tempfile

import numpy as np

from fit_report import _jsonable, report_md, snippet  # the outputs (fit_report.py)

NS_COLS = {"gap_start_ns", "gap_end_ns", "kernel_start_ns", "kernel_end_ns", "host_submit_ns",
           "host_done_ns", "gpu_start_ns", "gpu_end_ns"}


# ------------------------------------------------------------------ input

def locate(path):
    """Returns (directory with the CSVs, temp dir to clean up or None)."""
    if os.path.isfile(path) and path.endswith((".tar.gz", ".tgz")):
        tarball = path
    elif glob.glob(os.path.join(path, "ts_*_meta.csv")) or glob.glob(os.path.join(path, "launch.csv")):
        return path, None
    elif os.path.isdir(os.path.join(path, "raw")):
        return os.path.join(path, "raw"), None
    elif os.path.isfile(os.path.join(path, "microbench-raw.tar.gz")):
        tarball = os.path.join(path, "microbench-raw.tar.gz")
    else:
        return path, None
    tmp = tempfile.mkdtemp(prefix="gpumux-fit-")
    with tarfile.open(tarball) as tf:
        for m in tf.getmembers():  # plain files only, no absolute or parent paths
            if m.isfile() and not m.name.startswith("/") and ".." not in m.name.split("/"):
                if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 / 3.12
                    tf.extract(m, tmp, filter="data")
                else:
                    tf.extract(m, tmp)
    raw = os.path.join(tmp, "raw")
    return (raw if os.path.isdir(raw) else tmp), tmp


def read_table(path):
    """CSV -> dict column -> np.array (int64 for *_ns and integer columns, else float/str)."""
    if not os.path.isfile(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return None
    header, body = rows[0], [r for r in rows[1:] if r]
    out = {}
    for j, name in enumerate(header):
        col = [r[j] if j < len(r) else "" for r in body]
        try:
            out[name] = np.array([int(v) for v in col], dtype=np.int64)
        except ValueError:
            try:
                out[name] = np.array([float(v) for v in col], dtype=float)
            except ValueError:
                out[name] = np.array(col, dtype=object)
        if name in NS_COLS and out[name].dtype != np.int64:
            out[name] = np.array([int(float(v)) for v in col], dtype=np.int64)
    out["_n"] = len(body)
    return out


def read_kv(path):
    t = read_table(path)
    if t is None or "key" not in t:
        return {}
    return {str(k): str(v) for k, v in zip(t["key"], t["value"])}


def stats_us(x_ns):
    x = np.asarray(x_ns, dtype=float) / 1000.0
    if x.size == 0:
        return {"n": 0}
    p = np.percentile(x, [1, 10, 50, 90, 99])
    return {"n": int(x.size), "median": float(p[2]), "mean": float(x.mean()), "p1": float(p[0]),
            "p10": float(p[1]), "p90": float(p[3]), "p99": float(p[4]), "min": float(x.min()),
            "max": float(x.max())}


# ------------------------------------------------------------------ time-slicing

def spinners(meta, gaps):
    """Per spinner process: block-0 kernel interval and gap arrays (sorted)."""
    procs = {}
    if meta is None or meta["_n"] == 0:
        return procs
    for i in range(meta["_n"]):
        if "role" in meta and str(meta["role"][i]) != "spin":
            continue
        p, b = int(meta["process_id"][i]), int(meta["block"][i])
        if p in procs and procs[p]["block"] <= b:
            continue
        procs[p] = {"block": b, "ks": int(meta["kernel_start_ns"][i]),
                    "ke": int(meta["kernel_end_ns"][i]),
                    "min_delta_ns": int(meta["min_delta_ns"][i]),
                    "changes": int(meta["changes"][i]),
                    "clock_mhz": float(meta["clock_mhz"][i]) if "clock_mhz" in meta else 0.0,
                    "gaps_seen": int(meta["gaps_seen"][i]), "gaps_logged": int(meta["gaps_logged"][i])}
    for p, d in procs.items():
        if gaps is not None and gaps["_n"]:
            sel = (gaps["process_id"] == p) & (gaps["block"] == d["block"])
            gs, ge = gaps["gap_start_ns"][sel], gaps["gap_end_ns"][sel]
            o = np.argsort(gs, kind="stable")
            d["gs"], d["ge"] = gs[o], ge[o]
        else:
            d["gs"] = d["ge"] = np.zeros(0, dtype=np.int64)
    return procs


def _runs(d):
    return (np.concatenate([[d["ks"]], d["ge"]]).astype(np.int64),
            np.concatenate([d["gs"], [d["ke"]]]).astype(np.int64))


def _overlap_with(gs, ge, rs, re_):
    """For each gap (gs[i], ge[i]): number of runs intersecting it and their summed overlap."""
    if gs.size == 0 or rs.size == 0:
        return np.zeros(gs.size, dtype=np.int64), np.zeros(gs.size, dtype=np.int64)
    k = np.zeros(gs.size, dtype=np.int64)
    r = np.zeros(gs.size, dtype=np.int64)
    for lo in range(0, gs.size, 512):  # chunked broadcasting
        a, b = gs[lo:lo + 512, None], ge[lo:lo + 512, None]
        ov = np.minimum(b, re_[None, :]) - np.maximum(a, rs[None, :])
        hit = ov > 0
        k[lo:lo + 512] = hit.sum(axis=1)
        r[lo:lo + 512] = np.where(hit, ov, 0).sum(axis=1)
    return k, r


def analyze_timeslice(label, meta, gaps):
    procs = spinners(meta, gaps)
    n = len(procs)
    res = {"label": label, "nproc": n}
    if n == 0:
        res["error"] = "no spinner data"
        return res
    w0 = max(d["ks"] for d in procs.values())
    w1 = min(d["ke"] for d in procs.values())
    res["window_ms"] = max(w1 - w0, 0) / 1e6
    runs = {p: _runs(d) for p, d in procs.items()}
    slice_len, switch_gap_est, waits, stalls = [], [], [], []
    merged = []  # (start, end, process) of every slice
    shares = {}
    for p, d in procs.items():
        gs, ge = d["gs"], d["ge"]
        others = [q for q in procs if q != p]
        if others:
            rs = np.concatenate([runs[q][0] for q in others])
            re_ = np.concatenate([runs[q][1] for q in others])
        else:
            rs = re_ = np.zeros(0, dtype=np.int64)
        k, r = _overlap_with(gs, ge, rs, re_)
        switch = k > 0
        in_win = (gs >= w0) & (ge <= w1)
        stalls.extend((ge - gs)[~switch & in_win].tolist())
        sw = switch & in_win
        waits.extend((ge - gs)[sw].tolist())
        switch_gap_est.extend(((ge - gs - r)[sw] / (k[sw] + 1)).tolist())
        # slices: runs joined across stalls
        ss = np.concatenate([[d["ks"]], ge[switch]])
        se = np.concatenate([gs[switch], [d["ke"]]])
        merged.extend(zip(ss.tolist(), se.tolist(), [p] * ss.size))
        full = np.zeros(ss.size, dtype=bool)
        full[1:-1] = True  # first and last slices are cut by the kernel's start and end
        full &= (ss >= w0) & (se <= w1)
        slice_len.extend((se - ss)[full].tolist())
        clipped = np.clip(np.minimum(se, w1) - np.maximum(ss, w0), 0, None)
        shares[str(p)] = float(clipped.sum() / max(w1 - w0, 1))
    merged.sort()
    switch_samples, overlap_ns = [], 0
    for (s0, e0, p0), (s1, e1, p1) in zip(merged[:-1], merged[1:]):
        if p0 == p1 or e0 < w0 or s1 > w1:
            continue
        if s1 >= e0:
            switch_samples.append(s1 - e0)
        else:
            overlap_ns += min(e0, e1) - s1
    res.update({
        "timeslice_us": stats_us(slice_len),
        "switch_us": stats_us(switch_samples),
        "switch_per_gap_us": stats_us(switch_gap_est),
        "wait_us": stats_us(waits),
        "stalls_us": stats_us(stalls),
        "share": shares,
        "concurrent_fraction": float(overlap_ns / max(w1 - w0, 1)),
        "gaps_dropped": int(sum(d["gaps_seen"] - d["gaps_logged"] for d in procs.values())),
        "globaltimer_tick_ns": int(min([d["min_delta_ns"] for d in procs.values()
                                        if d["min_delta_ns"] > 0] or [0])),
        "clock_mhz": [d["clock_mhz"] for d in procs.values()],
        "_slices_ns": slice_len, "_switch_ns": switch_samples,
    })
    mean_delta = [((d["ke"] - d["ks"]) - int((d["ge"] - d["gs"]).sum())) / d["changes"]
                  for d in procs.values() if d["changes"] > 0]
    res["globaltimer_mean_update_ns"] = float(np.mean(mean_delta)) if mean_delta else None
    if n >= 2 and res["timeslice_us"]["n"] and res["switch_us"]["n"]:
        T, S = res["timeslice_us"]["median"], res["switch_us"]["median"]
        res["predicted_wait_us"] = (n - 1) * (T + S) + S
    return res


# ------------------------------------------------------------------ short kernels

def analyze_shortk(label, kernels, meta, gaps, ctrl_latency_us=None):
    res = {"label": label}
    if kernels is None or kernels["_n"] == 0:
        res["error"] = "no short-kernel data"
        return res
    procs = spinners(meta, gaps)
    res["neighbours"] = len(procs)
    sub, done = kernels["host_submit_ns"], kernels["host_done_ns"]
    gst, gen = kernels["gpu_start_ns"], kernels["gpu_end_ns"]
    batch = kernels["batch"]
    ub, first = np.unique(batch, return_index=True)
    sync = ub.size == batch.size
    res["mode"] = "sync" if sync else "queued"
    res["kernels"] = int(batch.size)
    res["exec_us"] = stats_us(gen - gst)
    if sync:
        lat = done - sub
    else:  # per batch: first submit to completion of the batch
        lat = done[first] - sub[first]
    res["latency_us"] = stats_us(lat)
    if ctrl_latency_us is not None and sync:
        res["wait_us"] = stats_us(lat - ctrl_latency_us * 1000.0)
    if not sync:  # GPU gaps between consecutive kernels of one batch
        same = batch[1:] == batch[:-1]
        res["inter_kernel_gap_us"] = stats_us((gst[1:] - gen[:-1])[same])
    if procs:
        d = procs[min(procs)]
        gs, ge = d["gs"], d["ge"]
        if gs.size:
            idx = np.searchsorted(gs, gst, side="right") - 1
            ok = idx >= 0
            ok[ok] &= ge[idx[ok]] >= gen[ok]
            res["kernels_in_spinner_gap"] = float(ok.mean())
            if ok.any():
                gi = idx[ok]
                ug = np.unique(gi)
                kmin = np.full(gs.size, np.iinfo(np.int64).max, dtype=np.int64)
                kmax = np.zeros(gs.size, dtype=np.int64)
                np.minimum.at(kmin, gi, gst[ok])
                np.maximum.at(kmax, gi, gen[ok])
                res["switch_in_us"] = stats_us(kmin[ug] - gs[ug])
                res["switch_out_us"] = stats_us(ge[ug] - kmax[ug])
                res["spinner_gap_us"] = stats_us(ge[ug] - gs[ug])
    return res


def model_waits(kern, ctrl_lat_us, T_us, s_in_us):
    """The simulator's model, per short kernel: the spinner's slices run back to back from its
    last resume, which is about when the previous short kernel completed; a kernel submitted
    `phase` later waits for the running slice to end, then S_in. Compares with the measured
    waits, as a whole and by phase (10 bins of the slice). Slice jitter accumulated over the
    sleep puts some kernels near a slice end into the wrong slice (errors of ~T), so the median
    absolute error, not the mean, says how well the model fits."""
    sub = kern["host_submit_ns"].astype(float) / 1000.0
    done = kern["host_done_ns"].astype(float) / 1000.0
    phase = (sub[1:] - done[:-1]) % T_us
    pred = (T_us - phase) + s_in_us
    meas = (done[1:] - sub[1:]) - (ctrl_lat_us or 0.0)
    bins = np.minimum((phase / T_us * 10).astype(int), 9)
    by_phase = []
    for b in range(10):
        m = bins == b
        if m.any():
            by_phase.append({"phase_from": b / 10, "n": int(m.sum()),
                             "measured_mean_us": float(meas[m].mean()),
                             "model_mean_us": float(pred[m].mean())})
    corr = float(np.corrcoef(pred, meas)[0, 1]) if pred.size > 2 and meas.std() > 0 else None
    return {"model_mean_us": float(pred.mean()), "measured_mean_us": float(meas.mean()),
            "mean_abs_error_us": float(np.abs(pred - meas).mean()),
            "median_abs_error_us": float(np.median(np.abs(pred - meas))), "correlation": corr,
            "by_phase": by_phase}


# ------------------------------------------------------------------ the rest

def analyze_launch(path):
    t = read_table(path)
    if t is None:
        return {}
    return {str(m): {"value": float(v), "unit": str(u), "param": str(p)}
            for m, v, u, p in zip(t["metric"], t["value"], t["unit"], t["param"])}


def identify(d, gpu_override=None):
    info = {"gpu": None, "driver": None, "cuda": None, "date": None}
    smi = os.path.join(d, "nvidia-smi-q.txt")
    if os.path.isfile(smi):
        text = open(smi, errors="replace").read()
        m = re.search(r"^\s*Product Name\s*:\s*(.+?)\s*$", text, re.M)
        info["gpu"] = m.group(1) if m else None
        m = re.search(r"^\s*Driver Version\s*:\s*(\S+)", text, re.M)
        info["driver"] = m.group(1) if m else None
        m = re.search(r"^\s*Compute Mode\s*:\s*(.+?)\s*$", text, re.M)
        info["compute_mode"] = m.group(1) if m else None
    dev = read_kv(os.path.join(d, "device.csv"))
    if not info["gpu"] and dev.get("name"):
        info["gpu"] = dev["name"]
    info["device"] = dev
    nv = os.path.join(d, "nvcc-version.txt")
    if os.path.isfile(nv):
        m = re.search(r"release\s+([\d.]+),\s*V([\d.]+)", open(nv, errors="replace").read())
        info["cuda"] = m.group(2) if m else None
    run = read_kv(os.path.join(d, "run-info.csv"))
    info["date"] = (run.get("date_utc") or "")[:10] or None
    info["quick"] = run.get("quick") == "1"
    info["mps_daemon"] = run.get("mps_daemon") or ""
    steps = read_table(os.path.join(d, "steps.csv"))
    if steps is not None:
        info["steps"] = {str(s): str(r) for s, r in zip(steps["step"], steps["rc"])}
    if gpu_override:
        info["gpu"] = gpu_override
    info["gpu"] = info["gpu"] or "unknown-gpu"
    info["date"] = info["date"] or datetime.date.today().isoformat()
    info["driver"] = info["driver"] or "unknown"
    return info


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def fit(d, gpu_override=None):
    info = identify(d, gpu_override)
    out = {"gpu": info["gpu"], "driver": info["driver"], "cuda": info["cuda"], "date": info["date"],
           "info": info, "warnings": []}
    warn = out["warnings"]
    # time-slicing runs: every ts_<label>_meta.csv
    ts_results = []
    for mp in sorted(glob.glob(os.path.join(d, "ts_*_meta.csv"))):
        label = os.path.basename(mp)[3:-len("_meta.csv")]
        meta = read_table(mp)
        gaps = read_table(mp.replace("_meta.csv", "_gaps.csv"))
        ts_results.append(analyze_timeslice(label, meta, gaps))
    ts_results.sort(key=lambda r: (r.get("nproc", 0), r["label"]))

    # T and S pooled over the samples of every run with N >= 2
    def pooled(key):
        x = [v for r in ts_results if r.get("nproc", 0) >= 2 for v in r.get(key, [])]
        st = stats_us(x)
        return st if st["n"] else None

    out["timeslice_us"] = pooled("_slices_ns")
    out["switch_us"] = pooled("_switch_ns")
    for r in ts_results:
        r.pop("_slices_ns", None)
        r.pop("_switch_ns", None)
    out["timeslice_runs"] = ts_results
    control = [r for r in ts_results if r.get("nproc") == 1]
    if control:
        c = control[0]
        out["control"] = {"timeslice_samples": c["timeslice_us"]["n"],
                          "stalls": c["stalls_us"].get("n", 0),
                          "max_stall_us": c["stalls_us"].get("max", 0.0),
                          "clock_mhz": c.get("clock_mhz")}
        if c["timeslice_us"]["n"]:
            warn.append("the N = 1 control shows switch gaps: something else holds the GPU")
        if c.get("clock_mhz") and max(c["clock_mhz"]) and max(c["clock_mhz"]) < 1000:
            warn.append(f"SM clock during the control was {max(c['clock_mhz']):.0f} MHz: not warmed up?")
    for r in ts_results:
        if r.get("concurrent_fraction", 0) > 0.01:
            warn.append(f"{r['label']}: contexts ran concurrently for "
                        f"{100 * r['concurrent_fraction']:.1f}% of the window (MPS daemon running?)")
        if r.get("gaps_dropped"):
            warn.append(f"{r['label']}: {r['gaps_dropped']} gaps dropped (log buffer full)")
    ticks = [r["globaltimer_tick_ns"] for r in ts_results if r.get("globaltimer_tick_ns")]
    out["globaltimer_tick_ns"] = int(min(ticks)) if ticks else None
    res_probe = {}
    rp = os.path.join(d, "resolution.csv")
    if os.path.isfile(rp):
        for line in open(rp):
            k, _, v = line.strip().partition(",")
            if k.startswith("globaltimer_") and v.strip().isdigit():
                res_probe[k] = int(v)
    out["globaltimer_resolution_probe"] = res_probe
    if res_probe.get("globaltimer_min_delta_ns"):
        ticks.append(res_probe["globaltimer_min_delta_ns"])
        out["globaltimer_tick_ns"] = int(min(ticks))
    upd = [r["globaltimer_mean_update_ns"] for r in ts_results if r.get("globaltimer_mean_update_ns")]
    out["globaltimer_mean_update_ns"] = float(np.median(upd)) if upd else None
    if out["globaltimer_tick_ns"] and out["globaltimer_tick_ns"] >= 500:
        warn.append(f"%globaltimer ticks every {out['globaltimer_tick_ns']} ns: gap ends are "
                    f"quantised to that, so switch costs carry +-{out['globaltimer_tick_ns']} ns")

    # short kernels
    sk = {}
    ctrl_lat = None
    for label in ["ctrl"] + sorted(os.path.basename(p)[3:-len("_kernels.csv")]
                                   for p in glob.glob(os.path.join(d, "sk_*_kernels.csv"))
                                   if not p.endswith("sk_ctrl_kernels.csv")):
        base = os.path.join(d, f"sk_{label}")
        kern = read_table(base + "_kernels.csv")
        if kern is None:
            continue
        r = analyze_shortk(label, kern, read_table(base + "_meta.csv"), read_table(base + "_gaps.csv"),
                           ctrl_lat)
        if label == "ctrl" and r.get("latency_us", {}).get("n"):
            ctrl_lat = r["latency_us"]["median"]
        sk[label] = r
    out["short_kernels"] = sk
    sync = sk.get("sync", {})
    c_out = sync.get("switch_out_us", {}).get("median") if sync else None
    s_in = sync.get("switch_in_us", {}).get("median") if sync else None
    out["switch_out_us"] = c_out
    out["switch_in_us"] = s_in
    if out["switch_us"] and c_out is not None:
        out["context_switch_us"] = c_out
        out["preemption_latency_us"] = max(out["switch_us"]["median"] - c_out, 0.0)
    elif out["switch_us"]:
        out["context_switch_us"] = out["switch_us"]["median"]
        out["preemption_latency_us"] = None
    if out["timeslice_us"] and out["switch_us"] and sync.get("wait_us", {}).get("n"):
        T = out["timeslice_us"]["median"]
        out["short_wait_predicted_mean_us"] = T / 2 + out["switch_us"]["median"]
        kern = read_table(os.path.join(d, "sk_sync_kernels.csv"))
        if s_in is not None and kern is not None and kern["_n"] > 2:
            sync["model"] = model_waits(kern, ctrl_lat, T, s_in)

    # launch and bandwidth
    lp = analyze_launch(os.path.join(d, "launch.csv"))
    out["launch"] = lp
    for step, rc in info.get("steps", {}).items():
        if rc != "0":
            warn.append(f"run_all.sh step {step}: " + ("skipped (time budget)" if rc == "skipped"
                                                        else f"failed, rc {rc} (see run_all.log)"))
    out["measured_anything"] = bool(ts_results or lp)
    if not out["measured_anything"]:
        warn.append("no probe output found (no GPU, or every probe failed)")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fit the gpumux calibration microbenchmarks.")
    ap.add_argument("dir", help="run_all.sh output dir, its microbench-raw.tar.gz, or a dir of CSVs")
    ap.add_argument("--gpu", help="GPU name (default: from nvidia-smi -q / device.csv)")
    ap.add_argument("--json", help="output JSON (default DIR/measured-<gpu>.json)")
    ap.add_argument("--report", help="output Markdown (default DIR/measured-<gpu>.md)")
    ap.add_argument("--snippet", help="output YAML snippet (default DIR/profile-snippet-<gpu>.yaml)")
    a = ap.parse_args(argv)
    data, tmp = locate(a.dir)
    try:
        res = fit(data, a.gpu)
    finally:
        if tmp:
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
    outdir = a.dir if os.path.isdir(a.dir) else os.path.dirname(os.path.abspath(a.dir))
    s = slug(res["gpu"])
    jpath = a.json or os.path.join(outdir, f"measured-{s}.json")
    mpath = a.report or os.path.join(outdir, f"measured-{s}.md")
    ypath = a.snippet or os.path.join(outdir, f"profile-snippet-{s}.yaml")
    with open(jpath, "w") as f:
        json.dump(_jsonable(res), f, indent=1, sort_keys=True)
    with open(mpath, "w") as f:
        f.write(report_md(res))
    snip = snippet(res)
    with open(ypath, "w") as f:
        f.write(snip)
    for w in res["warnings"]:
        print("warning:", w, file=sys.stderr)
    print(snip, end="")
    print(f"# wrote {jpath}, {mpath}, {ypath}", file=sys.stderr)
    return 0 if res["measured_anything"] else 1


if __name__ == "__main__":
    sys.exit(main())
