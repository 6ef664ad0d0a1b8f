"""The text tables of a tenant that completed no request (OOM-killed at start): its latency
percentiles, max and slowdown do not apply, so run, report and compare print "—", not "0 ns" or
0.00x (issue 35, papercuts); the JSON summary keeps its numbers and types; columns stay aligned
with the multi-byte dash."""
import json
from pathlib import Path

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
HOG = str(REPO / "scenarios" / "antipattern-memory-hog-timesliced.yaml")
DASH = "—"


def table(text, first_header):
    """{row name: {header: cell}} of the whitespace-aligned table whose header starts with
    FIRST_HEADER; also checks every line of it is as wide as the rule under the header."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first_header))
    header, rule = lines[start], lines[start + 1]
    spans, at = [], 0
    for dashes in rule.split("  "):
        if dashes:
            spans.append((at, at + len(dashes)))
        at += len(dashes) + 2
    names = [header[a:b].strip() for a, b in spans]
    rows = {}
    for line in lines[start + 2:]:
        if not line.strip():
            break
        assert len(line) <= len(rule), (line, rule)  # counted in characters: aligned
        cells = [line[a:b].strip() for a, b in spans]
        rows[cells[0]] = dict(zip(names, cells))
    return rows


def test_run_table_prints_a_dash_for_statistics_of_no_completed_request(tmp_path):
    r = gpumux("run", HOG, "-o", str(tmp_path / "hog.h5"))
    assert r.returncode == 0, r.stderr
    rows = table(r.stdout, "tenant  device")
    victim, hog = rows["victim"], rows["hog"]
    assert victim["completed"] == "0" and victim["OOMs"] == "1"
    for column in ("p50", "p99", "p99.9", "max", "slowdown"):
        assert victim[column] == DASH, (column, victim)
        assert hog[column] not in (DASH, "0 ns"), (column, hog)  # a tenant that completed some
    assert "0 ns" not in r.stdout.split("tenant  SLO")[0]
    # report prints the stored file the same way
    report = gpumux("report", str(tmp_path / "hog.h5"))
    assert report.returncode == 0 and table(report.stdout, "tenant  device")["victim"] == victim
    # the JSON keeps the engine's numbers (0 with no samples), unchanged in type
    summary = json.loads(gpumux("run", HOG, "--json").stdout)
    latency = summary["tenants"]["victim"]["latency_ns"]
    assert latency["p50"] == 0 and latency["p99"] == 0 and latency["p99_low"] is None


def test_compare_tables_print_a_dash_too():
    r = gpumux("compare", HOG, "--strategies", "time-slicing,mps")
    assert r.returncode == 0, r.stderr
    overview = table(r.stdout, "strategy  ")
    for strategy in ("time-slicing", "mps"):
        assert overview[strategy]["SLO worst p99"] == DASH, overview[strategy]
        assert overview[strategy]["BE worst p99"].endswith(" ms")
    victim = table(r.stdout, "tenant victim")
    for row in ("p50", "p99", "slowdown"):
        assert victim[row]["time-slicing"] == DASH and victim[row]["mps"] == DASH, victim[row]
    hog = table(r.stdout, "tenant hog")
    assert hog["p99"]["time-slicing"].endswith(" ms")
