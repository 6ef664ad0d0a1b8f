"""What every validation script shares: its command line (--gpumux, --report, --json) and how it
writes its report and numbers."""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def argument_parser(doc: str, report_name: str) -> argparse.ArgumentParser:
    """The shared options; a script adds its own before parse_args()."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--gpumux", default=os.environ.get("GPUMUX_BIN")
                        or str(REPO / "build" / "gpumux"))
    parser.add_argument("--report", default=str(HERE / report_name))
    parser.add_argument("--json", help="also write the numbers as JSON here")
    return parser


def write_outputs(args: argparse.Namespace, report_text: str, numbers) -> None:
    """The Markdown report to --report, and the numbers as JSON to --json when asked."""
    Path(args.report).write_text(report_text)
    if args.json:
        Path(args.json).write_text(json.dumps(numbers, indent=1))


def run_scenario(gpumux: str, scenario, path: Path, *extra: str, timeout: int = 600) -> dict:
    """Writes `scenario` (a dict, dumped as YAML, or YAML text) to `path`, runs `gpumux run
    PATH --json EXTRA...` and returns the summary; a failed run stops the script with gpumux's
    one-line error."""
    import subprocess

    import yaml

    text = scenario if isinstance(scenario, str) else yaml.safe_dump(scenario, sort_keys=False)
    path.write_text(text)
    proc = subprocess.run([gpumux, "run", str(path), "--json", *extra], capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"gpumux failed on {path}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)
