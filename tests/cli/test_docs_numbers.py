"""Docs that cannot go stale (issue 24 item 8): scripts/docs_numbers.py re-runs the commands whose
numbers docs/ and scenarios/README.md quote and fails when a quoted number drifted
beyond its tolerance (the rounding of the quote; simulations are deterministic). This file runs
the cheap entries (each a run of seconds: every row of scenarios/README.md's table, the
contention probes); test_plan_shipped.py (label slow) the slow ones: the plan's table and
numbers from its one plan run, and test_plan's brute-force counts. It also checks that the
checker catches a drift, that --update rewrites the quote, and that a vanished quote is
reported."""
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import GPUMUX

REPO = Path(__file__).resolve().parents[2]
SCRIPT = str(REPO / "scripts" / "docs_numbers.py")


def docs_numbers(*args):
    return subprocess.run([sys.executable, SCRIPT, "--gpumux", GPUMUX, *args],
                          capture_output=True, text=True, timeout=900, cwd=REPO)


def test_quoted_numbers_match_the_commands():
    r = docs_numbers("--check", "--skip-slow")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 drifted" in r.stdout


def test_a_drifted_quote_fails_and_update_rewrites_it(tmp_path):
    (tmp_path / "scenarios").mkdir()
    readme = tmp_path / "scenarios" / "README.md"
    shutil.copy(REPO / "scenarios" / "README.md", readme)
    text = readme.read_text()
    marker = "| `gpumux run scenarios/quickstart.yaml` | chat p99 "
    start = text.index(marker) + len(marker)
    quoted = text[start:text.index(" ms", start)]
    drifted = text[:start] + "99.9" + text[start + len(quoted):]
    readme.write_text(drifted)
    r = docs_numbers("--check", "--only", "quickstart", "--root", str(tmp_path))
    assert r.returncode == 1
    assert f"[quickstart] quotes 99.9, `gpumux run scenarios/quickstart.yaml --json` gives " \
           f"{quoted}" in r.stdout, r.stdout
    assert docs_numbers("--update", "--only", "quickstart", "--root", str(tmp_path)).returncode == 0
    assert readme.read_text() == text
    assert docs_numbers("--check", "--only", "quickstart", "--root",
                        str(tmp_path)).returncode == 0


def test_a_quote_that_disappeared_is_reported(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "README.md").write_text("nothing quoted here\n")
    r = docs_numbers("--check", "--only", "quickstart", "--root", str(tmp_path))
    assert r.returncode == 1 and "the quote is gone" in r.stdout
