"""--format table|json|csv for run, compare and report (--json is --format json); CSV is one row
per tenant (and strategy) with a header whose column names carry the units.
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import csv
import io
import json
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")
HYBRID = str(REPO / "scenarios" / "hybrid-h100.yaml")
SHORT = ["--set", "duration=5s"]


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_run_csv_one_row_per_tenant_units_in_names():
    r = gpumux("run", HYBRID, *SHORT, "--format", "csv")
    assert r.returncode == 0, r.stderr
    table = rows(r.stdout)
    summary = json.loads(gpumux("run", HYBRID, *SHORT, "--format", "json").stdout)
    assert [row["tenant"] for row in table] == list(summary["tenants"])
    header = r.stdout.splitlines()[0].split(",")
    for column in ("latency_p99_ns", "throughput_per_s", "slo_p99_target_ns", "cost_usd",
                   "gpu_seconds_s", "device_sm_busy_fraction"):
        assert column in header
    assert "strategy" not in header
    for row in table:
        t = summary["tenants"][row["tenant"]]
        assert int(row["latency_p99_ns"]) == t["latency_ns"]["p99"]
        assert float(row["throughput_per_s"]) == pytest.approx(t["throughput_per_s"])
        assert row["device"] == t["device"]
        target = (t.get("slo_ns") or {}).get("p99")
        assert row["slo_p99_target_ns"] == ("" if target is None else str(target))


def test_json_is_an_alias_and_table_is_default():
    as_json = gpumux("run", QUICKSTART, "--json")
    as_format = gpumux("run", QUICKSTART, "--format", "json")
    assert json.loads(as_json.stdout)["tenants"] == json.loads(as_format.stdout)["tenants"]
    table = gpumux("run", QUICKSTART, "--format", "table")
    assert table.stdout.startswith("scenario: quickstart")
    assert gpumux("run", QUICKSTART).stdout.startswith("scenario: quickstart")


def test_compare_and_report_csv(tmp_path):
    out = tmp_path / "cmp.h5"
    r = gpumux("compare", HYBRID, "--strategies", "mig,mps", *SHORT, "--format", "csv",
               "-o", str(out))
    assert r.returncode == 0, r.stderr
    table = rows(r.stdout)
    assert len(table) == 2 * 15
    assert [row["strategy"] for row in table[::15]] == ["mig", "mps"]
    assert {row["device"] for row in table if row["strategy"] == "mps"} == {"gpu0"}
    report = gpumux("report", str(out), "--format", "csv")
    assert report.returncode == 0, report.stderr
    assert report.stdout == r.stdout
    lines = gpumux("report", str(out), "--format", "json").stdout.splitlines()
    assert [json.loads(line)["strategy"] for line in lines] == ["mig", "mps"]
    compare_json = json.loads(gpumux("compare", HYBRID, "--strategies", "mig,mps", *SHORT,
                                     "--json").stdout)
    assert [s["strategy"] for s in compare_json] == ["mig", "mps"]


@pytest.mark.parametrize("args,message", [
    (["run", QUICKSTART, "--format", "xml"], "--format xml: not one of table, json, yaml, csv"),
    (["run", QUICKSTART, "--format", "csv", "--json"], "--json contradicts --format csv"),
    (["compare", QUICKSTART, "--strategies", "mps", "--format", "toml"], "--format toml"),
])
def test_bad_format_one_line_exit_2(args, message):
    r = gpumux(*args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["run", "compare", "report"])
def test_help_lists_format(command):
    assert "--format" in gpumux(command, "--help").stdout
