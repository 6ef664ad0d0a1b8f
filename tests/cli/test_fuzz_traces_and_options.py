"""Targeted mutations of the surfaces test_fuzz_scenarios.py reaches only by random bytes: the
kernel traces as workloads (gpumux's CSV, Orion's CSV, an Nsight Systems SQLite export, a
PyTorch profiler JSON), NVIDIA mig-parted configs read by the cluster scenarios, and the
options beside the scenario (`--set KEY=VALUE`, `--seed`, `compare --strategies`, `report
--format/--html`, `mig --check`, `run --workers/--shards` on a cluster).

The trace cases change one field per kind of value (NaN, infinity, negative, zero, huge, a
word, a duration of 9e18 ns), reorder or drop rows and columns, empty the file, leave only its
header, or replace it by a directory, a FIFO or nothing; the SQLite cases run one SQL statement
on the export (a kernel ending before it starts, a grid of 0 or 9e18, a table or column
dropped). The mig-parted cases are test_fuzz_scenarios.py's YAML mutations with fixed seeds
plus semantic ones (a device index past the node, a count of 99, a malformed device-filter).

Asserted for every case, by test_fuzz_scenarios.check: exit 0 or 2, never a signal, exit 3 or a
traceback; on exit 2 one stderr line `gpumux: error: ` naming the mutated file or the scenario,
the same line from `validate` and `run`, and nothing left in -o's folder. Options: exit 0 or 2,
on 2 one line naming the option (or the --set key) and no output file.

Request-arrival traces (the Azure LLM CSV: unsorted, out-of-range dates, bad token counts) are
covered too. Found and fixed (2026-12-07, 372 tests): a mig-parted `device-filter` that is not a
PCI ID ("zz", 12) was read and then never matched, silently; `compare --strategies mig,mig` ran
the strategy twice into two result groups of one name. Both now exit 2 naming the file, line and
key (or --strategies). Drives $GPUMUX_BIN; 13-15 s on two loaded cores.
"""
import json
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import run_gpumux
from test_fuzz_scenarios import check, mutate_yaml

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
KERNELS = "traces/kernels"
CSV = f"{KERNELS}/llama7b-decode-a100.csv"
ORION = f"{KERNELS}/orion/resnet50_4_fwd.csv"
NSYS = f"{KERNELS}/llama7b-decode-a100.sqlite"
TORCH = f"{KERNELS}/llama7b-decode-a100.pt.trace.json"
SCENARIO_OF = {CSV: "trace-csv-mig-a100.yaml", ORION: "trace-orion-resnet50-a100.yaml",
               NSYS: "trace-nsys-decode-a100.yaml", TORCH: "trace-torch-rescaled-h100.yaml"}
VALUES = ["nan", "-5", "inf", "1e30", "0", "x", "", "9000000000000000000", "1.5", "-0"]
CASE_SEED = 20261209
MIG_PARTED_CASES = 40


def csv_field(path, row, column, value):
    def mutate(tree):
        lines = (tree / path).read_text().splitlines()
        fields = lines[row].split(",")
        fields[column] = value
        lines[row] = ",".join(fields)
        (tree / path).write_text("\n".join(lines) + "\n")
    return mutate


def csv_lines(path, edit):
    def mutate(tree):
        lines = (tree / path).read_text().splitlines()
        (tree / path).write_text("\n".join(edit(lines)) + "\n")
    return mutate


def replace_file(path, make):
    def mutate(tree):
        (tree / path).unlink()
        make(tree / path)
    return mutate


def sql(statement):
    def mutate(tree):
        connection = sqlite3.connect(tree / NSYS)
        connection.executescript(statement)
        connection.commit()
        connection.close()
    return mutate


def torch_edit(edit):
    def mutate(tree):
        trace = json.loads((tree / TORCH).read_text())
        kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
        edit(trace, kernels)
        (tree / TORCH).write_text(json.dumps(trace))
    return mutate


def set_in(mapping, key, value):
    mapping[key] = value


def trace_cases():
    """(trace, what, mutate(tree)) for every targeted trace mutation."""
    cases = []
    for column in range(8):  # name,duration_ns,grid,block,registers,shared memory,gap_ns,stream
        for value in VALUES:
            cases.append((CSV, f"row 3 column {column} -> {value!r}", csv_field(CSV, 3, column,
                                                                              value)))
    for column in range(5):  # Name,Profile,Memory_footprint,SM_usage,Duration
        for value in VALUES + ["101", "-1"]:
            cases.append((ORION, f"row 2 column {column} -> {value!r}",
                          csv_field(ORION, 2, column, value)))
    for path in (CSV, ORION):
        cases += [
            (path, "only the header", csv_lines(path, lambda lines: lines[:1])),
            (path, "rows reversed", csv_lines(path, lambda lines: lines[:1] + lines[:0:-1])),
            (path, "a column added", csv_lines(path, lambda lines: [x + ",1" for x in lines])),
            (path, "last column dropped",
             csv_lines(path, lambda lines: [x.rsplit(",", 1)[0] for x in lines])),
            (path, "columns reversed",
             csv_lines(path, lambda lines: [",".join(x.split(",")[::-1]) for x in lines])),
            (path, "a short row", csv_lines(path, lambda lines: lines[:2] + ["k,1"] + lines[2:])),
            (path, "CRLF and a BOM",
             csv_lines(path, lambda lines: ["\ufeff" + lines[0] + "\r"] + [x + "\r" for x in
                                                                           lines[1:]])),
        ]
    for value in ["0x1x1", "8x1", "4294967296x65536x65536", "99999999999999999999", "-1x1x1"]:
        cases.append((CSV, f"grid -> {value}", csv_field(CSV, 1, 2, value)))
        cases.append((CSV, f"block -> {value}", csv_field(CSV, 1, 3, value)))
    for path in SCENARIO_OF:
        cases += [(path, "a directory", replace_file(path, lambda p: p.mkdir())),
                  (path, "a FIFO", replace_file(path, os.mkfifo)),
                  (path, "missing", replace_file(path, lambda p: None)),
                  (path, "empty", replace_file(path, lambda p: p.write_bytes(b""))),
                  (path, "non-UTF-8", replace_file(path, lambda p: p.write_bytes(b"\xff\xfe\x00")))]
    table = "CUPTI_ACTIVITY_KIND_KERNEL"
    for statement in [f"UPDATE {table} SET end=start-5 WHERE rowid=3",
                      f"UPDATE {table} SET end=start WHERE rowid=3",
                      f"UPDATE {table} SET start='abc' WHERE rowid=3",
                      f"UPDATE {table} SET start=1e300 WHERE rowid=3",
                      f"UPDATE {table} SET start=0.5 WHERE rowid=3",
                      f"UPDATE {table} SET end=9000000000000000000 WHERE rowid=3",
                      f"UPDATE {table} SET start=-9000000000000000000 WHERE rowid=1",
                      f"UPDATE {table} SET start=start+100000000 WHERE rowid=1",
                      f"UPDATE {table} SET gridX=0 WHERE rowid=3",
                      f"UPDATE {table} SET gridX=-1 WHERE rowid=3",
                      f"UPDATE {table} SET gridX=9000000000000000000 WHERE rowid=3",
                      f"UPDATE {table} SET blockX=0 WHERE rowid=3",
                      f"UPDATE {table} SET registersPerThread=-1 WHERE rowid=3",
                      f"UPDATE {table} SET staticSharedMemory=-1 WHERE rowid=3",
                      f"UPDATE {table} SET shortName=99999 WHERE rowid=3",
                      f"DELETE FROM {table}",
                      f"DROP TABLE {table}",
                      "DROP TABLE StringIds",
                      f"ALTER TABLE {table} DROP COLUMN gridX",
                      f"ALTER TABLE {table} RENAME COLUMN start TO begin"]:
        cases.append((NSYS, statement, sql(statement)))
    for value in [-1, 0, 1e300, "x", None, [1], float("nan")]:
        for key in ("dur", "ts"):
            cases.append((TORCH, f"kernel 2 {key} -> {value!r}",
                          torch_edit(lambda t, k, key=key, value=value: set_in(k[1], key, value))))
        for key in ("grid", "registers per thread", "stream"):
            cases.append((TORCH, f"kernel 2 args.{key} -> {value!r}",
                          torch_edit(lambda t, k, key=key, value=value:
                                     set_in(k[1]["args"], key, value))))
    cases += [(TORCH, "events reversed", torch_edit(lambda t, k: t["traceEvents"].reverse())),
              (TORCH, "no kernels", torch_edit(lambda t, k: set_in(
                  t, "traceEvents", [e for e in t["traceEvents"] if e.get("cat") != "kernel"]))),
              (TORCH, "traceEvents an object", torch_edit(lambda t, k: set_in(t, "traceEvents",
                                                                               {}))),
              (TORCH, "no traceEvents", torch_edit(lambda t, k: t.pop("traceEvents"))),
              (TORCH, "grid of two", torch_edit(lambda t, k: set_in(k[1]["args"], "grid",
                                                                    [1, 2]))),
              (TORCH, "grid 2^40 cubed", torch_edit(lambda t, k: set_in(k[1]["args"], "grid",
                                                                        [2 ** 40] * 3))),
              (TORCH, "timestamps mirrored",
               torch_edit(lambda t, k: [set_in(e, "ts", 1e6 - e["ts"]) for e in k])),
              (TORCH, "a top-level list", replace_file(TORCH, lambda p: p.write_text("[]"))),
              (TORCH, "100,000 open brackets",
               replace_file(TORCH, lambda p: p.write_text("[" * 100000)))]
    return cases


TRACE_CASES = trace_cases()


def trace_tree(root, trace):
    tree = root / "s"
    shutil.copytree(SCENARIOS / "traces" / "kernels", tree / KERNELS,
                    ignore=shutil.ignore_patterns("*.py", "*.md", "*.txt"))
    shutil.copy(SCENARIOS / SCENARIO_OF[trace], tree)
    return tree


def check_both(scenario, mutated, out_dir, what):
    rc, lines = check("validate", scenario, mutated, out_dir, what)
    run_rc, run_lines = check("run", scenario, mutated, out_dir, what)
    assert run_rc == rc, f"validate {rc}, run {run_rc} [{what}]: {run_lines}"
    if rc == 2:
        assert run_lines == lines, what
    return rc, lines


@pytest.mark.parametrize("number", range(len(TRACE_CASES)))
def test_a_mutated_kernel_trace_is_run_or_refused_in_one_line(tmp_path, number):
    trace, what, mutate = TRACE_CASES[number]
    tree = trace_tree(tmp_path, trace)
    mutate(tree)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    check_both(tree / SCENARIO_OF[trace], tree / trace, out_dir, f"{trace}: {what}")


AZURE = "traces/azure-llm-conv-excerpt.csv"
AZURE_ROW = "2023-11-16 18:15:47.0000000,{},{}"
AZURE_EDITS = [  # (what, edit of the lines): request-arrival traces, read as a stream
    ("rows reversed", lambda lines: lines[:1] + lines[:0:-1]),
    ("50 rows at one instant", lambda lines: lines[:1] + [
        "2023-11-16 18:15:46.6805900," + x.split(",", 1)[1] for x in lines[1:51]]),
    ("month 13", lambda lines: lines[:1] + ["2023-13-45 99:99:99.1,1,1"] + lines[2:]),
    ("year 9999", lambda lines: lines[:2] + ["9999-11-16 18:15:46.6805900,1,1"] + lines[2:]),
    ("year 1", lambda lines: lines[:1] + ["0001-01-01 00:00:00.0,1,1"] + lines[1:]),
    ("epoch seconds", lambda lines: lines[:1] + ["1700000000,1,1", "1700000001,1,1"]),
    ("tokens -5", lambda lines: lines[:2] + [AZURE_ROW.format(-5, 1)] + lines[2:]),
    ("tokens 1e11", lambda lines: lines[:2] + [AZURE_ROW.format(99999999999, 1)] + lines[2:]),
    ("tokens 1.5", lambda lines: lines[:2] + [AZURE_ROW.format(1.5, 2)] + lines[2:]),
    ("only the header", lambda lines: lines[:1]),
    ("one request", lambda lines: lines[:2]),
]


@pytest.mark.parametrize("number", range(len(AZURE_EDITS)))
def test_a_mutated_arrival_trace_is_run_or_refused_in_one_line(tmp_path, number):
    what, edit = AZURE_EDITS[number]
    tree = tmp_path / "s"
    (tree / "traces").mkdir(parents=True)
    shutil.copy(SCENARIOS / "trace-azure-llm.yaml", tree)
    lines = (SCENARIOS / AZURE).read_text().splitlines()
    (tree / AZURE).write_text("\n".join(edit(lines)) + "\n")
    # 20 s of the 430 s excerpt: the first ~100 requests, a run of well under a second.
    scenario = tree / "trace-azure-llm.yaml"
    scenario.write_text(scenario.read_text().replace("duration: 430s", "duration: 20s")
                        .replace("warmup: 10s", "warmup: 1s"))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    check_both(scenario, tree / AZURE, out_dir, f"{AZURE}: {what}")


MIG_PARTED = (SCENARIOS / "cluster" / "mig-parted.yaml").read_text()
MIG_SCENARIOS = ["fleet-16.yaml", "mig-layout-mismatch.yaml", "mig-layout-timesliced.yaml"]
FILTERS = ('["0x233010DE", "0x233110DE", "0x232210DE", "0x20B210DE", "0x20B510DE", '
           '"0x20F310DE", "0x20F510DE", "0x232410DE"]')
MIG_PARTED_EDITS = [
    ("devices [0, 9]", "devices: all", "devices: [0, 9]"),
    ("devices [-1]", "devices: all", "devices: [-1]"),
    ("devices x", "devices: all", "devices: x"),
    ("mig-enabled false", "mig-enabled: true", "mig-enabled: false"),
    ("a count of 99", '"1g.10gb": 2', '"1g.10gb": 99'),
    ("a count of -1", '"1g.10gb": 2', '"1g.10gb": -1'),
    ("a count of 1e30", '"1g.10gb": 2', '"1g.10gb": 1e30'),
    ("an unknown profile", '"1g.10gb": 2', '"9g.99gb": 2'),
    ("no filter matches", FILTERS, '["0xFFFFFFFF"]'),
    ("a filter 'zz'", '"0x233010DE"', '"zz"'),
    ("a filter 12", '["0x233010DE"', "[12"),
    ("a filter of 9 hex digits", '"0x233010DE"', '"0x233010DEF"'),
    ("version v9", "version: v1", "version: v9"),
]


def mig_parted_cases():
    cases = [(what, MIG_PARTED.replace(old, new, 1).encode())
             for what, old, new in MIG_PARTED_EDITS]
    for number in range(MIG_PARTED_CASES):
        cases.append(mutate_yaml(MIG_PARTED.encode(), random.Random(CASE_SEED + number)))
    return cases


MIG_PARTED_MUTATIONS = mig_parted_cases()


@pytest.mark.parametrize("number", range(len(MIG_PARTED_MUTATIONS)))
def test_a_mutated_mig_parted_config_is_replayed_or_refused_in_one_line(tmp_path, number):
    what, data = MIG_PARTED_MUTATIONS[number]
    name = MIG_SCENARIOS[number % len(MIG_SCENARIOS)]
    tree = tmp_path / "cluster"
    tree.mkdir()
    shutil.copy(SCENARIOS / "cluster" / name, tree)
    (tree / "mig-parted.yaml").write_bytes(data)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    check_both(tree / name, tree / "mig-parted.yaml", out_dir, f"mig-parted.yaml: {what}")


@pytest.mark.parametrize("value", ["'zz'", "12", "0x233010DEF", "'0x'"])
def test_a_device_filter_that_is_not_a_pci_id_names_file_line_and_key(tmp_path, value):
    """A filter gpumux could never match (it compares PCI IDs as text) is refused, not read as
    an entry that applies to no GPU."""
    (tmp_path / "mig-parted.yaml").write_text(
        MIG_PARTED.replace('"0x233010DE"', value, 1))
    shutil.copy(SCENARIOS / "cluster" / "mig-layout-mismatch.yaml", tmp_path)
    out = run_gpumux("validate", tmp_path / "mig-layout-mismatch.yaml", errors="replace")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert "mig-parted.yaml:8:" in lines[0], lines[0]
    assert "mig-configs.all-balanced.0.device-filter.0: expected a PCI device ID" in lines[0]


def test_every_filter_nvidia_ships_is_a_pci_id(tmp_path):
    """mig-parted's full default config (every device-filter NVIDIA ships) still loads."""
    full = REPO / "tests" / "data" / "cluster" / "mig-parted-config-default.yaml"
    shutil.copy(full, tmp_path / "mig-parted.yaml")
    shutil.copy(SCENARIOS / "cluster" / "mig-layout-mismatch.yaml", tmp_path)
    assert "device-filter" in full.read_text()
    run_gpumux("validate", tmp_path / "mig-layout-mismatch.yaml", "-q", check=0)


CSV_SCENARIO = SCENARIOS / "trace-csv-mig-a100.yaml"
SHORT = ["--set", "duration=2s", "--set", "warmup=100ms"]
OPTION_CASES = [
    (["run", CSV_SCENARIO, "--set", f"{key}={value}"], f"--set {key}")
    for key, value in [
        ("tenants.9.name", "x"), ("tenants.-1.name", "x"),
        ("tenants.99999999999999999999.name", "x"), ("tenants.0.bogus", "1"), ("bogus", "1"),
        ("duration", ""), ("duration", "5parsec"), ("duration", "-1s"), ("duration", "nan"),
        ("duration", "1e400s"), ("tenants.0.workload.request.kernel_trace", "/nonexistent.csv"),
        ("tenants.0.workload.request.kernel_trace", "/tmp"),
        ("tenants.0.workload.request.format", "nvprof"), ("gpus.0.mig", "all-9g.99gb"),
        ("gpus.0.mig", "[1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb]"),
        ("gpus.0.mig", "{"), ("tenants.0.device", "gpu0/7"), ("gpus", "[]"),
        ("tenants.0.workload.arrivals.rate", "1e30/s"),
        ("tenants.0.workload.arrivals.rate", "0/s"), ("gpus.0.model", "rtx4090"),
        ("tenants.0.workload.request.recorded_on", "bogus"), ("seed", "-1"), ("seed", "1e30"),
        ("tenants.0.memory", "1e30GiB"), ("tenants.0.memory", "-1GiB")]
] + [
    (["run", CSV_SCENARIO, "--set", "=1"], "--set =1"),
    (["run", CSV_SCENARIO, "--set", "duration"], "--set duration"),
    (["run", CSV_SCENARIO, "--seed", "99999999999999999999"], "--seed"),
    (["run", CSV_SCENARIO, "--seed", "x"], "--seed"),
    (["compare", CSV_SCENARIO, *SHORT, "--strategies", ","], "--strategies"),
    (["compare", CSV_SCENARIO, *SHORT, "--strategies", "bogus"], "--strategies"),
    (["compare", CSV_SCENARIO, *SHORT, "--strategies", "MIG"], "--strategies"),
    (["compare", CSV_SCENARIO, *SHORT, "--strategies", "mig+bogus"], "--strategies"),
    (["compare", CSV_SCENARIO, *SHORT, "--strategies", "mig,mps, mig"], "--strategies"),
    (["compare", CSV_SCENARIO, *SHORT, "--strategies", "as-is,as-is"], "--strategies"),
    (["compare", CSV_SCENARIO, "--strategies", "mps", "--set", "tenants.5.name=x"],
     "--set tenants.5.name"),
    (["mig", "a100-80gb", "--check", "3g.40gb:x"], "--check: expected PROFILE:COUNT"),
    (["mig", "a100-80gb", "--check", "all-sideways"], "--check: unknown MIG layout"),
    (["mig", "a100-80gb", "--check", "1g.10gb,,1g.10gb"], "--check: empty MIG profile"),
] + [
    (["run", SCENARIOS / "cluster" / "fleet-16.yaml", option, value], option)
    for option in ("--workers", "--shards") for value in ("0", "-1", "x", "99999999999")
]


@pytest.mark.parametrize("number", range(len(OPTION_CASES)))
def test_a_bad_option_is_one_line_naming_it(tmp_path, number):
    args, named = OPTION_CASES[number]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    output = ["-o", out_dir / "x.h5", "-q"] if args[0] in ("run", "compare") else []
    out = run_gpumux(*args, *output, timeout=30, errors="replace")
    lines = out.stderr.strip().splitlines()
    context = f"{args}: {out.stderr}"
    assert out.returncode == 2, context
    assert len(lines) == 1 and lines[0].startswith("gpumux: error: "), context
    assert named in lines[0] and "internal error" not in lines[0], context
    assert not list(out_dir.iterdir()), context


@pytest.mark.parametrize("option", [["--format", "xml"], ["--format", "TABLE"],
                                    ["--format", "json,csv"], ["--html", "r.txt"],
                                    ["--html", "/dev/null"], ["--html", "OUT.h5"]])
def test_report_options_on_a_valid_file_are_one_line(tmp_path, option):
    result = tmp_path / "OUT.h5"
    run_gpumux("run", CSV_SCENARIO, *SHORT, "-q", "-o", result, check=0)
    before = result.read_bytes()
    option = [str(tmp_path / o) if o.endswith((".txt", ".h5")) else o for o in option]
    out = run_gpumux("report", result, *option, cwd=tmp_path, errors="replace")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert option[0] in lines[0], lines[0]
    assert result.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["OUT.h5"]


def test_the_cases_cover_every_trace_format_and_mig_parted_kind():
    assert {trace for trace, *_ in TRACE_CASES} == set(SCENARIO_OF)
    text = " | ".join(what for what, _ in MIG_PARTED_MUTATIONS)
    for marker in ("deleted", "->", "truncated"):
        assert marker in text, marker
