#!/usr/bin/env python3
"""Re-runs the commands whose output README.md and docs/ quote, and checks (or rewrites) the
quoted numbers, so the docs cannot go stale silently.

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
    command: list[str]                   # gpumux arguments
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
          r"beside a BERT-base service: inference p99 ([0-9.]+) ms \(slowdown ([0-9.]+)\)",
          ["run", "scenarios/antipattern-training-plus-inference-timesliced.yaml", "--json"],
          lambda out: [_ms(_tenant(_json(out), "inference")["latency_ns"]["p99"]),
                       _tenant(_json(out), "inference")["slowdown_mean"]]),
    Quote("training-plus-inference-instruction", "scenarios/README.md",
          r"SLO held; ([0-9.]+) ms with instruction preemption",
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

PLAN_COMMAND = ["plan", "scenarios/plan/plan-h100-node.yaml", "-o", "best.yaml"]


def _plan_numbers(out: str) -> list[float]:
    """GPUs and $/h of the best setup, and $/h of the dedicated row, from the plan table."""
    best = re.search(r"^best: ([0-9.]+) \S+/h on (\d+) GPU", out, re.M)
    dedicated = re.search(r"^\d+\s+dedicated\s+([0-9.]+) ", out, re.M)
    if best is None or dedicated is None:
        raise RuntimeError("the plan found no setup:\n" + out)
    return [float(best.group(2)), float(best.group(1)), float(dedicated.group(1))]


QUOTES += [
    Quote("plan-prose", "README.md",
          r"(\d+) H100s at \$([0-9.]+)/h instead of eight dedicated ones at \$([0-9.]+)/h",
          PLAN_COMMAND, _plan_numbers, slow=True),
    Quote("plan-answer", "docs/plan.md",
          r"Answer \(with the small models and the batch job from the workload catalog\): (\d+) "
          r"H100s at\s+\$([0-9.]+)/h.*?dedicated GPUs would cost \$([0-9.]+)/h",
          PLAN_COMMAND, _plan_numbers, slow=True),
]
BLOCKS = [
    # The plan table of the source document's node: every line but the search line's work
    # counts and time (they depend on the worker count: batches are filled up to it).
    Block("plan", ["README.md"],
          "$ gpumux plan scenarios/plan/plan-h100-node.yaml -o best.yaml", PLAN_COMMAND,
          mask=[r"; \d+ units \(.*$"], slow=True),
]


# --- checking -----------------------------------------------------------------------------------
_OUTPUTS: dict = {}


def _gpumux_run(gpumux: str, command: list[str], cwd: Path) -> str:
    """The command's stdout (each command runs once per invocation of this script)."""
    key = (gpumux, tuple(command))
    if key not in _OUTPUTS:
        _OUTPUTS[key] = _run_once(gpumux, command, cwd)
    return _OUTPUTS[key]


def _run_once(gpumux: str, command: list[str], cwd: Path) -> str:
    args = list(command)
    scratch = None
    if "-o" in args:  # what the command writes goes to a scratch folder, never into the tree
        scratch = tempfile.mkdtemp(prefix="docs-numbers-")
        at = args.index("-o") + 1
        args[at] = os.path.join(scratch, os.path.basename(args[at]))
    try:
        done = subprocess.run([gpumux, *args], capture_output=True, text=True, cwd=cwd,
                              timeout=900)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.strip()}")
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
            problems.append(f"{q.file}: [{q.name}] quotes {quoted}, `gpumux "
                            f"{' '.join(q.command)}` gives {_format_like(float(value), quoted)} "
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
                            f"differs from `gpumux {' '.join(b.command)}`: now '{shown.strip()}'")
            if update:
                lines[first + 1:last] = output
                path.write_text("\n".join(lines) + ("\n" if text.endswith("\n") else ""),
                                encoding="utf-8")
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
            print(f"{e.name:40} {files:28} gpumux {' '.join(e.command)}"
                  + ("  (slow)" if e.slow else ""))
        return 0
    root = Path(args.root)
    problems = []
    for e in entries:
        check = check_quote if isinstance(e, Quote) else check_block
        problems += check(e, root, args.gpumux, args.update)
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
