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
