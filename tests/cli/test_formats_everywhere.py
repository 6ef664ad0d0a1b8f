"""--format table|json|yaml (--json = --format json) on the listing commands (models, mig, mig
--check, strategies): the JSON holds the numbers the table shows, in machine units (bytes,
bytes/s, FLOP/s), and the YAML is the same document. -q/--quiet is accepted by every command
`gpumux help` lists. Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json
import re
from pathlib import Path

import pytest
import yaml

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")
GIB = 1024 ** 3


def data(*args):
    """The command's JSON (by --json and by --format json) and its YAML, checked to agree."""
    as_json = gpumux(*args, "--json")
    assert as_json.returncode in (0, 1), as_json.stderr
    spelled = gpumux(*args, "--format", "json")
    assert spelled.stdout == as_json.stdout and spelled.returncode == as_json.returncode
    as_yaml = gpumux(*args, "--format", "yaml")
    assert as_yaml.returncode == as_json.returncode, as_yaml.stderr
    parsed = json.loads(as_json.stdout)
    assert yaml.safe_load(as_yaml.stdout) == parsed
    return parsed, as_json.returncode


def test_models_json_holds_the_table_numbers():
    models, _ = data("models")
    table = gpumux("models").stdout
    rows = {line.split()[0]: line for line in table.splitlines()[1:] if line.strip()}
    assert len(models) >= 8 and len(models) == len(rows) - 1  # rows: the models and the hint
    for m in models:
        row = rows[m["model"]]
        assert f" {m['sms']} " in row
        assert f"{m['memory_bytes'] / GIB:.1f} GiB" in row
        assert f"{m['hbm_bandwidth_bytes_per_s'] / 1e12:.2f} TB/s" in row
        if m["fp16_tensor_flops"] is None:
            assert " - " in row
        else:
            assert f"{m['fp16_tensor_flops'] / 1e12:.1f} TFLOPS" in row
        for profile in m["mig_profiles"]:
            assert f" {profile}" in row
        assert row.rstrip().endswith(" | ".join(m["nvidia_smi_names"]) or "-")
    h100 = next(m for m in models if m["model"] == "h100-sxm-80gb")
    assert h100["sms"] == 132 and h100["hbm_bandwidth_bytes_per_s"] == pytest.approx(3.35e12)


def test_mig_listing_json_holds_the_table_numbers():
    mig, _ = data("mig", "h100-sxm-80gb")
    table = gpumux("mig", "h100-sxm-80gb").stdout
    assert mig["model"] == "h100-sxm-80gb"
    assert f"MIG: {mig['memory_slices']} memory slices, {mig['compute_slices']} compute slices" \
        in table
    rows = {m[0]: m[1:] for m in re.findall(
        r"^(\S+) +(\d+) +([\d.]+) GiB +(\d+) +(\d+) +(\d+)  (.+)$", table, re.MULTILINE)}
    assert len(mig["profiles"]) == len(rows) >= 5
    for p in mig["profiles"]:
        sms, gib, memory_slices, compute_slices, max_count, placements = rows[p["name"]]
        assert (int(sms), int(memory_slices), int(compute_slices), int(max_count)) == \
            (p["sms"], p["memory_slices"], p["compute_slices"], p["max_count"])
        assert float(gib) == pytest.approx(p["memory_bytes"] / GIB, abs=0.006)
        assert [int(r.split("-")[0]) for r in placements.split(", ")] == p["placements"]
    for name, instances in mig["layouts"].items():
        assert name in table and instances
        assert gpumux("mig", "h100-sxm-80gb", "--check", name).returncode == 0


def test_mig_check_json_holds_the_placements():
    fit, code = data("mig", "h100-sxm-80gb", "--check", "3g.40gb:1,2g.20gb:1,1g.10gb:2")
    assert code == 0 and fit["fits"] is True
    table = gpumux("mig", "h100-sxm-80gb", "--check", "3g.40gb:1,2g.20gb:1,1g.10gb:2").stdout
    assert [p["profile"] for p in fit["placements"]] == ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    for p in fit["placements"]:
        line = (f"#{p['index']}  {p['profile']}  memory slices {p['first_memory_slice']}-"
                f"{p['last_memory_slice']}  {p['sms']} SMs")
        assert line in table
        assert p["memory_bytes"] > GIB
    assert f"compute slices used: {fit['compute_slices_used']} of {fit['compute_slices']}" in table
    assert fit["compute_slices_used"] == 3 + 2 + 1 + 1

    refused, code = data("mig", "h100-sxm-80gb", "--check", "4g.40gb,4g.40gb")
    assert code == 1 and refused["fits"] is False and "placements" not in refused
    assert refused["reason"] in gpumux("mig", "h100-sxm-80gb", "--check", "4g.40gb,4g.40gb").stdout


def test_strategies_json_holds_the_table():
    listing, _ = data("strategies")
    table = "\n" + gpumux("strategies").stdout
    assert len(listing["strategies"]) >= 4
    for s in listing["strategies"]:
        assert f"\n{s['name']}: {s['summary']}\n" in table
        assert f"  mode:        {', '.join(s['modes'])}\n" in table
        assert f"  keys:        {', '.join(s['keys'])}\n" in table
        assert s["fault_scope"] in ("device", "client")
    assert f"compare --strategies: {', '.join(listing['compare_strategies'])}\n" in table
    mps = next(s for s in listing["strategies"] if s["name"] == "mps")
    assert mps["fault_scope"] == "device"
    assert [law["name"] for law in listing["contention_laws"]][:2] == ["residency", "fluid"]
    assert "contention_law: residency, fluid" in table


def test_strategies_prints_each_key_with_unit_default_and_doc_from_the_one_table():
    listing, _ = data("strategies")
    table = gpumux("strategies").stdout
    docs = (REPO / "docs" / "strategies.md").read_text()
    keyed = 0
    for s in listing["strategies"]:
        assert [p["key"] for p in s["parameters"]] == s["keys"][1:]  # (after `replicas`)
        for p in s["parameters"]:
            assert all(p[field] for field in ("unit", "default", "range", "doc")), p
            line = f"    {p['key']} ({p['unit']}; {p['range']}; default: {p['default']}): {p['doc']}\n"
            assert line in table, line
            cells = [p["unit"], p["default"], p["range"], p["doc"]]
            row = (f"| {s['name']} | `{p['key']}` | "
                   + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
            assert row in docs, row  # docs/strategies.md, "Strategy parameters"
            keyed += 1
    assert keyed >= 10
    mps = {p["key"]: p for s in listing["strategies"] if s["name"] == "mps" for p in s["parameters"]}
    assert mps["active_thread_percentage"]["unit"] == "%"
    assert mps["active_thread_percentage"]["default"].startswith("100 ")


def test_validate_json_holds_the_table():
    hybrid = str(REPO / "scenarios" / "hybrid-h100.yaml")
    report, code = data("validate", hybrid)
    assert code == 0 and report["status"] == "ok" and report["kind"] == "scenario"
    table = gpumux("validate", hybrid).stdout.splitlines()
    assert table[0] == (f"ok: {report['scenario']}: {report['gpus']} GPU(s), "
                        f"{len(report['devices'])} device(s), {report['tenants']} tenant(s)")
    assert len(table) == 1 + len(report["devices"]) >= 2
    for line, d in zip(table[1:], report["devices"]):
        assert line == (f"  {d['device']}  {d['profile']}  {d['sms']} SMs  {d['sharing']}  "
                        f"tenants: {' '.join(d['tenants'])}")
        assert d["memory_bytes"] > 0
    plan, _ = data("validate", str(REPO / "scenarios" / "plan" / "plan-h100-node.yaml"))
    assert plan["kind"] == "planning" and plan["tenants"] == 8 and plan["gpu_models"] >= 1
    cluster, _ = data("validate", str(REPO / "scenarios" / "cluster" / "openb-default.yaml"))
    assert cluster["kind"] == "cluster" and cluster["pods"] > 1000 and cluster["advertised"]


@pytest.mark.parametrize("args", [("models",), ("strategies",), ("mig", "a100-80gb"),
                                  ("validate", QUICKSTART)])
def test_listing_format_bad_input_is_one_line_exit_2(args):
    for bad in (["--format", "csv"], ["--format", "xml"], ["--json", "--format", "yaml"]):
        proc = gpumux(*args, *bad)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, (bad, proc.stderr)
        assert "--" in proc.stderr and proc.stdout == ""


def listed_commands():
    names = re.findall(r"^  ([a-z]+)\b", gpumux("help").stdout, re.MULTILINE)
    return [n for n in names if n != "help"]


def test_every_command_documents_quiet():
    commands = listed_commands()
    assert {"run", "compare", "validate", "models", "mig", "strategies", "completion"} <= set(commands)
    for command in commands:
        assert "--quiet" in gpumux(command, "--help").stdout, command


def test_quiet_is_accepted_everywhere(tmp_path):
    out = tmp_path / "out.h5"
    short = ["--set", "duration=7s"]
    assert gpumux("run", QUICKSTART, *short, "-o", str(out), "--quiet").returncode == 0
    quiet_runs = {
        "validate": [QUICKSTART],
        "inspect": [QUICKSTART],
        "report": [str(out)],
        "models": [],
        "strategies": [],
        "mig": ["h100-sxm-80gb"],
        "completion": ["bash"],
    }
    for command, args in quiet_runs.items():
        loud = gpumux(command, *args)
        quiet = gpumux(command, *args, "--quiet")
        assert quiet.returncode == loud.returncode == 0, (command, quiet.stderr)
        assert quiet.stdout == loud.stdout, command  # the data asked for still prints
    # compare: like run, nothing on success; --format json still prints the data
    compare = ["compare", QUICKSTART, *short, "--strategies", "mps,time-slicing"]
    assert gpumux(*compare).stdout.strip() != ""
    silent = gpumux(*compare, "-q")
    assert silent.returncode == 0 and silent.stdout == "", silent.stderr
    assert len(json.loads(gpumux(*compare, "--quiet", "--json").stdout)) == 2
    # plan and plot: the option parses (the error is the missing file, not the option)
    for command in ("plan", "plot"):
        args = ["missing.yaml"] if command == "plan" else ["missing.h5", "-o", str(tmp_path / "f.png")]
        proc = gpumux(command, *args, "--quiet")
        assert proc.returncode == 2 and "quiet" not in proc.stderr and "missing" in proc.stderr


def without_wall(value):
    """VALUE less `wall_s` (host time: it differs between two runs)."""
    if isinstance(value, dict):
        return {k: without_wall(v) for k, v in value.items() if k != "wall_s"}
    if isinstance(value, list):
        return [without_wall(v) for v in value]
    return value


def test_yaml_is_the_json_for_run_compare_report_inspect(tmp_path):
    out = tmp_path / "cmp.h5"
    short = ["--set", "duration=7s"]
    cases = [
        ["run", QUICKSTART, *short],
        ["compare", QUICKSTART, *short, "--strategies", "mps,time-slicing", "-o", str(out)],
        ["inspect", QUICKSTART],
    ]
    for args in cases:
        as_json = gpumux(*args, "--json")
        as_yaml = gpumux(*args, "--format", "yaml")
        assert as_json.returncode == as_yaml.returncode == 0, (args, as_yaml.stderr)
        assert without_wall(yaml.safe_load(as_yaml.stdout)) == \
            without_wall(json.loads(as_json.stdout)), args
    # report: --json is one line per run; yaml is one list of the same summaries
    lines = gpumux("report", str(out), "--json").stdout.splitlines()
    listed = yaml.safe_load(gpumux("report", str(out), "--format", "yaml").stdout)
    assert listed == [json.loads(line) for line in lines] and len(listed) == 2
