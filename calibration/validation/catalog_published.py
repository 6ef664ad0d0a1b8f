#!/usr/bin/python3
"""Check the workload catalog against published measurements (issue 22 item 6).

Data (facts transcribed, sources and licences in data/published/SOURCE.md):
* data/published/solo.csv        a catalog workload alone on a named GPU: latency or throughput;
* data/published/mig_scaling.csv the same inference model on several MIG slices of one GPU;
* data/published/colocation.csv  an inference server beside a training job under MPS and
                                 time-slicing (Tally, A100);
* data/published/small_batch.csv a catalog workload alone at batch 1-8 on a whole GPU or on one
                                 MIG instance (MLPerf Inference v1.0-v3.0, TensorRT demoBERT,
                                 DeepLearningExamples Triton/TF, FasterTransformer).

A published point is calibration or validation, never both: the ids of every
calibration/fit/*.csv (the points `gpumux calibrate` fits to, docs/calibration.md) are not
scored here, nor a MIG ratio with one of them on either side; the report says how many.

For every point the script writes the scenario a user would write with catalog names only
(`workload: {model: NAME, batch: N, seq_len: L, dtype: D, phase: P}`, docs/workloads.md; LLMs `workload: {llm: {model: NAME, tp: N}}`), runs
`gpumux run --json` and compares. Nothing is fitted to these points: the catalog's kernels
come from its own sources, the profiles' time-alone terms from the calibration set, and a point
that disagrees is reported as it is.

A point whose workload the binary does not know (the catalog not built in, or a key it does not
accept) is listed as `pending` with gpumux's one-line reason, never given a number. The catalog
names are those of docs/workloads.md; `--names WORKLOAD=CATALOG,...` overrides them.

Metrics: avg_latency = the tenant's mean latency with one request in flight (closed loop,
concurrency 1); throughput = batch x requests/s of the same loop (a training request is one
step); step_rate = requests/s; ttft / tpot = the tenant's TTFT / TPOT p50 at batch 1 (gpumux
divides decode time by D - 1 tokens; Splitwise's token_time is the per-token decode time: the
same quantity); MIG and co-location points compare ratios (latency on a slice / whole GPU; p99
beside the neighbour / p99 alone), so a constant host-side offset in the measurement does not
count against the law. A co-location latency is what Tally's server times: each query from its
start (its Poisson arrival, or the previous query's end when the server is behind) to its end,
queueing excluded (query_times); the neighbour trains in Tally's precision (BE_WORKLOAD).

Usage:  /usr/bin/python3 calibration/validation/catalog_published.py [--gpumux build/gpumux]
        [--report calibration/validation/catalog-published.md] [--json out.json]
"""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np
import yaml

from catalog_reasons import reason_for
from catalog_report import coverage, report, summarise
from common import argument_parser, write_outputs

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "published"
FIT = HERE.parent / "fit"  # the calibration set (calibration/fit/SOURCE.md)
# MLPerf's BERT queries: SQuAD v1.1 dev samples of their real token lengths (max 384), the
# `seq_len:` distribution calibration/data/squad-v1.1/squad_lengths.py computed (SOURCE.md there).
SQUAD_SEQ_LEN = HERE.parent / "data" / "squad-v1.1" / "seq_len.yaml"

# Catalog names (docs/workloads.md) of the CSVs' workloads; the phase is the `phase:` key.
CATALOG = {"resnet50": "resnet50", "bert-base": "bert-base", "bert-large": "bert-large",
           "vit-b16": "vit-b16", "vit-l16": "vit-l16", "gpt2": "gpt2", "gpt2-large": "gpt2-large",
           "pointnet": "pointnet",
           # Tally's job is named whisper-large-v3 but its train_whisper.py loads
           # openai/whisper-small whatever the name (tally-bench, commits e1ad6f9 and f266e0e).
           "whisper-large-v3": "whisper-small"}
# The runtime each point was measured with (`workload.runtime:`, kernel-families.yaml), from the
# CSVs' `software` column: the first key found in it (case-insensitive) wins.
# The oumi nanoGPT recipe runs HF GPT-2 with attn_implementation "sdpa" (its committed
# configs/recipes/gpt2/pretraining/train.yaml): PyTorch eager with the fused attention kernel.
# FasterTransformer's C++ ViT example (solo.csv's ft-vit rows) runs FasterTransformer's own
# layers (models/vit/ViT.cc), not a TensorRT engine, whatever "fused kernels as TensorRT" says
# of its fused attention: kernel-families.yaml `fastertransformer`.
RUNTIME_OF_SOFTWARE = [("fastertransformer c++", "fastertransformer"),
                       ("tensorrt", "tensorrt"), ("onnx runtime", "onnxruntime"),
                       ("nanogpt", "pytorch-sdpa"), ("pytorch", "pytorch")]
# The `source` keys of the CSVs (details, commits and licences: data/published/SOURCE.md).
SOURCES = {
    "dle-rn50": "NVIDIA DeepLearningExamples, PyTorch ResNet-50 v1.5 README "
                "(github.com/NVIDIA/DeepLearningExamples)",
    "ft-vit": "NVIDIA FasterTransformer, docs/vit_guide.md, ViT performance on A100 "
              "(github.com/NVIDIA/FasterTransformer)",
    "dle-rn50-triton": "NVIDIA DeepLearningExamples, ResNet-50 on Triton README "
                       "(github.com/NVIDIA/DeepLearningExamples)",
    "dle-bert": "NVIDIA DeepLearningExamples, PyTorch BERT README "
                "(github.com/NVIDIA/DeepLearningExamples)",
    "trt-bert": "NVIDIA TensorRT demoBERT README, TensorRT 8.4.3 (github.com/NVIDIA/TensorRT)",
    "tally": "Tally artifact, ASPLOS'25 (github.com/tally-project/tally-bench)",
    "ort-pr12670": "ONNX Runtime pull 12670, A100-SXM4-40GB BERT-base benchmark "
                   "(github.com/microsoft/onnxruntime)",
    "splitwise": "Splitwise perf model, ISCA'24 (github.com/Mutinifni/splitwise-sim)",
    "migperf": "MIGPerf, arXiv:2301.00407 (github.com/HuaizhengZhang/MIGProfiler)",
    "oumi-103": "oumi nanoGPT recipe, github.com/oumi-ai/oumi pull 103",
    "mlperf-inf-v1.0": "MLCommons inference_results_v1.0, NVIDIA closed SingleStream "
                       "(github.com/mlcommons/inference_results_v1.0)",
    "mlperf-inf-v1.1": "MLCommons inference_results_v1.1, NVIDIA closed SingleStream",
    "mlperf-inf-v2.0": "MLCommons inference_results_v2.0, NVIDIA closed SingleStream",
    "mlperf-inf-v2.1": "MLCommons inference_results_v2.1, NVIDIA closed SingleStream",
    "mlperf-inf-v3.0": "MLCommons inference_results_v3.0, NVIDIA closed SingleStream",
    "trt-bert-10.7": "NVIDIA TensorRT demoBERT README, TensorRT 10.7 (github.com/NVIDIA/TensorRT)",
    "dle-bertl-triton": "NVIDIA DeepLearningExamples, BERT-large on Triton README",
    "dle-rn50-tftrt-triton": "NVIDIA DeepLearningExamples, TF ResNet-50 on Triton (TF-TRT) README",
    "dle-rn50-tf": "NVIDIA DeepLearningExamples, TensorFlow ResNet-50 v1.5 README",
    "dle-bert-tf": "NVIDIA DeepLearningExamples, TensorFlow BERT README (SQuAD inference)",
    "ft-bert": "NVIDIA FasterTransformer, docs/bert_guide.md (github.com/NVIDIA/FasterTransformer)",
}
LLM_CARDS = {"llama-2-7b", "llama-2-13b", "llama-2-70b"}
# MIGPerf does not state its precision ("FP32 (not stated)"): its batch-256 latency on the whole
# A100 40GB, 53 ms for BERT-base's 2.78 TFLOP (256 x 64 tokens x 2 x 85 M weights), is 52 TFLOP/s,
# beyond the 19.5 TFLOP/s of fp32 CUDA cores: its float32 matmuls ran on TF32 tensor cores
# (PyTorch 1.7-1.11's default, torch.backends.cuda.matmul.allow_tf32; pytorch.org, "TensorFloat-32
# (TF32) on Ampere devices").
PRECISION = {"AMP (FP16) NHWC": "fp16", "AMP (FP16)": "fp16", "FP16": "fp16", "TF32": "tf32",
             "FP16 (ONNX Runtime)": "fp16", "FP32 (not stated)": "tf32", "INT8": "int8",
             "FP16 (AMP)": "fp16", "TF32 + XLA": "tf32", "AMP (FP16) + XLA": "fp16"}
DURATION = "10s"

def read(name: str) -> list:
    return list(csv.DictReader((DATA / name).open()))


def calibration_ids() -> set:
    """The ids of every point of the calibration set (calibration/fit/*.csv): not scored here."""
    return {row["id"] for path in sorted(FIT.rglob("*.csv"))
            for row in csv.DictReader(path.open())}


class Gpumux:
    """Runs scenarios; remembers which workload specs the binary rejects and why."""

    def __init__(self, binary: str, tmp: Path):
        self.binary, self.tmp, self.count = binary, tmp, 0

    def run(self, scenario: dict, h5: bool = False) -> tuple[dict | None, str]:
        """(summary, "") or (None, gpumux's one-line error). With `h5`, the summary also holds
        the HDF5 result file's path under "h5"."""
        self.count += 1
        path = self.tmp / f"s{self.count}.yaml"
        path.write_text(yaml.safe_dump(scenario, sort_keys=False))
        extra = ["-o", str(path.with_suffix(".h5"))] if h5 else []
        proc = subprocess.run([self.binary, "run", str(path), "--json", *extra],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            line = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
            return None, re.sub(r"^.*?s\d+\.yaml:(\d+:\d+:)?\s*", "", line).strip()
        summary = json.loads(proc.stdout)
        if h5:
            summary["h5"] = str(path.with_suffix(".h5"))
        return summary, ""


def runtime_of(software: str) -> str | None:
    low = software.lower()
    return next((runtime for key, runtime in RUNTIME_OF_SOFTWARE if key in low), None)


# The GEMM library a source's harness ran every job with, where it is not the runtime's own
# (`workload.gemm_library:`, kernel-families.yaml `gemm_libraries:`). Tally's benchmark runs each
# job, its baselines alone, under MPS and under time-slicing included, with REPLACE_CUBLAS=TRUE
# under its local client (tally-bench python/bench_utils/bench.py, Benchmark.replace_cublas =
# True): ONNX Runtime's and PyTorch's cuBLAS GEMMs run Tally's CUTLASS kernels instead.
HARNESS_GEMM = {"tally": "tally-cutlass"}
# How a source's PyTorch jobs ran their convolutions, where not with cuDNN
# (`workload.conv_library:`, docs/workloads.md "Native convolution"). Tally's PyTorch
# (v2.2.0-tally) is built with USE_CUDNN=0 (tally-bench docker/Dockerfile.base), so every
# nn.Conv1d / nn.Conv2d runs aten's slow_conv2d: per sample an im2col and one GEMM (pytorch
# v2.2.0 aten/src/ATen/native/cuda/ConvolutionMM2d.cu).
HARNESS_CONV = {"tally": "native"}


# What a source's benchmark program fixes in the request, where the catalog's defaults differ
# (catalog keys). FasterTransformer's C++ ViT example (examples/cpp/vit/vit_example.cc, v5.0,
# github.com/NVIDIA/FasterTransformer commit a44c381, unchanged through v5.3) times 100 calls of
# ViTTransformer::forward between two CUDA events on stream 0, its input and output tensors
# allocated in device memory once before the loop: no copies and no host step per request (no
# host synchronisation in the forward: docs/workloads.md "FasterTransformer's own layers"); and
# it builds its cublasMMWrapper with a null allocator, so cublas_workspace_ is NULL and every
# cuBLASLt GEMM gets 0 bytes of workspace (utils/cublasMMWrapper.cc), which rules out split-K
# (`gemm_workspace: false`). Its host thread's time per operator (cuBLASLt's descriptors and
# heuristic per GEMM call, a launch per other kernel: calibration/fit/ft_vit_host.py's docstring)
# is fitted on the guide's ViT-L/16 batch-1 rows, which are calibration points
# (calibration/fit/ft-vit-host.csv), and read from the value that fit wrote.
FT_VIT_HOST = yaml.safe_load((FIT / "ft-vit-host.yaml").read_text())
SOURCE_REQUEST = {
    "ft-vit": {"host": {"per_request": "0ns", "input_bytes": "0B", "output_bytes": "0B",
                        "per_op": FT_VIT_HOST["per_op"]},
               "gemm_workspace": False},
}


def catalog_workload(row: dict, phase: str) -> dict | None:
    """The catalog spec of a CSV row, or None when the catalog has no such model."""
    name = CATALOG.get(row["workload"])
    if name is None:
        return None
    spec = {"model": name, "batch": int(row["batch"]), "phase": phase}
    if row.get("seq_len"):
        spec["seq_len"] = int(row["seq_len"])
    if row.get("precision") in PRECISION:
        spec["dtype"] = PRECISION[row["precision"]]
    elif row.get("dtype"):
        spec["dtype"] = row["dtype"]
    runtime = runtime_of(row.get("software", ""))
    if runtime:
        spec["runtime"] = runtime
    if row.get("memory_format"):
        spec["memory_format"] = row["memory_format"]
    serving = serving_of(row)
    if serving and phase == "inference":
        spec["serving"] = serving
    io_dtype = io_dtype_of(row)
    if io_dtype and phase == "inference":
        spec["io_dtype"] = io_dtype
    if row.get("source") in HARNESS_GEMM:
        spec["gemm_library"] = HARNESS_GEMM[row["source"]]
    if row.get("source") in HARNESS_CONV and runtime == "pytorch":
        spec["conv_library"] = HARNESS_CONV[row["source"]]
    if cuda_graph_of(row) and phase == "inference":
        spec["cuda_graph"] = True
    if phase == "inference":
        spec.update(SOURCE_REQUEST.get(row.get("source", ""), {}))
    return spec


def cuda_graph_of(row: dict) -> bool:
    """Whether the source launched the request's kernels as one CUDA graph: the CSVs' `cuda_graph`
    column (true/false; data/published/SOURCE.md says per source why). MLPerf rows follow their
    SingleStream config's `use_graphs`, demoBERT's `inference_benchmark.sh` runs `build/perf
    --enable_graph`, and Triton's TensorRT backend replays graphs only where the model config asks.
    A graph pays the profile's graph_launch_overhead (not launch_overhead) per kernel, plus
    kernel_fixed_cost, and no per-operator host dispatch (docs/workloads.md)."""
    value = row.get("cuda_graph", "")
    if value not in ("", "true", "false"):
        raise SystemExit(f"{row.get('id')}: cuda_graph {value!r} is not true or false")
    return value == "true"


def io_dtype_of(row: dict) -> str | None:
    """The element type of a point's request tensors where it is not the compute dtype
    (`workload.io_dtype:`, docs/workloads.md "Serving front end"): a TF-TRT SavedModel keeps the
    fp32 serving signature of its source model (TF-TRT converts an FP32 graph, DeepLearningExamples
    TensorFlow/Classification/ConvNets/triton/deployment_toolkit/bermuda/tf.py
    TFTRTConverter.required_source_model_precision; the serving input receiver's input_dtype is
    fp32 by default, triton/rn50_model.py), so its fp16 engines take fp32 images."""
    return "fp32" if "tf-trt" in row.get("software", "").lower() else None


def serving_of(row: dict) -> str | None:
    """The serving front end a point's client went through (`workload.serving:`,
    kernel-families.yaml `serving:`): Triton's latency measured client-side (perf_analyzer) is
    the backend's work plus the front end's; through system shared memory only the request's
    control message crosses the protocol (triton-shm), else the payload does (triton-grpc; the
    DeepLearningExamples ResNet-50 READMEs' perf_client runs go over HTTP). A TF-TRT SavedModel
    is served by Triton's TensorFlow backend, whose input stage has a fixed cost per execution
    (triton-grpc-tensorflow; calibration/fit/TRITON-FRONTEND.md). MLPerf's Triton harness calls
    the server in-process (its C API): no front end."""
    text = (row.get("software", "") + " " + row.get("note", "")).lower()
    if "triton" not in text or "client-side" not in text:
        return None
    if "shared memory" in text:
        return "triton-shm"
    return "triton-grpc-tensorflow" if "tf-trt" in text else "triton-grpc"


def closed_loop(spec: dict) -> dict:
    # One request in flight; the think time only spaces requests (and keeps the launch budget).
    return dict(spec, arrivals={"process": "closed", "concurrency": 1, "think": "1ms"})


def scenario(name: str, profile: str, tenants: list, sharing: str = "exclusive",
             mig: str | None = None, gpus: int = 1) -> dict:
    devices = []
    for i in range(gpus):
        gpu = {"name": f"gpu{i}", "model": profile, "sharing": {"mode": sharing}}
        if mig:
            gpu["mig"] = mig
        devices.append(gpu)
    return {"name": name, "seed": 1, "duration": DURATION, "warmup": "2s", "gpus": devices,
            "tenants": tenants}


def tenant(name: str, workload: dict, device="gpu0") -> dict:
    return {"name": name, "device": device, "workload": workload}


def solo_rows(g: Gpumux, skip: set) -> list:
    out = []
    for row in read("solo.csv"):
        if row["id"] in skip:
            continue
        base = {"section": "solo", "id": row["id"], "source": row["source"],
                "setup": f"{row['workload']} {row['phase']} on {row['gpu']}, batch {row['batch']}"
                         + (f", seq {row['seq_len']}" if row["seq_len"] else "")
                         + f", {row['precision']}, {row['software']}"
                         + f" (runtime: {runtime_of(row['software']) or 'default'}"
                         + (f", serving: {serving_of(row)}" if serving_of(row) else "") + ")"
                         + f": {row['metric']}",
                "measured": float(row["value"]), "unit": row["unit"], "profile": row["profile"]}
        base["entries"] = [CATALOG.get(row["workload"], row["workload"])]
        pred, why = predict_solo(g, row)
        out.append(dict(base, predicted=pred, pending=why,
                        error=None if pred is None else pred / base["measured"] - 1))
    return out


def predict_solo(g: Gpumux, row: dict) -> tuple[float | None, str]:
    metric, batch = row["metric"], int(row["batch"])
    if row["workload"] in LLM_CARDS:
        if metric not in ("ttft", "tpot"):
            return None, "not comparable: the prompt and output lengths of this request are not published"
        tp = int(re.search(r"tensor parallel (\d+)", row["note"]).group(1))
        wl = {"arrivals": {"process": "closed", "concurrency": 1, "think": "100ms"},
              "tokens": {"input": int(row["seq_len"]), "output": 128},
              "batching": {"max_batch": 1},
              "llm": {"model": row["workload"], "dtype": "fp16", "tp": tp}}
        if row["source"] == "splitwise":
            # assumption: Splitwise profiled an eager vLLM v0 (its prototype is built on vLLM):
            # the engine's CPU per iteration (Vidur's fit) and its dispatch per kernel
            # (calibration/fit/llm_eager_dispatch.py), docs/llm-serving.md
            wl["batching"]["engine_cpu"] = "vllm-v0"
            wl["llm"]["host_per_op"] = "vllm-v0"
        device = "gpu0" if tp == 1 else [f"gpu{i}" for i in range(tp)]
        summary, err = g.run(scenario(row["id"], row["profile"], [tenant("llm", wl, device)],
                                      gpus=tp))
        if summary is None:
            return None, err
        t = summary["tenants"]["llm"]
        key = "ttft_ns" if metric == "ttft" else "tpot_ns"
        return (t[key]["p50"] / 1e6, "") if key in t else (None, f"no {key} in the summary")
    phase = "training" if row["phase"] == "training" else "inference"
    spec = catalog_workload(row, phase)
    if spec is None:
        return None, f"no catalog entry for {row['workload']} {phase}"
    summary, err = g.run(scenario(row["id"], row["profile"], [tenant("w", closed_loop(spec))]))
    if summary is None:
        return None, err
    t = summary["tenants"]["w"]
    if metric in ("avg_latency", "request_latency"):
        return t["latency_ns"]["mean"] / 1e6, ""
    if metric == "throughput":
        return batch * t["throughput_per_s"], ""
    if metric == "step_rate":
        return t["throughput_per_s"], ""
    return None, f"metric {metric} not handled"


def mig_rows(g: Gpumux) -> list:
    """Latency on each slice divided by the latency on the largest slice of the same batch."""
    rows = read("mig_scaling.csv")
    out, whole = [], {}
    for row in rows:
        spec = catalog_workload(row, "inference")
        pred, why = None, ""
        if spec is None:
            why = f"no catalog entry for {row['workload']}"
        else:
            summary, why = g.run(scenario(row["id"], row["profile"],
                                          [tenant("w", closed_loop(spec), "gpu0/0")],
                                          mig=row["mig_instance"]))
            if summary is not None:
                pred = summary["tenants"]["w"]["latency_ns"]["mean"] / 1e6
        row = dict(row, predicted_ms=pred, pending=why)
        out.append(row)
        if row["mig_instance"].startswith("7g"):
            whole[row["batch"]] = row
    result = []
    for row in out:
        ref = whole.get(row["batch"])
        if ref is None or row is ref:
            continue
        measured = float(row["value"]) / float(ref["value"])
        both = row["predicted_ms"] is not None and ref["predicted_ms"] is not None
        pred = row["predicted_ms"] / ref["predicted_ms"] if both else None
        result.append({"section": "MIG", "id": row["id"], "source": row["source"],
                       "setup": f"{row['workload']} batch {row['batch']} on {row['mig_instance']}"
                                f" / {ref['mig_instance']} ({row['gpu']}, {row['software']}):"
                                " latency ratio",
                       "measured": measured, "predicted": pred, "unit": "x",
                       "entries": [CATALOG.get(row["workload"], row["workload"])],
                       "profile": row["profile"], "pending": row["pending"] or ref["pending"],
                       "error": None if pred is None else pred / measured - 1})
    return result


# small_batch.csv: one row per published number, several numbers per configuration (the id's
# suffix says which statistic). Only one statistic per configuration is scored, its mean (-mean,
# -avg, or no suffix); the 90th percentile (-p90), Triton's server-side compute time
# (-compute-infer) and the throughput (-thr, batch / mean latency at concurrency 1) of the same
# runs are not scored beside it. A configuration without a mean is scored by its lowest
# percentile, and so is one whose mean exceeds its own p99: the slowest 1 % of its iterations
# then carry the mean, iterations outside the steady state that gpumux simulates
# (DeepLearningExamples' TF1 BERT run_squad.py averages every timed session.run, the first ones
# with XLA's compilation, while its throughput drops the slowest 1 % as "outliers
# (init/warmup)"). A configuration whose scored row is a calibration point is left out whole
# (its other statistics are the same runs).
STATISTIC = re.compile(r"-(mean|avg|p90|p95|p99|compute-infer|thr)$")
MEAN_STATS = ("mean", "avg", "")
STAT_ORDER = MEAN_STATS + ("p90", "p95", "p99")


def statistic(point_id: str) -> tuple[str, str]:
    """(configuration, statistic) of a small_batch.csv id."""
    m = STATISTIC.search(point_id)
    return (point_id[:m.start()], m.group(1)) if m else (point_id, "")


def scored_rows(rows: list) -> tuple[list, int]:
    """The row scored per configuration (its mean, else its lowest percentile) in file order,
    and how many rows of other statistics are not scored."""
    best, value, lowest_percentile = {}, {}, {}
    for row in rows:
        config, stat = statistic(row["id"])
        if stat in STAT_ORDER:
            rank = 0 if stat in MEAN_STATS else STAT_ORDER.index(stat)
            if config not in best or rank < best[config][0]:
                best[config] = (rank, row["id"])
            value[config, "mean" if stat in MEAN_STATS else stat] = float(row["value"])
            if stat not in MEAN_STATS and (config not in lowest_percentile
                                           or rank < lowest_percentile[config][0]):
                lowest_percentile[config] = (rank, row["id"])
    for config, lowest in lowest_percentile.items():
        mean, p99 = value.get((config, "mean")), value.get((config, "p99"))
        if mean is not None and p99 is not None and mean > p99:
            best[config] = lowest  # the mean is carried by its slowest 1 % (above)
    keep = {rid for _, rid in best.values()}
    return [r for r in rows if r["id"] in keep], len(rows) - len(keep)


# Sources whose TensorRT engines TensorRT's ONNX parser built from a framework's ONNX export,
# without the BERT plugins (kernel-families.yaml `tensorrt-onnx`): DeepLearningExamples' Triton
# BERT deployment converts its PyTorch model's ONNX export with Model Navigator (TensorRT 8.0,
# PyTorch/LanguageModeling/BERT/triton/large/runner/pipeline_impl.py), for Triton's tensorrt
# backend and for ONNX Runtime's TensorRT execution provider alike.
ONNX_PARSER_ENGINES = {"dle-bertl-triton"}


def small_batch_runtime(row: dict) -> str:
    """The runtime a small_batch.csv point was measured with (`workload.runtime:`). The CSV's
    `runtime` column, except: ONNX Runtime's TensorRT execution provider hands the graph to
    TensorRT (its kernels and fusions are TensorRT's, as solo.csv's runtime_of reads it); an
    engine TensorRT's ONNX parser built from a framework's export (ONNX_PARSER_ENGINES) runs the
    graph's own attention, layer norms and GELU, not demoBERT's plugins (tensorrt-onnx);
    FasterTransformer's CustomExt / OP run its encoder (kernel-families.yaml `fastertransformer`:
    fused attention, bias + GELU after the GEMM, bias + residual + LayerNorm, and its host time
    per request). TensorFlow (the column is empty) is named as it is, and the binary says whether
    it knows it."""
    sw = row["software"]
    if row["source"] in ONNX_PARSER_ENGINES and (
            "TensorRT execution provider" in sw or row["runtime"] == "tensorrt"):
        return "tensorrt-onnx"
    if "TensorRT execution provider" in sw:
        return "tensorrt"
    if "FasterTransformer CustomExt" in sw or "FasterTransformer OP" in sw:
        return "fastertransformer"
    if row["runtime"]:
        return row["runtime"]
    return "tensorflow-xla" if "XLA" in sw else "tensorflow"


def harness(row: dict) -> str:
    return "Triton" if "triton" in row["software"].lower() else "no Triton"


# What the benchmark around the runtime spends per request, where a source's harness is not the
# one the profile's host_per_request was fitted on (the DeepLearningExamples TF1 ResNet-50
# Estimator with its image input pipeline, calibration/fit/tf-host.csv): the scenario states it
# in the tenant's `workload.host:` block (docs/workloads.md, "Host time"). Keys: (source, the
# runtime small_batch_runtime gives).
HARNESS_HOST = {
    # FasterTransformer's tf_benchmark.sh times a bare session.run loop; the guide says this
    # "hides the session-run overhead and memory copies" (docs/bert_guide.md): no per-request
    # host time and no copies. source: github.com/NVIDIA/FasterTransformer docs/bert_guide.md
    ("ft-bert", "tensorflow-xla"): {"per_request": "0ns", "input_bytes": "0B",
                                    "output_bytes": "0B"},
    # run_squad.py's Estimator.predict: one MonitoredSession.run per batch (hooks, the in-graph
    # TFRecord dataset's next batch, the fetch of the logits), timed by LogEvalRunHook.
    # fitted: calibration/fit/tf_runtime.py on calibration/fit/tf-bert-harness.csv
    # (calibration/fit/TF-RUNTIME.md, stage 2).
    ("dle-bert-tf", "tensorflow-xla"): {"per_request": "1870us"},
}
# The precision a source's rows ran at, where it is not the one the row names. The TF1 BERT
# README's A100 table gives fp16 (--amp) and tf32 (--noamp) rows of every configuration within
# 1 % of each other (BERT-large s384 b8 p90: 44.32 against 44.20 ms; on V100 the same script's
# fp16 rows are 3.4x its fp32 ones): on the A100 the --amp runs executed the TF32 kernels.
# source: DeepLearningExamples TensorFlow/LanguageModeling/BERT/README.md, "Fine-tuning inference
# performance for SQuAD v1.1 on DGX A100 40GB" (NGC 20.06-py3).
RAN_AT = {"dle-bert-tf": "tf32"}


def harness_host(row: dict) -> dict | None:
    """The `workload.host:` block of the harness a small_batch.csv point was measured with, or
    None where the profile's host time per request applies (HARNESS_HOST)."""
    host = HARNESS_HOST.get((row["source"], small_batch_runtime(row)))
    return dict(host) if host else None


PROFILES = HERE.parent / "profiles"


def profile_harnesses(profile: str) -> set:
    """The benchmark harnesses a shipped GPU profile has a host time for (its
    `harness_per_request:` keys)."""
    path = PROFILES / f"{profile}.yaml"
    doc = yaml.safe_load(path.read_text()) if path.is_file() else None
    return set((doc or {}).get("harness_per_request") or {})


def benchmark_harness(row: dict) -> str:
    """The benchmark harness a point was timed by, as the scenario names it (`workload.harness:`,
    the GPU profile's harness_per_request; docs/workloads.md "Benchmark harness"), or "". Every
    MLPerf Inference point is timed by LoadGen from its query's issue to its completion, through
    NVIDIA's harness (LWIS, the BERT harness, or its Triton harness in-process): the per-query
    host time fitted on calibration/fit/solo-latency.csv's MLPerf v1.0 rows (stage 1). A profile
    without it (the Ada and Hopper ones, which have no time-alone term yet, docs/calibration.md)
    runs the point without a harness, as it runs it without kernel_fixed_cost."""
    if not row["source"].startswith("mlperf-inf"):
        return ""
    return "mlperf-loadgen" if "mlperf-loadgen" in profile_harnesses(row["profile"]) else ""


def gpu_system(row: dict) -> str:
    """The machine a point ran on, without its MIG instance ("A30 (...), one 1g.6gb MIG
    instance" -> "A30 (...)"): a slice's whole-GPU partner ran on the same system."""
    return row["gpu"].split(", one ")[0]


def is_mlperf_bert(row: dict) -> bool:
    return row["source"].startswith("mlperf-inf") and row["workload"].startswith("bert")


def is_mlperf_triton(row: dict) -> bool:
    return row["source"].startswith("mlperf-inf") and "Triton" in row["software"]


# The length TensorRT's variable-length BERT plugin builds its fused attention kernel for under
# MLPerf's Triton harness: 384 for every query (workload `attention_seq_len:`,
# catalog_model.hpp "Attention grid"). The plugin picks its kernel from the shape of the
# engine's max_seqlen input (128, 192, 256 or 384 for INT8; source: github.com/NVIDIA/TensorRT
# plugin/bertQKVToContextPlugin/qkvToContextPlugin.cpp, QKVToContextVarSeqlenPlugin::enqueue);
# the harness's Triton config captures its CUDA graphs with max_seqlen of shape 384 at every
# total length, and Triton runs a captured graph for any smaller shape above graph_lower_bound
# (source: mlcommons/inference_results_v1.0, v1.1, v2.1 closed/NVIDIA/code/common/
# server_harness.py, set_bert_cuda_graph_specs; the SingleStream configs set use_graphs: true),
# where NVIDIA's own BERT harness (LWIS rows) captures a graph every 4 tokens of length at that
# length's max_seqlen (code/harness/harness_bert/bert_core_vs.cc, InitializeGraphSpecs).
MLPERF_TRITON_ATTENTION_SEQ_LEN = 384
# ... so under NVIDIA's own BERT harness each query runs the plugin's kernel of its own length's
# bucket (int8: 128, 192, 256 or 384; `attention_seq_len: bucket`, catalog_model.hpp
# varseqlen_kernel_length): the graph of a length L is captured with a max_seqlen of shape
# ceil(L / 4) x 4 (bert_core_vs.cc, InitializeGraphSpecs: graph specs (i, 1, i) every 4 tokens,
# GetClosestGraphSpec: the first spec whose max_seqlen holds the query's), whose bucket is L's
# (the buckets are multiples of 4). The file is unchanged v1.0 -> v1.1, and a later round's
# (reformatted) copy has the same default graph specs.
MLPERF_LWIS_ATTENTION_SEQ_LEN = "bucket"


def mlperf_attention_seq_len(row: dict):
    """`attention_seq_len:` of an MLPerf BERT point: the max_seqlen shape its harness's CUDA
    graphs carry (384 under Triton, the query's own bucket under NVIDIA's BERT harness)."""
    return (MLPERF_TRITON_ATTENTION_SEQ_LEN if is_mlperf_triton(row)
            else MLPERF_LWIS_ATTENTION_SEQ_LEN)


def squad_seq_len() -> dict:
    """The `seq_len:` distribution of MLPerf's BERT samples (calibration/data/squad-v1.1)."""
    return yaml.safe_load(SQUAD_SEQ_LEN.read_text())


def predict_small_batch(g: Gpumux, row: dict) -> tuple[float | None, str]:
    spec = catalog_workload(dict(row, software="", note=""), "inference")
    if spec is None:
        return None, f"no catalog entry for {row['workload']} inference"
    if is_mlperf_bert(row):
        # One SQuAD v1.1 sample per query, of its real length (the CSV's 384 is the maximum):
        # NVIDIA's harness runs the unpadded sequence.
        spec["seq_len"] = squad_seq_len()
        spec["attention_seq_len"] = mlperf_attention_seq_len(row)
    spec["runtime"] = small_batch_runtime(row)
    if row["source"] in RAN_AT:
        spec["dtype"] = RAN_AT[row["source"]]
    host = harness_host(row)
    if host:
        spec["host"] = host
    bench = benchmark_harness(row)
    if bench:
        spec["harness"] = bench
    serving = serving_of(row)
    if serving:
        spec["serving"] = serving
    if io_dtype_of(row):
        spec["io_dtype"] = io_dtype_of(row)
    mig = row["mig_instance"] or None
    if mig:
        proc = subprocess.run([g.binary, "mig", row["profile"], "--check", mig],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            msg = (proc.stdout + proc.stderr).strip().splitlines()[-1]
            return None, (f"the submission's instance name ({mig}) is not a MIG profile of "
                          f"{row['profile']} (gpumux mig: {msg})")
    summary, err = g.run(scenario(row["id"], row["profile"],
                                  [tenant("w", closed_loop(spec), "gpu0/0" if mig else "gpu0")],
                                  mig=mig))
    if summary is None:
        return None, err
    t = summary["tenants"]["w"]
    if row["metric"] == "throughput":
        return int(row["batch"]) * t["throughput_per_s"], ""
    stat = statistic(row["id"])[1]
    return t["latency_ns"]["mean" if stat in MEAN_STATS else stat] / 1e6 * (
        1e3 if row["unit"] == "us" else 1), ""


def small_batch_rows(g: Gpumux, skip: set) -> tuple[list, dict]:
    """small_batch.csv: every scored point alone (section solo on a whole GPU, MIG alone on an
    instance) and the MIG ratios (slice / whole GPU of the same source, system, workload, batch,
    seq_len, harness and statistic). Also what was left out: {"calibration": ids, "ratios":
    ratios with a calibration point on a side, "statistics": rows of unscored statistics}."""
    rows, other_stats = scored_rows(read("small_batch.csv"))
    left = {"calibration": [r["id"] for r in rows if r["id"] in skip], "ratios": 0,
            "statistics": other_stats}
    out, done = [], {}
    for row in rows:
        if row["id"] in skip:
            continue
        spec_unit = row["unit"]
        pred, why = predict_small_batch(g, row)
        runtime = small_batch_runtime(row)
        seq = ("SQuAD v1.1 lengths (max 384, calibration/data/squad-v1.1)"
               if is_mlperf_bert(row) else row["seq_len"])
        setup = (f"{row['workload']} on {row['gpu']}, batch {row['batch']}"
                 + (f", seq {seq}" if seq else "")
                 + f", {row['precision']}, {row['software']} (runtime: {runtime}"
                 + (f", serving: {serving_of(row)}" if serving_of(row) else "")
                 + (f", io_dtype: {io_dtype_of(row)}" if io_dtype_of(row) else "")
                 + (f", harness: {benchmark_harness(row)}" if benchmark_harness(row) else "")
                 + (", cuda_graph: true" if cuda_graph_of(row) else "")
                 + (f", attention_seq_len: {mlperf_attention_seq_len(row)}"
                    if is_mlperf_bert(row) else "")
                 + "): "
                 + (row["metric"] if row["metric"] == "throughput"
                    else f"{statistic(row['id'])[1] or 'mean'} latency"))
        r = {"section": "MIG alone" if row["mig_instance"] else "solo", "id": row["id"],
             "source": row["source"], "setup": setup, "measured": float(row["value"]),
             "unit": spec_unit, "profile": row["profile"] + (
                 f" {row['mig_instance']}" if row["mig_instance"] else ""),
             "entries": [CATALOG.get(row["workload"], row["workload"])],
             "predicted": pred, "pending": why,
             "error": None if pred is None else pred / float(row["value"]) - 1}
        out.append(r)
        done[row["id"]] = r

    def key(row):
        return (row["source"], gpu_system(row), row["profile"], row["workload"], row["batch"],
                row["seq_len"], harness(row), statistic(row["id"])[1], row["metric"])

    whole = {key(r): r for r in rows if not r["mig_instance"]}
    ratios = []
    for row in rows:
        ref = whole.get(key(row)) if row["mig_instance"] else None
        if ref is None:
            continue
        if row["id"] in skip or ref["id"] in skip:
            left["ratios"] += 1
            continue
        a, b = done[row["id"]], done[ref["id"]]
        measured = a["measured"] / b["measured"]
        pred = None if a["predicted"] is None or b["predicted"] is None else (
            a["predicted"] / b["predicted"])
        ratios.append({"section": "MIG", "id": row["id"] + "-ratio", "source": row["source"],
                       "setup": f"{row['workload']} batch {row['batch']}"
                                + (" seq SQuAD v1.1 lengths" if is_mlperf_bert(row)
                                   else f" seq {row['seq_len']}" if row["seq_len"] else "")
                                + f" on {row['mig_instance']} / whole {gpu_system(row)}"
                                  f" ({harness(row)}, {row['precision']}): "
                                  f"{statistic(row['id'])[1] or 'mean'} latency ratio",
                       "measured": measured, "predicted": pred, "unit": "x",
                       "entries": a["entries"], "profile": a["profile"],
                       "pending": "" if pred is not None else (a["pending"] or b["pending"]),
                       "error": None if pred is None else pred / measured - 1})
    return out + ratios, left


# Tally's neighbours (python/workloads/training/pytorch/*): the catalog spec of each.
# tally-bench python/configs/train_config.py runs every neighbour with amp: False, so fp32 in
# PyTorch; Tally's PyTorch (v2.2.0-tally) is built with USE_CUDNN=0 (tally-bench
# docker/Dockerfile.base), so its convolutions are PyTorch's own im2col + GEMM, and under
# REPLACE_CUBLAS every fp32 GEMM is Tally's CUTLASS SIMT kernel on the CUDA cores (tally
# src/tally/cutlass/cutlass.cu, "the same implementation for cuda core and tf32"): no TF32
# anywhere, every neighbour is fp32 with the tally-cutlass GEMM library (HARNESS_GEMM), and its
# convolutions are PyTorch's slow_conv2d loop over the samples, one im2col and one GEMM each
# (conv_library: native, HARNESS_CONV). gpt2-large trains on
# 512-token blocks (train_gpt2.py block_size), whisper's labels are Common Voice Hindi
# sentences (128 tokens assumed, the entry's default) and its Seq2SeqTrainingArguments set
# gradient_checkpointing=True (train_whisper.py; the only Tally trainer that does). Fields:
# catalog name, batch, seq_len, dtype, extra workload keys.
BE_WORKLOAD = {"resnet50 training batch 128 (PyTorch)": ("resnet50", 128, "", "fp32", {}),
               "pointnet training batch 128 (PyTorch)": ("pointnet", 128, "", "fp32", {}),
               "bert-base training batch 32 seq 384 (PyTorch)": ("bert-base", 32, "384", "fp32",
                                                                  {}),
               "whisper-large-v3 training batch 16 (PyTorch)": (
                   "whisper-large-v3", 16, "", "fp32", {"gradient_checkpointing": True}),
               "gpt2-large training batch 1 (PyTorch)": ("gpt2-large", 1, "512", "fp32", {})}


TALLY_SOLO = "bert-ort-a100-b1"  # the server's solo mean latency (solo.csv)


def colocation_rows(g: Gpumux) -> list:
    """p99 of the inference server beside the trainer / its p99 alone, at Tally's load 0.5."""
    out = []
    for row in read("colocation.csv"):
        measured = float(row["hp_shared"]) / float(row["hp_solo"])
        base = {"section": "MPS" if row["mechanism"] == "mps" else "time-slicing",
                "id": row["id"], "source": row["source"],
                "setup": f"{row['hp_workload']} beside {row['be_workload']} under "
                         f"{row['mechanism']} ({row['gpu']}): {row['metric']} shared / alone",
                "measured": measured, "unit": "x", "profile": row["profile"],
                "entries": [CATALOG.get(w.split()[0], w.split()[0])
                            for w in (row["hp_workload"], row["be_workload"])]}
        pred, why = predict_colocation(g, row)
        out.append(dict(base, predicted=pred, pending=why,
                        error=None if pred is None else pred / measured - 1))
    return out


def query_times(h5: str, name: str, warmup_ns: int) -> np.ndarray:
    """Tally's per-query latency (python/workloads/common/infer_monitor.py, ServerInferMonitor):
    its server runs one query at a time and times each from its start to its end; a query
    starts at its Poisson arrival or, when the server is behind, as soon as the previous one
    ends. So the latency of query i is finish_i - max(arrival_i, finish_{i-1}): the queueing
    wait of an open-loop latency is not in it. gpumux's `max_in_flight: 1` (the default of a
    Poisson tenant) serves the same loop; its /requests table has every arrival and finish."""
    with h5py.File(h5, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["tenant_names"][()]]
        req = f["requests"][()]
    rows = req[req["tenant"] == names.index(name)]
    rows = rows[np.argsort(rows["request_id"], kind="stable")]
    rows = rows[rows["finish_ns"] >= 0]
    arrival = rows["arrival_ns"].astype(np.float64)
    finish = rows["finish_ns"].astype(np.float64)
    begin = np.maximum(arrival, np.concatenate(([0.0], finish[:-1])))
    return (finish - begin)[arrival >= warmup_ns]


def predict_colocation(g: Gpumux, row: dict) -> tuple[float | None, str]:
    hp_name = row["hp_workload"].split()[0]
    be = BE_WORKLOAD.get(row["be_workload"])
    if be is None:
        return None, f"no catalog entry for the neighbour {row['be_workload']}"
    if hp_name in LLM_CARDS:
        return None, "not comparable: the Llama request's prompt and output lengths are not published"
    hp_spec = catalog_workload({"workload": hp_name, "batch": "1", "seq_len": "128",
                                "software": "ONNX Runtime", "source": row["source"]},
                               "inference")
    be_spec = catalog_workload({"workload": be[0], "batch": str(be[1]), "seq_len": be[2],
                                "dtype": be[3], "software": "PyTorch", "source": row["source"]},
                               "training")
    if hp_spec is None or be_spec is None:
        return None, "no catalog entry for this pair"
    be_spec.update(be[4])
    # Tally's server load 0.5: Poisson arrivals at half its measured solo service rate, 0.5 /
    # 4.05 ms = 123/s (the rate the experiment offered; a user's scenario writes this rate).
    solo_ms = next(float(r["value"]) for r in read("solo.csv") if r["id"] == TALLY_SOLO)
    hp_open = dict(hp_spec, arrivals={"process": "poisson", "rate": f"{0.5e3 / solo_ms:.6g}/s"})
    warmup = 2e9  # scenario()'s warmup
    alone, err = g.run(scenario(row["id"] + "-alone", row["profile"], [tenant("hp", hp_open)],
                                sharing=row["mechanism"]), h5=True)
    if alone is None:
        return None, err
    shared, err = g.run(scenario(row["id"], row["profile"],
                                 [tenant("hp", hp_open), tenant("be", closed_loop(be_spec))],
                                 sharing=row["mechanism"]), h5=True)
    if shared is None:
        return None, err
    be_out = shared["tenants"]["be"]
    if be_out["completed"] == 0:
        # A neighbour that never ran (refused at start, out of memory) leaves the server alone:
        # a ratio of 1 would compare nothing.
        why = "out of memory" if be_out.get("oom_events") else "no step completed"
        return None, f"the neighbour ran no step ({why})"
    stat = ((lambda x: float(np.percentile(x, 99))) if row["metric"] == "p99_latency"
            else (lambda x: float(np.mean(x))))
    times = [query_times(run["h5"], "hp", int(warmup)) for run in (alone, shared)]
    if any(len(t) == 0 for t in times):
        return None, "no query of the server completed in the measured window"
    return stat(times[1]) / stat(times[0]), ""


def validate(binary: str, names: dict) -> dict:
    CATALOG.update(names)
    skip = calibration_ids()
    with tempfile.TemporaryDirectory() as td:
        g = Gpumux(binary, Path(td))
        small, left = small_batch_rows(g, skip)
        rows = solo_rows(g, skip) + mig_rows(g) + colocation_rows(g) + small
    left["calibration"] = sorted(left["calibration"]
                                 + [r["id"] for r in read("solo.csv") if r["id"] in skip])
    # Sections in a fixed order: solo (solo.csv, then small_batch.csv's whole-GPU rows), MIG
    # alone, MIG, MPS, time-slicing.
    order = ["solo", "MIG alone", "MIG", "MPS", "time-slicing"]
    rows.sort(key=lambda r: order.index(r["section"]) if r["section"] in order else len(order))
    for r in rows:
        r["reason"] = reason_for(r["id"]) if r["error"] is not None and abs(r["error"]) > 0.25 else ""
    return {"rows": rows, "summary": summarise(rows), "coverage": coverage(rows),
            "sources": SOURCES, "left_out": left}


def main(argv=None) -> int:
    ap = argument_parser(__doc__, "catalog-published.md")
    ap.add_argument("--names", default="", help="overrides WORKLOAD=CATALOG_NAME,...")
    args = ap.parse_args(argv)
    names = dict(item.split("=") for item in filter(None, args.names.split(",")))
    res = validate(os.path.abspath(args.gpumux), names)
    write_outputs(args, report(res["rows"], res["summary"], res["left_out"], SOURCES), res)
    for s, v in res["summary"].items():
        med = "n/a" if v["median_abs"] is None else f"{100 * v['median_abs']:.1f}%"
        print(f"{s}: {v['compared']} of {v['points']} points compared, median |error| {med}, "
              f"{v['pending']} pending")
    return 0


if __name__ == "__main__":
    sys.exit(main())
