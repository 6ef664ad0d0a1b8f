#!/usr/bin/env python3
"""Re-runs the commands whose output docs/ and scenarios/README.md quote, and checks (or
rewrites) the quoted numbers, so the docs cannot go stale silently.

Each entry of QUOTES names a file, a marker (a regular expression whose capture groups are the
quoted numbers, in the text around them), the gpumux command that produces them, an extraction
(the command's output -> the numbers, in the groups' order) and a tolerance: how far the quoted
number may be from the produced one. Simulations are deterministic (same scenario and seed ->
the same numbers), so the tolerance is the rounding of the quote (half a unit of its last
digit), unless an entry says otherwise. A BLOCKS entry is a whole fenced output block (the plan
table) compared line by line, its timing fields masked.

Usage:
  scripts/docs_numbers.py --check [--skip-slow] [--only NAME ...]   exit 1 when a quote drifted
  scripts/docs_numbers.py --update [--only NAME ...]                rewrite the quotes in place
  scripts/docs_numbers.py --list                                    the entries
Options: --gpumux PATH (default $GPUMUX_BIN or build/gpumux), --root DIR (the tree whose docs
are checked; default this repository). Numbers quoted from wall-clock measurements (speed
tables) are dated measurements of a machine, not command outputs: bench/ re-measures them.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Quote:
    name: str
    file: str
    marker: str                          # regex; each group a quoted number
    command: list[str]                   # gpumux arguments, or ["@PROGRAM", ...] (a program of
                                         # the build tree) or ["%SCRIPT.py", ...] (a script of
                                         # the repository, run with --gpumux GPUMUX)
    extract: Callable[[str], list[float]]  # command stdout -> numbers, in group order
    slow: bool = False
    tolerance: float | None = None       # absolute; None: half a unit of the quote's last digit
    flags: int = re.S


@dataclass
class Block:
    name: str
    files: list[str]
    start: str                           # the first line of the block (the command)
    command: list[str]
    mask: list[str] = field(default_factory=list)  # regexes whose matches are not compared
    slow: bool = False


def _json(text: str) -> dict:
    return json.loads(text)


def _ms(ns) -> float:
    return float(ns) / 1e6


def _tenant(summary: dict, name: str) -> dict:
    return summary["tenants"][name]


# --- the quotes ---------------------------------------------------------------------------------
QUOTES = [
    Quote("quickstart", "scenarios/README.md",
          r"\| `gpumux run scenarios/quickstart.yaml` \| chat p99 ([0-9.]+) ms, busy ([0-9.]+) \|",
          ["run", "scenarios/quickstart.yaml", "--json"],
          lambda out: [_ms(_tenant(_json(out), "chat")["latency_ns"]["p99"]),
                       _json(out)["devices"]["gpu0"]["sm_busy"]]),
    Quote("exclusive", "scenarios/README.md",
          r"\| `gpumux run scenarios/exclusive-h100.yaml` \| bert p99 ([0-9.]+) ms, slowdown "
          r"([0-9.]+) \(own queueing only\), busy ([0-9.]+) \|",
          ["run", "scenarios/exclusive-h100.yaml", "--json"],
          lambda out: [_ms(_tenant(_json(out), "bert")["latency_ns"]["p99"]),
                       _tenant(_json(out), "bert")["slowdown_mean"],
                       _json(out)["devices"]["gpu0"]["sm_busy"]]),
    Quote("time-slicing", "scenarios/README.md",
          r"\| `gpumux run scenarios/time-slicing-h100.yaml` \| ([0-9,]+) context switches in 30 "
          r"s, busy ([0-9.]+) vs useful ([0-9.]+); embedder p99 ([0-9.]+) ms",
          ["run", "scenarios/time-slicing-h100.yaml", "--json"],
          lambda out: [_json(out)["devices"]["gpu0"]["context_switches"],
                       _json(out)["devices"]["gpu0"]["sm_busy"],
                       _json(out)["devices"]["gpu0"]["useful_fraction"],
                       _ms(_tenant(_json(out), "embedder")["latency_ns"]["p99"])]),
    Quote("training-plus-inference", "scenarios/README.md",
          r"beside a BERT-base service: inference p99 ([0-9.]+) ms \(CI \[([0-9.]+) ms, "
          r"([0-9.]+) ms\]\), SLO 100 ms missed",
          ["run", "scenarios/antipattern-training-plus-inference-timesliced.yaml", "--json"],
          lambda out: [_ms(_tenant(_json(out), "inference")["latency_ns"]["p99"]),
                       _ms(_tenant(_json(out), "inference")["slo"]["p99"]["low_ns"]),
                       _ms(_tenant(_json(out), "inference")["slo"]["p99"]["high_ns"])]),
    Quote("training-plus-inference-instruction", "scenarios/README.md",
          r"with instruction preemption p99 ([0-9.]+) ms, met",
          ["run", "scenarios/antipattern-training-plus-inference-timesliced.yaml", "--json",
           "--set", "gpus.0.sharing.preemption=instruction"],
          lambda out: [_ms(_tenant(_json(out), "inference")["latency_ns"]["p99"])]),
    Quote("memory-hog", "scenarios/README.md",
          r"\| victim oom_events ([0-9]+), completed ([0-9]+) of ([0-9,]+);",
          ["run", "scenarios/antipattern-memory-hog-timesliced.yaml", "--json"],
          lambda out: [_tenant(_json(out), "victim")["oom_events"],
                       _tenant(_json(out), "victim")["completed"],
                       _tenant(_json(out), "victim")["requests"]]),
]


def _compare(text: str, strategy: str) -> dict:
    """The summary of STRATEGY in `gpumux compare --json` output."""
    return next(s for s in _json(text) if s["strategy"] == strategy)


def _p(summary: dict, tenant: str, q: str = "p99") -> float:
    """A tenant's latency percentile, in ms."""
    return _ms(_tenant(summary, tenant)["latency_ns"][q])


def _switches(summary: dict) -> int:
    return sum(d["context_switches"] for d in summary["devices"].values())


def _range(values) -> list[float]:
    values = list(values)
    return [min(values), max(values)]


def _of(summary: dict, prefix: str, field) -> list[float]:
    """FIELD(tenant) over the tenants whose name starts with PREFIX."""
    return [field(t) for name, t in summary["tenants"].items() if name.startswith(prefix)]


# The key numbers of scenarios/README.md's table, row by row (each command runs in seconds).
QUOTES += [
    Quote("mig-all-balanced", "scenarios/README.md",
          r"\| ([0-9]+) context switches; classifier slowdown ([0-9.]+) on a 1g\.10gb \(14 of 108 "
          r"SMs\); reranker p99 ([0-9.]+) ms under MIG vs ([0-9.]+) ms time-slicing: isolation "
          r"costs peak speed\. Under MPS the small services wait behind the others' full-grid "
          r"kernels \(SM residency\): classifier p99 ([0-9.]+) s \|",
          ["compare", "scenarios/mig-all-balanced-a100.yaml", "--strategies",
           "mig,time-slicing,mps", "--json"],
          lambda out: [_switches(_compare(out, "mig")),
                       _tenant(_compare(out, "mig"), "classifier")["slowdown_mean"],
                       _p(_compare(out, "mig"), "reranker"),
                       _p(_compare(out, "time-slicing"), "reranker"),
                       _p(_compare(out, "mps"), "classifier") / 1e3]),
    Quote("time-slicing-under-mps", "scenarios/README.md",
          r"embedder p99 [0-9.]+ ms \(MPS: ([0-9.]+) ms, its kernels wait",
          ["compare", "scenarios/time-slicing-h100.yaml", "--strategies", "mps", "--json"],
          lambda out: [_p(_compare(out, "mps"), "embedder")]),
    Quote("mps-h100", "scenarios/README.md",
          r"\| ([0-9]+) switches; chat-small slowdown ([0-9.]+) \(the 25% thread cap",
          ["run", "scenarios/mps-h100.yaml", "--json"],
          lambda out: [_switches(_json(out)),
                       _tenant(_json(out), "chat-small")["slowdown_mean"]]),
    Quote("hybrid", "scenarios/README.md",
          r"\| small-a-\* p99 \(([0-9.]+)-([0-9.]+) ms\) is identical whether or not",
          ["run", "scenarios/hybrid-h100.yaml", "--set", "tenants.2.workload.arrivals.rate=60/s",
           "--json"],
          lambda out: _range(_of(_json(out), "small-a-",
                                 lambda t: _ms(t["latency_ns"]["p99"])))),
    Quote("hybrid-unloaded", "scenarios/README.md",
          r"\| small-a-\* p99 \(([0-9.]+)-([0-9.]+) ms\) is identical whether or not",
          ["run", "scenarios/hybrid-h100.yaml", "--json"],
          lambda out: _range(_of(_json(out), "small-a-",
                                 lambda t: _ms(t["latency_ns"]["p99"])))),
    Quote("mps-in-mig", "scenarios/README.md",
          r"\| ([0-9]+) switches on all 4 instances; vision slowdown ([0-9.]+)-([0-9.]+) \(1g "
          r"slice x 50% thread cap\)",
          ["compare", "scenarios/mps-in-mig-h200.yaml", "--strategies", "mig,mig+time-slicing,mps",
           "--json"],
          lambda out: [_switches(_compare(out, "mig")),
                       *_range(_of(_compare(out, "mig"), "vision-",
                                   lambda t: t["slowdown_mean"]))]),
    Quote("llm-serving", "scenarios/README.md",
          r"\| chat-13b p50 ([0-9]+) ms, p99 ([0-9.]+) s \(SLO 2\.5 s\) at 24/min;",
          ["run", "scenarios/pattern-llm-serving.yaml", "--json"],
          lambda out: [_p(_json(out), "chat-13b", "p50"), _p(_json(out), "chat-13b") / 1e3]),
    Quote("llm-serving-10x", "scenarios/README.md",
          r"at 24/min; 10x the rate: p50 ([0-9]+) ms",
          ["run", "scenarios/pattern-llm-serving.yaml", "--set",
           "tenants.0.workload.arrivals.rate=240/min", "--json"],
          lambda out: [_p(_json(out), "chat-13b", "p50")]),
    Quote("llm-serving-squeezed", "scenarios/README.md",
          r"squeezed onto one GPU, code-13b is OOM-killed at start \(([0-9]+) OOM, ([0-9]+) of "
          r"([0-9]+) requests completed\)",
          ["run", "scenarios/pattern-llm-serving.yaml", "--set", "tenants.1.device=gpu0", "--set",
           "gpus.0.sharing.mode=time-slicing", "--json"],
          lambda out: [_tenant(_json(out), "code-13b")["oom_events"],
                       _tenant(_json(out), "code-13b")["completed"],
                       _tenant(_json(out), "code-13b")["requests"]]),
    Quote("batch-inference", "scenarios/README.md",
          r"ResNet-50 batch 32 from the catalog: every model p99 ([0-9.]+)-([0-9.]+) ms "
          r"\(tolerance 100 ms\) with 12 clients on one GPU; busy ([0-9.]+) \|",
          ["run", "scenarios/pattern-batch-inference.yaml", "--json"],
          lambda out: [*_range(_of(_json(out), "model-", lambda t: _ms(t["latency_ns"]["p99"]))),
                       _json(out)["devices"]["gpu0"]["sm_busy"]]),
    Quote("training", "scenarios/README.md",
          r"GPT-2 \(124M\) training step from the catalog: busy ([0-9.]+) on both GPUs "
          r"\(lockstep\); step time p50 ([0-9.]+) ms \|",
          ["run", "scenarios/pattern-training.yaml", "--json"],
          lambda out: [min(d["sm_busy"] for d in _json(out)["devices"].values()),
                       _p(_json(out), "trainer", "p50")]),
    Quote("development", "scenarios/README.md",
          r"fine-tuning cells: busy ([0-9.]+) with 8 users; notebook slowdown "
          r"([0-9.]+)-([0-9.]+) \|",
          ["compare", "scenarios/pattern-development.yaml", "--strategies",
           "time-slicing,exclusive", "--json"],
          lambda out: [_compare(out, "time-slicing")["devices"]["gpu0"]["sm_busy"],
                       *_range(t["slowdown_mean"]
                               for t in _compare(out, "time-slicing")["tenants"].values())]),
    Quote("mps-fault-blast-radius", "scenarios/README.md",
          r"as written \(MPS per MIG instance\): a-0\.\.a-2 fail ([0-9]+)/([0-9]+)/([0-9]+) "
          r"requests, b-\* ([0-9]+); under `mps` \(one server\) all six fail \(b-\* "
          r"([0-9]+)-([0-9]+) each\)",
          ["compare", "scenarios/antipattern-mps-fault-blast-radius.yaml", "--strategies",
           "mps,mig", "--json"],
          lambda out: [*(_tenant(_compare(out, "mig"), f"a-{i}")["failed"] for i in range(3)),
                       sum(_of(_compare(out, "mig"), "b-", lambda t: t["failed"])),
                       *_range(_of(_compare(out, "mps"), "b-", lambda t: t["failed"]))]),
    Quote("azure-llm", "scenarios/README.md",
          r"\| chat-7b p99 ([0-9.]+) s at ([0-9.]+) req/s",
          ["run", "scenarios/trace-azure-llm.yaml", "--json"],
          lambda out: [_p(_json(out), "chat-7b") / 1e3,
                       _tenant(_json(out), "chat-7b")["throughput_per_s"]]),
    Quote("nsys-decode", "scenarios/README.md",
          r"\| decode p50 ([0-9.]+) ms dedicated \(about the recorded span \+ one launch\); p99 "
          r"([0-9.]+) ms time-sliced, ([0-9.]+) ms dedicated; memory ([0-9.]+) GiB from the "
          r"trace's allocations \|",
          ["compare", "scenarios/trace-nsys-decode-a100.yaml", "--strategies",
           "time-slicing,mps,dedicated", "--json"],
          lambda out: [_p(_compare(out, "dedicated"), "decode", "p50"),
                       _p(_compare(out, "time-slicing"), "decode"),
                       _p(_compare(out, "dedicated"), "decode"),
                       _compare(out, "dedicated")["devices"]["dedicated-decode"]
                       ["memory_peak_bytes"] / 2**30]),
    Quote("torch-rescaled", "scenarios/README.md",
          r"\| decode p50 ([0-9.]+) ms on the H100 vs 1\.47 ms recorded \|",
          ["run", "scenarios/trace-torch-rescaled-h100.yaml", "--json"],
          lambda out: [_p(_json(out), "decode", "p50")]),
    Quote("csv-mig", "scenarios/README.md",
          r"\| decode p50 ([0-9.]+) ms on 42 of 108 SMs \(slowdown ([0-9.]+)\) \|",
          ["compare", "scenarios/trace-csv-mig-a100.yaml", "--strategies", "mig,mps,time-slicing",
           "--json"],
          lambda out: [_p(_compare(out, "mig"), "decode", "p50"),
                       _tenant(_compare(out, "mig"), "decode")["slowdown_mean"]]),
    Quote("orion", "scenarios/README.md",
          r"\| vision p50 ([0-9.]+) ms, p99 ([0-9.]+) ms under MPS \|",
          ["compare", "scenarios/trace-orion-resnet50-a100.yaml", "--strategies",
           "mps,time-slicing,dedicated", "--json"],
          lambda out: [_p(_compare(out, "mps"), "vision", "p50"),
                       _p(_compare(out, "mps"), "vision")]),
]

# Two workers, as the docs quote it: the search's work counts depend on the worker count (each
# batch of simulations is filled up to it), everything else does not.

def _probes(out: str) -> list[float]:
    """calibration/validation/contention_probes.py: the streaming clients' HBM throughput (x one
    client; the same for 2 to 48), two full-grid kernels (x one), the inference kernel beside
    training (x its solo latency), 1000 1-us kernels on an H200 in a stream and as a graph (ms)."""
    streaming = [float(x) for x in re.findall(
        r"^MPS, +\d+ streaming clients: aggregate HBM throughput ([0-9.]+) x one", out, re.M)]
    two = re.search(r"^two full-grid kernels .* aggregate ([0-9.]+)x one", out, re.M)
    residual = re.search(r"^100 us inference kernel .*: ([0-9.]+)x its solo latency", out, re.M)
    graph = re.search(r"^1000 back-to-back 1 us kernels on an H200: ([0-9.]+) ms in a stream, "
                      r"([0-9.]+) ms as a CUDA graph", out, re.M)
    if len(streaming) != 5 or two is None or residual is None or graph is None:
        raise RuntimeError("contention_probes.py printed an unexpected report:\n" + out)
    if max(streaming) - min(streaming) > 0.005:
        raise RuntimeError(f"streaming throughput differs with the client count: {streaming}")
    return [streaming[0], float(two[1]), float(residual[1]), float(graph[1]), float(graph[2])]


QUOTES += [
    Quote("contention-probes", "docs/validation.md",
          r"2 to 48\s+streaming MPS clients keep ([0-9.]+)x the HBM throughput of one \(no "
          r"collapse\); two full-grid kernels\s+co-run at ([0-9.]+)x, not 2x; a 100 us inference "
          r"kernel beside 10 ms full-grid training waits the\s+residual \(([0-9.]+)x its solo "
          r"latency, D²/2\(D\+L\) within 0\.1 %\); 1000 back-to-back 1 us kernels take\s+"
          r"([0-9.]+) ms on an H200 \(([0-9.]+) ms as a CUDA graph\)",
          ["%calibration/validation/contention_probes.py"], _probes),
]

PLAN_COMMAND = ["plan", "scenarios/plan/plan-h100-node.yaml", "--jobs", "2", "-o", "best.yaml"]


def _plan_numbers(out: str) -> list[float]:
    """GPUs and $/h of the best setup, and $/h of the dedicated row, from the plan table."""
    best = re.search(r"^best: ([0-9.]+) \S+/h on (\d+) GPU", out, re.M)
    dedicated = re.search(r"^\d+\s+dedicated\s+([0-9.]+) ", out, re.M)
    if best is None or dedicated is None:
        raise RuntimeError("the plan found no setup:\n" + out)
    return [float(best.group(2)), float(best.group(1)), float(dedicated.group(1))]


def _plan_search(out: str) -> list[float]:
    """The search line: setups in the space and after the bounds (mantissas of x 10^10 and
    10^8), % pruned, units, pruned units, simulations, of them over a longer window; then the
    winner's window (s) and the vLLM server's samples."""
    m = re.search(r"^search: ([0-9.e+]+) setups in the space, ([0-9.e+]+) left after the bounds "
                  r"\(([0-9.]+) % pruned\); (\d+) units \((\d+) pruned\), (\d+) simulations "
                  r"\((\d+) over a longer window", out, re.M)
    window = re.search(r"^best: .*; simulated ([0-9.]+) s$", out, re.M)
    vllm = re.search(r"^  vllm-chat .*\((\d+) samples, CI", out, re.M)
    if m is None or window is None or vllm is None:
        raise RuntimeError("the plan's output has no search line, best line or vllm-chat row:\n"
                           + out)
    return [float(m[1]) / 1e10, float(m[2]) / 1e8, float(m[3]), *(float(m[i]) for i in range(4, 8)),
            float(window[1]), float(vllm[1])]


def _tenant_row(out: str, tenant: str) -> list[float]:
    """A tenant row of the plan's tenant table: value, target (in the row's units), samples,
    interval."""
    m = re.search(rf"^  {re.escape(tenant)} .* p99 ([0-9.]+) ms / ([0-9.]+) ms \((\d+) samples, CI "
                  r"\[([0-9.]+) ms, ([0-9.]+) ms\]\)$", out, re.M)
    if m is None:
        raise RuntimeError(f"no {tenant} row in the plan's tenant table:\n" + out)
    return [float(m[i]) for i in range(1, 6)]


QUOTES += [
    Quote("plan-numbers", "docs/plan.md",
          r"window\s+grown up to 10 min where a verdict needs it\): ([0-9.]+) x 10\^10 setups, "
          r"([0-9.]+) x 10\^8 left after the\s+bounds \(([0-9.]+) % pruned\); ([0-9,]+) units "
          r"considered, ([0-9,]+) pruned, ([0-9,]+) simulations on 2 workers, ([0-9,]+)\s+of them "
          r"over a longer window for an inconclusive verdict \(the vLLM server's p99 is decided "
          r"at\s+([0-9]+) s, on ([0-9,]+) requests\)",
          PLAN_COMMAND, _plan_search, slow=True),
    Quote("plan-window", "docs/howto/plan-a-node.md",
          r"the longer windows the verdicts need\s+\(the vLLM server's p99 is decided over\s+"
          r"([0-9]+) s\)", PLAN_COMMAND, lambda out: _plan_search(out)[7:8], slow=True),
    Quote("plan-tenant-row", "docs/plan.md",
          r"interval \(`p99 ([0-9.]+) ms / ([0-9.]+) ms \((\d+) samples, CI \[([0-9.]+) ms, "
          r"([0-9.]+) ms\]\)`\)", PLAN_COMMAND, lambda out: _tenant_row(out, "rerank"), slow=True),
    Quote("plan-prose", "docs/howto/plan-a-node.md",
          r"(\d+) H100s at \$([0-9.]+)/h instead of eight dedicated ones at \$([0-9.]+)/h",
          PLAN_COMMAND, _plan_numbers, slow=True),
    Quote("plan-answer", "docs/plan.md",
          r"Answer \(with the small models and the batch job from the workload catalog\): (\d+) "
          r"H100s at\s+\$([0-9.]+)/h.*?dedicated GPUs would cost \$([0-9.]+)/h",
          PLAN_COMMAND, _plan_numbers, slow=True),
]
BLOCKS = [
    # The plan table of the source document's node: every line but the search's wall time.
    Block("plan", ["docs/howto/plan-a-node.md"],
          "$ gpumux plan scenarios/plan/plan-h100-node.yaml --jobs 2 -o best.yaml", PLAN_COMMAND,
          mask=[r"DP rounds, [0-9.]+ s"], slow=True),
    # The same node on GKE nodes, with what it writes for kubectl and gcloud.
    Block("plan-gke", ["docs/howto/plan-a-node.md"],
          "$ gpumux plan scenarios/plan/plan-h100-node.yaml --jobs 2 --platform gke -o deploy",
          ["plan", "scenarios/plan/plan-h100-node.yaml", "--jobs", "2", "--platform", "gke", "-o",
           "deploy"],
          mask=[r"DP rounds, [0-9.]+ s"], slow=True),
]


def _brute_force(out: str) -> list[float]:
    """The planner's and brute force's simulations over test_plan's random instances: ranges."""
    runs = re.findall(r"^instance \d+: planner (\d+) simulations, brute force (\d+),", out, re.M)
    if len(runs) != 12:
        raise RuntimeError("test_plan printed no 12 instances:\n" + out)
    return [*_range(float(p) for p, _ in runs), *_range(float(b) for _, b in runs)]


QUOTES += [
    Quote("plan-brute-force", "docs/plan.md",
          r"the same optimum every time, with ([0-9,]+)-([0-9,]+)\s+simulations instead of "
          r"([0-9,]+)-([0-9,]+)\.",
          ["@tests/test_plan", "--gtest_filter=Plan.MatchesBruteForceOnRandomSmallInstances"],
          _brute_force, slow=True),
]


# --- checking -----------------------------------------------------------------------------------
_OUTPUTS: dict = {}


def _gpumux_run(gpumux: str, command: list[str], cwd: Path) -> str:
    """The command's stdout (each command runs once per invocation of this script)."""
    key = (gpumux, tuple(command))
    if key not in _OUTPUTS:
        _OUTPUTS[key] = _run_once(gpumux, command, cwd)
    return _OUTPUTS[key]


def _display(command: list[str]) -> str:
    """The command as the messages name it."""
    if command and command[0].startswith("@"):
        return " ".join([f"build/{command[0][1:]}", *command[1:]])
    if command and command[0].startswith("%"):
        return " ".join(["/usr/bin/python3", command[0][1:], *command[1:]])
    return "gpumux " + " ".join(command)


def _run_once(gpumux: str, command: list[str], cwd: Path) -> str:
    args = list(command)
    program = [gpumux]
    if args and args[0].startswith("@"):  # a program of the build tree beside the gpumux binary
        program = [str(Path(gpumux).resolve().parent / args.pop(0)[1:])]
    elif args and args[0].startswith("%"):  # a script of the repository, on this gpumux
        program = [sys.executable, str(REPO / args.pop(0)[1:]), "--gpumux", gpumux]
    scratch = None
    if "-o" in args:  # what the command writes goes to a scratch folder, never into the tree
        scratch = tempfile.mkdtemp(prefix="docs-numbers-")
        at = args.index("-o") + 1
        args[at] = os.path.join(scratch, os.path.basename(args[at]))
    try:
        done = subprocess.run([*program, *args], capture_output=True, text=True, cwd=cwd,
                              timeout=3600)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{_display(command)}: exit {done.returncode}: {done.stderr.strip()}")
    # The written file's name as the docs give it ("wrote best.yaml"), not the scratch path.
    return done.stdout if scratch is None else done.stdout.replace(scratch + os.sep, "")


def _half_unit(text: str) -> float:
    digits = text.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return 0.5 * 10 ** -decimals


def _format_like(value: float, text: str) -> str:
    digits = text.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    out = f"{value:,.{decimals}f}" if "," in text else f"{value:.{decimals}f}"
    return out


def check_quote(q: Quote, root: Path, gpumux: str, update: bool) -> list[str]:
    path = root / q.file
    text = path.read_text(encoding="utf-8")
    match = re.search(q.marker, text, q.flags)
    if match is None:
        return [f"{q.file}: [{q.name}] the quote is gone (marker not found: {q.marker[:60]}...)"]
    values = q.extract(_gpumux_run(gpumux, q.command, REPO))
    problems = []
    replaced = text
    for group, value in reversed(list(enumerate(values, start=1))):
        quoted = match.group(group)
        tolerance = q.tolerance if q.tolerance is not None else _half_unit(quoted)
        number = float(quoted.replace(",", ""))
        if abs(number - float(value)) > tolerance + 1e-12:
            problems.append(f"{q.file}: [{q.name}] quotes {quoted}, `{_display(q.command)}` "
                            f"gives {_format_like(float(value), quoted)} "
                            f"(tolerance {tolerance:g})")
            start, end = match.span(group)
            replaced = replaced[:start] + _format_like(float(value), quoted) + replaced[end:]
    if update and replaced != text:
        path.write_text(replaced, encoding="utf-8")
    return problems


def _masked(line: str, masks: list[str]) -> str:
    for mask in masks:
        line = re.sub(mask, "<masked>", line)
    return line.rstrip()


def check_block(b: Block, root: Path, gpumux: str, update: bool) -> list[str]:
    output = _gpumux_run(gpumux, b.command, REPO).rstrip("\n").splitlines()
    problems = []
    for name in b.files:
        path = root / name
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        try:
            first = lines.index(b.start)
        except ValueError:
            problems.append(f"{name}: [{b.name}] the block is gone (no line '{b.start}')")
            continue
        last = next(i for i in range(first + 1, len(lines)) if lines[i].startswith("```"))
        quoted = lines[first + 1:last]
        if [_masked(x, b.mask) for x in quoted] != [_masked(x, b.mask) for x in output]:
            diff = next((i for i, (a, c) in enumerate(zip(quoted, output))
                         if _masked(a, b.mask) != _masked(c, b.mask)),
                        min(len(quoted), len(output)))
            shown = output[diff] if diff < len(output) else "(end of output)"
            problems.append(f"{name}: [{b.name}] line {first + 2 + diff} of the quoted output "
                            f"differs from `{_display(b.command)}`: now '{shown.strip()}'")
            if update:
                lines[first + 1:last] = output
                path.write_text("\n".join(lines) + ("\n" if text.endswith("\n") else ""),
                                encoding="utf-8")
    return problems


def entries_named(names: list[str]) -> list:
    """The entries of QUOTES and BLOCKS with these names (KeyError for an unknown one)."""
    by_name = {e.name: e for e in [*QUOTES, *BLOCKS]}
    return [by_name[name] for name in names]


def check_entries(entries: list, root: Path, gpumux: str, update: bool = False,
                  outputs: dict | None = None) -> list[str]:
    """Checks (or with UPDATE rewrites) ENTRIES in the tree ROOT: one line per drifted or missing
    quote. OUTPUTS maps a command (its gpumux arguments, a tuple) to its stdout when the caller
    already ran it (tests/cli/test_plan_shipped.py: the plan runs once for its checks and the
    docs'); other commands are run, each once."""
    for command, stdout in (outputs or {}).items():
        _OUTPUTS[(gpumux, tuple(command))] = stdout
    problems = []
    for e in entries:
        check = check_quote if isinstance(e, Quote) else check_block
        problems += check(e, root, gpumux, update)
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    mode.add_argument("--list", action="store_true")
    parser.add_argument("--skip-slow", action="store_true", help="leave out the slow commands")
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME")
    parser.add_argument("--gpumux", default=os.environ.get("GPUMUX_BIN")
                        or str(REPO / "build" / "gpumux"))
    parser.add_argument("--root", default=str(REPO), help="the tree whose docs are checked")
    args = parser.parse_args(argv)
    entries = [*QUOTES, *BLOCKS]
    if args.only:
        unknown = set(args.only) - {e.name for e in entries}
        if unknown:
            parser.error(f"unknown entries: {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e.name in args.only]
    if args.skip_slow:
        entries = [e for e in entries if not e.slow]
    if args.list:
        for e in entries:
            files = e.file if isinstance(e, Quote) else ", ".join(e.files)
            print(f"{e.name:40} {files:28} {_display(e.command)}"
                  + ("  (slow)" if e.slow else ""))
        return 0
    problems = check_entries(entries, Path(args.root), args.gpumux, args.update)
    for p in problems:
        print(p)
    if args.update:
        print(f"{len(problems)} quote(s) rewritten")
        return 0
    print(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} checked, "
          f"{len(problems)} drifted")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
