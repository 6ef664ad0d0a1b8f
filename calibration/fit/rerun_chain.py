#!/usr/bin/python3
"""The fit chain S1-S7 (docs/calibration.md), rerun in order as one command.

Each stage fits on the binary that holds every earlier stage's values, so the chain writes each
stage's values where the product reads them and rebuilds gpumux before the next stage (the
profiles and kernel-families.yaml are embedded in the binary, engine_cpu.hpp is compiled in):

  S1  gpumux calibrate calibration/fit/solo-latency.csv --fit kernel_fixed_cost,host_per_request,
      harness_per_request -> kernel_fixed_cost, host_per_request.tensorrt and
      harness_per_request.mlperf-loadgen in the A100-80GB, A100-SXM4-40GB and A30 profiles
      (fitted) and the A100-PCIe-80GB's (assumption: the same die and harness); REPORT.md
  S2  gpumux calibrate calibration/fit/ft-host.csv --fit host_per_request --profile a100-80gb ->
      host_per_request.fastertransformer in the A100-80GB profile; REPORT-FT.md
  S3  calibration/fit/tf_runtime.py -> runtimes.tensorflow-xla.host_per_op (kernel-families.yaml),
      the TF1 BERT harness (catalog_published.py HARNESS_HOST, per_request) and
      host_per_request.tensorflow = .tensorflow-xla in the A100-SXM4-40GB and A100-80GB
      profiles; TF-RUNTIME.md
  S4  calibration/fit/ort_kernel_cost.py --step-us 0.25 --max-us 10 ->
      runtimes.onnxruntime.kernel_fixed_cost (kernel-families.yaml); ORT-KERNEL.md
  S5  calibration/fit/triton_frontend.py -> serving: triton-grpc (latency, bandwidth),
      triton-grpc-tensorflow (latency, bandwidth) and triton-shm (latency) (kernel-families.yaml);
      TRITON-FRONTEND.md
  S6  calibration/fit/llm_eager_dispatch.py -> kVllmV0HostPerOp (models/workload/engine_cpu.hpp);
      LLM-DISPATCH.md
  S7  calibration/fit/ft_vit_host.py -> the `ft-vit` harness's host time per operator
      (calibration/fit/ft-vit-host.yaml, read by catalog_published.py SOURCE_REQUEST; not in the
      binary: no rebuild needed); FT-VIT-HOST.md

then every stage's check: S1 and S2 refitted on the final binary must not move (a fit of its own
output reproduces it within 1 ns per 1000 ns), S4's, S5's, S6's and S7's `--check`, and
calibration/fit/engine_cpu.py --check (Vidur's data, no simulation). A rebuild after S1, S2, S3, S4,
S5 and S6 is `ninja -C BUILD gpumux` (the embedded data and their dependants only).

Usage: /usr/bin/python3 calibration/fit/rerun_chain.py [--gpumux build/gpumux] [--date YYYY-MM-DD]
       [--from N]   (skip the stages before N, e.g. after a failure; the values already written stay)
Cost, measured 2026-12-07 on 2 shared cores: S1 11 s, S2 2 s, S3 33 s, S4 26 s, S5 1 s, S6 12 s,
(S7 20 s, 2026-12-08), the checks 12 s (and S7's check 20 s); each rebuild 1-3 s (the first, of whatever changed before the run, 35 s here):
about 2.5 minutes in all. Run it from the repository root on a tree whose build directory is
configured (make configure). Exit 1 when a check fails (each printed).
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIT = ROOT / "calibration" / "fit"
PROFILES = ROOT / "calibration" / "profiles"
FAMILIES = ROOT / "calibration" / "workloads" / "kernel-families.yaml"
ENGINE_CPU = ROOT / "models" / "workload" / "engine_cpu.hpp"
CATALOG_PUBLISHED = ROOT / "calibration" / "validation" / "catalog_published.py"
PY = "/usr/bin/python3"  # the stage scripts import h5py through catalog_published.py
S1_FIT = "kernel_fixed_cost,host_per_request,harness_per_request"
S1_FITTED = ("a100-80gb", "a100-sxm4-40gb", "a30-24gb")  # the GPUs of solo-latency.csv's points
S1_ASSUMED = ("a100-pcie-80gb",)  # the same GA100 die and MLPerf harness, no point of its own


def log(msg: str) -> None:
    print(f"[rerun_chain {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(cmd: list, capture: bool = True) -> str:
    log("$ " + " ".join(str(c) for c in cmd))
    out = subprocess.run([str(c) for c in cmd], cwd=ROOT, capture_output=capture, text=True)
    if out.returncode != 0:
        sys.exit(f"rerun_chain: {' '.join(str(c) for c in cmd)} exited {out.returncode}:\n"
                 + ((out.stdout or "") + (out.stderr or ""))[-4000:])
    return out.stdout if capture else ""


def rebuild(build: Path) -> None:
    t = time.time()
    run(["nice", "-n", "5", "ninja", "-C", build, "gpumux"], capture=False)
    log(f"rebuilt gpumux in {time.time() - t:.0f} s")


def ns_text(ns: float) -> str:
    return f"{round(ns)}ns"


def pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def yaml_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- writing values where the product reads them -------------------------------------------

def set_flow_entry(path: Path, parent: str | None, key: str, value: str, kind: str,
                   provenance: str) -> None:
    """Replaces the one-line entry `KEY: {value: V, KIND: "..."}` (under top-level `parent:` when
    given, indented two spaces) with the new value and provenance."""
    lines = path.read_text().split("\n")
    inside = parent is None
    for i, line in enumerate(lines):
        if parent is not None and re.match(r"^\S", line):
            inside = line.startswith(parent + ":")
            continue
        indent = "" if parent is None else "  "
        if inside and re.match(rf"^{indent}{re.escape(key)}: \{{value: ", line):
            lines[i] = f"{indent}{key}: {{value: {value}, {kind}: {yaml_quote(provenance)}}}"
            path.write_text("\n".join(lines))
            return
    sys.exit(f"rerun_chain: {path}: no one-line entry {parent + '.' if parent else ''}{key}")


def set_block_entry(path: Path, keys: list, value: str, provenance: str) -> None:
    """In a block-style YAML file, the mapping at `keys` holds `value: V` and `fitted: >-` with
    folded text: both are replaced (the text re-wrapped at the mapping's indentation)."""
    lines = path.read_text().split("\n")
    start, depth = 0, 0
    for k in keys:
        pattern = re.compile(rf"^{' ' * (2 * depth)}{re.escape(k)}:\s*(#.*)?$")
        for i in range(start, len(lines)):
            if pattern.match(lines[i]):
                start, depth = i + 1, depth + 1
                break
        else:
            sys.exit(f"rerun_chain: {path}: no key {'.'.join(keys)}")
    indent = " " * (2 * depth)
    end = start
    while end < len(lines) and (lines[end].startswith(indent) or not lines[end].strip()):
        end += 1
    body = lines[start:end]
    out, skip = [], False
    for line in body:
        if skip and line.startswith(indent + "  "):
            continue
        skip = False
        if line.startswith(indent + "value:"):
            out.append(f"{indent}value: {value}")
        elif line.startswith(indent + "fitted:"):
            out.append(f"{indent}fitted: >-")
            out += textwrap.wrap(provenance, 100 - len(indent) - 2,
                                 initial_indent=indent + "  ", subsequent_indent=indent + "  ",
                                 break_on_hyphens=False)
            skip = True
        else:
            out.append(line)
    if not any(x.startswith(indent + "value:") for x in body):
        sys.exit(f"rerun_chain: {path}: {'.'.join(keys)} has no value")
    lines[start:end] = out
    path.write_text("\n".join(lines))


# --- the stages --------------------------------------------------------------------------

def calibrate(gpumux: str, args: list, report: Path) -> dict:
    run([gpumux, "calibrate", *args, "--report", report])
    return json.loads(run([gpumux, "calibrate", *args, "--json"]))


def s1(gpumux: str, date: str) -> str:
    data = FIT / "solo-latency.csv"
    res = calibrate(gpumux, [data.relative_to(ROOT), "--fit", S1_FIT], FIT / "REPORT.md")
    errors = res["errors"]["all"]
    common = (f"gpumux calibrate calibration/fit/solo-latency.csv --fit {S1_FIT} ({date}, "
              f"calibration/fit/rerun_chain.py stage 1; each point launched as its source did, "
              f"solo-latency.csv's cuda_graph column (demoBERT's build/perf --enable_graph, MLPerf "
              f"v1.0's use_graphs), TensorRT's host time per request split from MLPerf's harness "
              f"(the harness column); block_round_cost held at gpu-benches' measured 245 ns; "
              f"sources {', '.join(res['sources'])}")
    tail = (f"median |error| in sample {pct(errors['in_sample'])}, leave-one-source-out "
            f"{pct(errors['out_of_sample'])} ({errors['points']} points)")
    values = {}
    for key, p in res["parameters"].items():
        values[key] = (ns_text(p["fitted_ns"]),
                       f"{common}; informed by {p['points']} of the points; folds "
                       f"{round(p['fold_min_ns'])}-{round(p['fold_max_ns'])} ns; {tail})")
    for name in S1_FITTED + S1_ASSUMED:
        path = PROFILES / f"{name}.yaml"
        kind = "fitted" if name in S1_FITTED else "assumption"
        pre = ("" if kind == "fitted" else
               "the a100-80gb profile's value for the same GA100 die and MLPerf harness, fitted "
               "there by ")
        for key, (value, prov) in values.items():
            parent, _, sub = key.rpartition(".")
            set_flow_entry(path, parent or None, sub if parent else key, value, kind, pre + prov)
    return ", ".join(f"{k} {v[0]}" for k, v in values.items()) + f"; {tail}"


def s2(gpumux: str, date: str, upstream: str) -> str:
    res = calibrate(gpumux, ["calibration/fit/ft-host.csv", "--fit", "host_per_request",
                             "--profile", "a100-80gb"], FIT / "REPORT-FT.md")
    p = res["parameters"]["host_per_request.fastertransformer"]
    e = res["errors"]["all"]
    tail = (f"median |error| in sample {pct(e['in_sample'])}, leave-one-source-out "
            f"{pct(e['out_of_sample'])} ({e['points']} points)")
    set_flow_entry(PROFILES / "a100-80gb.yaml", "host_per_request", "fastertransformer",
                   ns_text(p["fitted_ns"]), "fitted",
                   f"gpumux calibrate calibration/fit/ft-host.csv --fit host_per_request --profile "
                   f"a100-80gb ({date}, calibration/fit/rerun_chain.py stage 2, GPU terms held: "
                   f"block_round_cost 245 ns measured, stage 1's {upstream}; sources "
                   f"{', '.join(res['sources'])}; informed by {p['points']} of the points; folds "
                   f"{round(p['fold_min_ns'])}-{round(p['fold_max_ns'])} ns; {tail})")
    return f"host_per_request.fastertransformer {ns_text(p['fitted_ns'])}; {tail}"


def report_errors(path: Path, heading: str) -> tuple:
    """(in, out) median |error| of a tf_runtime.py report section."""
    text = path.read_text()
    section = text.split(heading, 1)[1]
    found = re.search(r"in sample ([\d.]+) %[^\n]*?out of sample ([\d.]+) %", section) or \
        re.search(r"\| ([\d.]+) % \| ([\d.]+) % \|", section)
    return (found.group(1), found.group(2)) if found else ("?", "?")


def s3(gpumux: str, date: str, upstream: str) -> str:
    out = run([PY, FIT / "tf_runtime.py", "--gpumux", gpumux])
    m = re.search(r"t_op = ([\d.]+) us, H \(BERT\) = ([\d.]+) ms, H \(ResNet-50\) = ([\d.]+) ms",
                  out)
    if not m:
        sys.exit("rerun_chain: tf_runtime.py printed no fit:\n" + out)
    t_op, h_bert, h_rn50 = (float(x) for x in m.groups())
    rep = FIT / "TF-RUNTIME.md"
    e1, e2, e3 = (report_errors(rep, h) for h in ("## Stage 1", "## Stage 2", "## Stage 3"))
    basis = f"{date}, calibration/fit/rerun_chain.py stage 3 on {upstream}"
    set_block_entry(FAMILIES, ["runtimes", "tensorflow-xla", "host_per_op"], f"{t_op:g}us",
                    f"calibration/fit/tf_runtime.py stage 1 on calibration/fit/tfxla-dispatch.csv "
                    f"({basis}; FasterTransformer's TF-XLA BERT-base batch-1 rows, a bare "
                    f"session.run loop; leave one sequence length out; median |error| in sample "
                    f"{e1[0]} %, out of sample {e1[1]} %; calibration/fit/TF-RUNTIME.md): host "
                    f"time per kernel of the XLA path, the TF executor running each cluster's "
                    f"_XlaRun and the executable's thunk loop issuing each cuBLAS call and fused "
                    f"kernel (TensorFlow 1.15 / NGC 20.x); it paces the launches only where it "
                    f"exceeds the kernel's own stream gap (launch_overhead + kernel_fixed_cost), "
                    f"so the fit is the least value on the 0.1 us grid with the least error, and "
                    f"0 says the stream gap alone already reaches the measured times")
    text = CATALOG_PUBLISHED.read_text()
    new = re.sub(r'(\("dle-bert-tf", "tensorflow-xla"\): \{"per_request": ")\d+us(")',
                 rf"\g<1>{round(h_bert * 1e3)}us\g<2>", text)
    if new == text and f'"{round(h_bert * 1e3)}us"' not in text:
        sys.exit("rerun_chain: catalog_published.py HARNESS_HOST has no dle-bert-tf per_request")
    CATALOG_PUBLISHED.write_text(new)
    prov = (f"calibration/fit/tf_runtime.py stage 3 on calibration/fit/tf-host.csv ({basis} and "
            f"XLA's {t_op:g} us per kernel; DeepLearningExamples TF1 ResNet-50 Estimator harness, "
            f"its four tables as four folds; one value for tensorflow and tensorflow-xla: the same "
            f"harness, XLA's own host cost is its dispatch per kernel; median |error| in sample "
            f"{e3[0]} %, out of sample {e3[1]} % (leave one table out); "
            f"calibration/fit/TF-RUNTIME.md)")
    for name, pre in (("a100-sxm4-40gb", ""),
                      ("a100-80gb", "fitted on the A100-SXM4-40GB rows and copied here: the "
                                    "host's time, not the GPU's: both DGX A100 models carry the "
                                    "same host, 2x AMD EPYC 7742 (")):
        for rt in ("tensorflow", "tensorflow-xla"):
            set_flow_entry(PROFILES / f"{name}.yaml", "host_per_request", rt,
                           f"{round(h_rn50 * 1e3)}us", "fitted", pre + prov + (")" if pre else ""))
    return (f"tensorflow-xla host_per_op {t_op:g} us ({e1[0]} / {e1[1]} %), TF1 BERT harness "
            f"{h_bert:.2f} ms ({e2[0]} / {e2[1]} %), TF1 ResNet-50 harness {h_rn50:.2f} ms "
            f"({e3[0]} / {e3[1]} %)")


def s4(gpumux: str, date: str, upstream: str) -> str:
    out = run([PY, FIT / "ort_kernel_cost.py", "--gpumux", gpumux, "--step-us", "0.25",
               "--max-us", "10"])
    m = re.search(r"F = ([\d.]+) us; folds ([^;]*); median \|error\| in ([\d.]+) %, out ([\d.]+) %",
                  out)
    if not m:
        sys.exit("rerun_chain: ort_kernel_cost.py printed no fit:\n" + out)
    f_us, folds, e_in, e_out = m.groups()
    fold_values = [float(x.split(":")[1]) for x in folds.split(", ")]
    set_block_entry(FAMILIES, ["runtimes", "onnxruntime", "kernel_fixed_cost"], f"{float(f_us):g}us",
                    f"calibration/fit/ort_kernel_cost.py on calibration/fit/ort-latency.csv "
                    f"({date}, calibration/fit/rerun_chain.py stage 4 on {upstream}; ONNX "
                    f"Runtime's own FP16 BERT-base benchmark on an A100-SXM4-40GB, batch 1-32 x "
                    f"sequence 8-128, microsoft/onnxruntime pull 12670; 9 points; leave one batch "
                    f"size out {min(fold_values):g}-{max(fold_values):g} us; median |error| in "
                    f"sample {e_in} %, out of sample {e_out} %, scanned from 0 to 10 us as the "
                    f"tenants' runtime_kernel_fixed_cost, the term itself; "
                    f"calibration/fit/ORT-KERNEL.md): device time per kernel in which the stream "
                    f"holds its context but no SM (runtime_fixed_cost.hpp); what ONNX Runtime "
                    f"spends it on is not measured by any source")
    return f"onnxruntime kernel_fixed_cost {float(f_us):g} us ({e_in} / {e_out} %)"


def s5(gpumux: str, date: str, upstream: str) -> str:
    out = run([PY, FIT / "triton_frontend.py", "--gpumux", gpumux])
    fits = dict((name, (lat, bw)) for name, lat, bw in
                re.findall(r"^fitted (\S+): L = (\S+), W = (\S+)$", out, re.M))
    errors = {n: (a, b) for n, a, b in re.findall(
        r"^`([\w-]+)`: median \|error\|.*?in sample ([\d.]+ %), out of sample ([\d.]+ %)",
        out, re.M)}
    what = {
        "triton-grpc": "the protocol's latency per request (serialization, the HTTP round trip "
                       "of perf_client -i http, the server's request handling) on the "
                       "DeepLearningExamples ResNet-50 Triton READMEs' ONNX Runtime-TensorRT and "
                       "TF-TRT rows, DGX A100 80GB, concurrency 1, batch 2 and 8, backend = gpumux "
                       "without a front end plus the Triton backend's fixed input stage, payload at "
                       "each model's serving-signature type (io_dtype)",
        "triton-grpc-tensorflow": "triton-grpc's L plus the fixed input stage of Triton's "
                                  "TensorFlow backend per execution (the intercept of Server "
                                  "Compute Input against the execution's bytes, the TF ResNet-50 "
                                  "Triton README's Online DGX A100 table, calibration/data/"
                                  "triton-backend-input/online-compute-input.csv); a TF-TRT "
                                  "SavedModel served by Triton's TensorFlow backend",
        "triton-shm": "client avg latency minus the same run's Server Compute Infer, BERT-large "
                      "Triton README, ONNX Runtime backend, inputs through system shared memory",
    }
    for name, (lat, bw) in fits.items():
        base = "triton-shm" if name == "triton-shm" else "triton-grpc"
        e = errors.get(base, ("?", "?"))
        prov = (f"calibration/fit/triton_frontend.py on calibration/fit/triton-frontend.csv "
                f"({date}, calibration/fit/rerun_chain.py stage 5 on {upstream}; median |error| "
                f"in sample {e[0]}, leave one source out {e[1]}; folds in "
                f"calibration/fit/TRITON-FRONTEND.md): {what.get(name, name)}")
        set_block_entry(FAMILIES, ["serving", name, "latency"], lat, prov)
        if bw != "None" and bw != "none":
            set_block_entry(FAMILIES, ["serving", name, "bandwidth"], bw,
                            "the same fit: the rate at which the request's input and output bytes "
                            "(the catalog's, at the request's io_dtype) pass the front end; " + prov)
    return "; ".join(f"{n} L {lat}" + (f", W {bw}" if bw not in ("None", "none") else "")
                     for n, (lat, bw) in fits.items()) or "serving front ends unchanged"


def s6(gpumux: str, date: str) -> str:
    out = run([PY, FIT / "llm_eager_dispatch.py", "--gpumux", gpumux, "--report",
               FIT / "LLM-DISPATCH.md"])
    m = re.search(r"Fitted host_per_op: \*\*([\d.]+) us\*\*", out)
    e = re.search(r"Median \|error\|: ([\d.]+) % in sample, ([\d.]+) % leaving", out)
    if not m:
        sys.exit("rerun_chain: llm_eager_dispatch.py printed no fit:\n" + out)
    ns = round(float(m.group(1)) * 1e3)
    text = ENGINE_CPU.read_text()
    grouped = f"{ns:,}".replace(",", "'")
    new = re.sub(r"(kVllmV0HostPerOp = )[\d']+;", rf"\g<1>{grouped};", text)
    ENGINE_CPU.write_text(new)
    return (f"vllm-v0 host_per_op {ns} ns" + (f" ({e.group(1)} / {e.group(2)} %)" if e else ""))


def s7(gpumux: str, date: str) -> str:
    out = run([PY, FIT / "ft_vit_host.py", "--gpumux", gpumux, "--date", date])
    m = re.search(r"t = ([\d.]+) us; folds ([^;]*); median \|error\| in ([\d.]+) %, out ([\d.]+) %",
                  out)
    if not m:
        sys.exit("rerun_chain: ft_vit_host.py printed no fit:\n" + out)
    return f"ft-vit host per_op {m.group(1)} us ({m.group(3)} / {m.group(4)} %)"


def checks(gpumux: str) -> list:
    """Every stage's check on the final binary; returns the failures."""
    failed = []
    for stage, args in (("S1", ["calibration/fit/solo-latency.csv", "--fit", S1_FIT]),
                        ("S2", ["calibration/fit/ft-host.csv", "--fit", "host_per_request",
                                "--profile", "a100-80gb"])):
        res = json.loads(run([gpumux, "calibrate", *args, "--json"]))
        for key, p in res["parameters"].items():
            if abs(p["fitted_ns"] - p["before_ns"]) > max(1.0, 1e-3 * p["before_ns"]):
                failed.append(f"{stage}: {key} refits to {p['fitted_ns']:.0f} ns, the profile "
                              f"holds {p['before_ns']:.0f} ns")
        e = res["errors"]["all"]
        log(f"{stage} check: in sample {pct(e['in_sample'])}, out of sample "
            f"{pct(e['out_of_sample'])}")
        if e["out_of_sample"] - e["in_sample"] > 0.05:
            failed.append(f"{stage}: out of sample more than 5 points above in sample")
    for stage, cmd in (("S4", [PY, FIT / "ort_kernel_cost.py", "--gpumux", gpumux, "--check"]),
                       ("S5", [PY, FIT / "triton_frontend.py", "--gpumux", gpumux, "--check"]),
                       ("S6", [PY, FIT / "llm_eager_dispatch.py", "--gpumux", gpumux,
                               "--check", ENGINE_CPU]),
                       ("S7", [PY, FIT / "ft_vit_host.py", "--gpumux", gpumux, "--check"]),
                       ("engine_cpu", [PY, FIT / "engine_cpu.py", "--check", ENGINE_CPU])):
        out = subprocess.run([str(c) for c in cmd], cwd=ROOT, capture_output=True, text=True)
        log(f"{stage} check: exit {out.returncode}")
        if out.returncode != 0:
            failed.append(f"{stage}: {' '.join(str(c) for c in cmd)} exited {out.returncode}: "
                          + (out.stdout + out.stderr).strip().splitlines()[-1])
    return failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpumux", default="build/gpumux")
    ap.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc)
                    .strftime("%Y-%m-%d"))
    ap.add_argument("--from", dest="first", type=int, default=1, choices=range(1, 9),
                    help="first stage to run (8: the checks alone)")
    # Bad input is one line and exit 2 before anything is rebuilt or written (argparse's usage
    # block was three lines; a folder that is not a build directory failed in ninja's words after
    # the first log line; a --date that is not a day went into every written provenance).
    def refuse(message: str) -> None:
        print(f"rerun_chain: error: {message}", file=sys.stderr)
        sys.exit(2)

    ap.error = refuse
    args = ap.parse_args()
    try:
        datetime.date.fromisoformat(args.date)
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date):
            raise ValueError(args.date)
    except ValueError:
        refuse(f"--date: expected a day as YYYY-MM-DD, got {args.date!r}")
    gpumux = str((ROOT / args.gpumux).resolve()) if not Path(args.gpumux).is_absolute() \
        else args.gpumux
    build = Path(gpumux).parent
    if not (build / "build.ninja").is_file():
        refuse(f"--gpumux {args.gpumux}: {build} is not a configured build directory (no "
               "build.ninja; the chain rebuilds gpumux there: run make configure)")
    summary = []
    upstream = "the profiles' shipped stage-1 values"
    stages = [
        (1, lambda: s1(gpumux, args.date)),
        (2, lambda: s2(gpumux, args.date, upstream)),
        (3, lambda: s3(gpumux, args.date, upstream)),
        (4, lambda: s4(gpumux, args.date, upstream)),
        (5, lambda: s5(gpumux, args.date, upstream)),
        (6, lambda: s6(gpumux, args.date)),
        (7, lambda: s7(gpumux, args.date)),
    ]
    rebuild(build)
    for n, stage in stages:
        if n < args.first:
            continue
        t = time.time()
        result = stage()
        if n == 1:
            upstream = "stage 1's " + result.split(";")[0]
        summary.append(f"S{n} ({time.time() - t:.0f} s): {result}")
        log(summary[-1])
        rebuild(build)
    failed = checks(gpumux)
    print("\n".join(["", "rerun_chain summary:", *summary]))
    if failed:
        print("checks failed:\n  " + "\n  ".join(failed))
        return 1
    print("every stage's check passes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
