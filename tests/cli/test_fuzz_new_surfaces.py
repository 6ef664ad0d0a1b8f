"""A deterministic mutation fuzz of the surfaces test_fuzz_scenarios.py does not reach: the
CSVs `gpumux calibrate` reads (the shipped catalog points of calibration/fit/ and the output of
calibration/microbench, here calibration/microbench/synthetic.py's), a scenario written with
the newest keys (a `power:` block and `power: none`, MPS `client_order`, time-slicing
`replicas`, `cuda_graph`, `runtime_kernel_fixed_cost`, `gemm_library`, `conv_library`, a
tenant's `host:` terms and `cpu_speed`, an inline LLM card with `head_dim`, experts and
`sliding_window`, prompt and output lengths drawn from distributions), and `report` on a result
file cut short.

Each case takes its input by a fixed seed (CASE_SEED + the case's number) and applies one
mutation: the file truncated at a random byte, emptied, only its header left, non-UTF-8 bytes,
a field set to a wrong type, unit, NaN, infinity, a negative or huge number, a column dropped,
added or renamed, a row duplicated (a duplicate id), every row of one source (no fold to leave
out), two columns swapped; for the scenario, the mutations of test_fuzz_scenarios.py.

Asserted for every case: exit 0 or 2, never a signal, exit 3, a Python traceback or a run past
TIMEOUT_S; on exit 2 exactly one stderr line, `gpumux: error: ` and the name of the mutated
file (or of the option at fault), and nothing left in the output folder (no profile, report,
OUT.h5 or temporary file); on exit 0 from calibrate, the profile and the report written and
no NaN or infinity in the profile. A failure prints the case's mutation to reproduce it.

What it and its exploratory runs (about 2,000 cases, 2026-12-07) found, each fixed with a
focused test (test_reliability_fixes.py unless named): a point's value of 1e300 ms overflowed the
fitted nanoseconds (the error named calibrate's temporary profile) and 1e-300 ms printed errors of
1e301 %; one source gave an out-of-sample error from a fold with no points; `-o` or `--report`
naming a data file replaced the measurements (and gpumux.calibrate(output=): test_calibrate.py);
a byte 0xFF in a note reached the written profile, which gpumux then refused; a point's unknown
profile named no file; the microbench wait table printed "nan us"; a result given to `inspect`
was "not UTF-8 text". Probing the options beside it: `plan --jobs 100000` forked ~15,000
processes; `plan S.yaml -o S.yaml` replaced the scenario; a plan price of 1e308 summed to
infinity; `--dask HOST:0` waited 10 s (test_cluster_dask.py). 331 cases, 13-25 s on two loaded
cores. Drives $GPUMUX_BIN.
"""
import csv
import io
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_gpumux
from test_fuzz_scenarios import check as check_scenario
from test_fuzz_scenarios import mutate_yaml

REPO = Path(__file__).resolve().parents[2]
FIT = REPO / "calibration" / "fit"
CASE_SEED = 20261208
TIMEOUT_S = 30
CATALOG_CASES = 160
MICROBENCH_CASES = 80
SCENARIO_CASES = 80
REPORT_CASES = 10
# The profile -o copies: named, so a sample of points on several GPUs is not refused for that.
BASE = {"catalog": "a100-sxm4-40gb", "microbench": "h100-sxm-80gb"}

FIELD_VALUES = ["-1", "0", "1e308", "nan", "inf", "-inf", "x", "", "1e400", "99999999999999999999",
                "null", "12 parsecs", "1e-320", "3.5", " 1", "1e9", "65536", "0x10", "ms",
                "img/s", "latency", "throughput", "bogus", "1g.10gb", "7g.80gb", "fp8", "tf32",
                "training", "tensorrt", "pytorch", "resnet50", "gpt2", "none", "mlperf-loadgen",
                "9223372036854775807", "-9223372036854775808", "1763000000000000000"]
FIT_KEYS = ["kernel_fixed_cost", "host_per_request", "harness_per_request", "block_round_cost",
            "timeslice", "context_switch", "launch_overhead", "hbm_bandwidth_measured"]

NEW_KEYS = """\
name: new-keys
seed: 7
duration: 1s
warmup: 100ms
gpus:
  - name: gpu0
    model: a100-sxm4-40gb
    sharing: {mode: mps, client_order: launch_order}
    power: {tdp: 250W, idle: 55W, sm_dynamic: 289W, hbm_energy: 31.2pJ/B, clock_exponent: 3}
  - name: gpu1
    model: h100-sxm-80gb
    sharing: {mode: time-slicing, timeslice: 2ms, replicas: 2}
    power: none
tenants:
  - name: rn
    device: gpu0
    memory: 4GiB
    workload:
      model: resnet50
      batch: 2
      dtype: fp16
      runtime: pytorch
      runtime_kernel_fixed_cost: 3.25us
      conv_library: native
      host: {per_request: 1.2ms, input_bytes: 602KB, output_bytes: 4KB, link_bandwidth: 12GB/s, per_op: 5us, cpu_speed: dgx-h100}
      arrivals: {process: poisson, rate: 30/s}
  - name: bert
    device: gpu0
    memory: 4GiB
    workload:
      model: bert-base
      batch: 1
      seq_len: {uniform: {min: 64, max: 384}}
      dtype: fp16
      runtime: onnxruntime
      cuda_graph: true
      gemm_library: tally-cutlass
      arrivals: {process: constant, rate: 20/s}
  - name: gen
    device: gpu1
    memory: 30GiB
    workload:
      llm: {host_per_op: 10us, layers: 2, hidden: 1024, heads: 16, kv_heads: 4, head_dim: 64, ffn: 2048, vocabulary: 32000, experts: 4, experts_per_token: 2, expert_ffn: 512, shared_experts: 1, sliding_window: 128}
      batching: {max_batch: 8, scheduler: vllm, max_tokens_in_batch: 2048, engine_cpu: {per_iteration: 1ms, per_sequence: 40us}}
      arrivals: {process: poisson, rate: 8/s}
      tokens: {input: {lognormal: {median: 256, sigma: 0.6}}, output: {exponential: 16}}
      host: {cpu_speed: 1.3}
  - name: k
    device: gpu1
    workload:
      arrivals: {process: closed, concurrency: 2, think: {exponential: 5ms}}
      request:
        host_gap: 20us
        kernels:
          - {name: a, duration: {lognormal: {median: 80us, sigma: 0.4}}, memory_bound: 0.5}
          - {name: b, duration: 200us, busy_share: 1, memory_bound: 0.3}
"""


def csv_rows(text):
    return [row for row in csv.reader(io.StringIO(text)) if row]


def csv_text(rows):
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def mutate_csv(text, rng, kinds):
    """TEXT (a CSV with a header) with one mutation of KINDS; returns (what, bytes)."""
    kind = rng.choice(kinds)
    if kind == "truncate":
        cut = rng.randrange(len(text) + 1)
        return f"truncated at byte {cut}", text[:cut].encode()
    if kind == "empty":
        return "emptied", b""
    if kind == "non-utf8":
        at = rng.randrange(len(text) + 1)
        return f"non-UTF-8 at byte {at}", text[:at].encode() + b"\xff\xfe" + text[at:].encode()
    rows = csv_rows(text)
    if kind == "header-only" or len(rows) < 2:
        return "only the header", csv_text(rows[:1]).encode()
    header = rows[0]
    if kind == "field":
        r, c = rng.randrange(1, len(rows)), rng.randrange(len(header))
        value = rng.choice(FIELD_VALUES)
        what = f"line {r + 1} {header[c]} {rows[r][c]!r} -> {value!r}"
        rows[r][c] = value
    elif kind == "drop-column":
        c = rng.randrange(len(header))
        what = f"column {header[c]} dropped"
        for row in rows:
            del row[c]
    elif kind == "add-column":
        c = rng.randrange(len(header) + 1)
        name = rng.choice(["extra", "cuda_graph", "harness", "mig", "id"])
        what = f"column {name} added at {c}"
        header.insert(c, name)
        for row in rows[1:]:
            row.insert(c, rng.choice(FIELD_VALUES))
    elif kind == "rename-column":
        c = rng.randrange(len(header))
        what = f"column {header[c]} renamed"
        header[c] += "x"
    elif kind == "duplicate-row":
        r = rng.randrange(1, len(rows))
        rows.insert(r, list(rows[r]))
        what = f"line {r + 1} duplicated"
    elif kind == "swap-columns":
        a, b = rng.sample(range(len(header)), 2)
        what = f"columns {header[a]} and {header[b]} swapped"
        for row in rows:
            row[a], row[b] = row[b], row[a]
    elif kind == "one-source":
        c = header.index("source")
        rows = [header] + [row for row in rows[1:] if row[c] == rows[1][c]]
        what = f"only source {rows[1][c]}"
    else:
        raise AssertionError(kind)
    return what, csv_text(rows).encode()


CATALOG_KINDS = ["truncate", "empty", "non-utf8", "header-only", "field", "field", "field",
                 "field", "drop-column", "add-column", "rename-column", "duplicate-row",
                 "swap-columns", "one-source"]
MICROBENCH_KINDS = ["truncate", "empty", "non-utf8", "header-only", "field", "field", "field",
                    "drop-column", "add-column", "rename-column", "duplicate-row", "swap-columns"]


def catalog_case(number):
    """(file name, what, bytes, --fit or None) of catalog case NUMBER: two to four rows of a
    shipped calibration/fit CSV (a fit in well under a second), mutated."""
    rng = random.Random(CASE_SEED + number)
    source = rng.choice(sorted(FIT.glob("*.csv")))
    rows = csv_rows(source.read_text())
    keep = sorted(rng.sample(range(1, len(rows)), min(len(rows) - 1, rng.randint(2, 4))))
    what, data = mutate_csv(csv_text([rows[0]] + [rows[i] for i in keep]), rng, CATALOG_KINDS)
    fit = rng.choice(FIT_KEYS) if rng.random() < 0.25 else None
    return source.name, what, data, fit


def check_calibrate(args, mutated_name, out_dir, what):
    out = run_gpumux("calibrate", *args, "-q", "--iterations", "1", "-o", out_dir / "p.yaml",
                     "--report", out_dir / "r.md", timeout=TIMEOUT_S, errors="replace")
    context = f"calibrate [{mutated_name}: {what}] {args}\n{out.stderr}"
    assert out.returncode in (0, 2), context
    assert "Traceback" not in out.stderr, context
    lines = out.stderr.strip().splitlines()
    left = sorted(p.name for p in out_dir.iterdir())
    if out.returncode == 2:
        assert len(lines) == 1, context
        assert lines[0].startswith("gpumux: error: "), context
        assert "internal error" not in lines[0], context
        assert mutated_name in lines[0] or lines[0].startswith("gpumux: error: --fit"), context
        assert "gpumux-calibrate-" not in lines[0], context  # calibrate's temporary profiles
        assert not left, context
    else:
        assert left == ["p.yaml", "r.md"], context
        fitted = re.findall(r"\{value: ([^,]+), fitted:", (out_dir / "p.yaml").read_text())
        assert not [v for v in fitted if re.search(r"nan|inf", v, re.I)], context
    return out.returncode


@pytest.mark.parametrize("number", range(CATALOG_CASES))
def test_a_mutated_catalog_csv_is_fitted_or_refused_in_one_line(tmp_path, number):
    name, what, data, fit = catalog_case(number)
    (tmp_path / name).write_bytes(data)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    args = [tmp_path / name, "--profile", BASE["catalog"]] + (["--fit", fit] if fit else [])
    check_calibrate(args, name, out_dir, what)


@pytest.fixture(scope="module")
def microbench_raw(tmp_path_factory):
    """calibration/microbench/synthetic.py's output (one and two spinners): the files
    run_all.sh writes, with known parameters."""
    raw = tmp_path_factory.mktemp("mb") / "raw"
    subprocess.run([sys.executable, str(REPO / "calibration" / "microbench" / "synthetic.py"),
                    str(raw), "--nprocs", "1,2"], check=True, capture_output=True, timeout=120)
    return raw


@pytest.mark.parametrize("number", range(MICROBENCH_CASES))
def test_a_mutated_microbench_file_is_fitted_or_refused_in_one_line(tmp_path, microbench_raw,
                                                                     number):
    rng = random.Random(CASE_SEED + 1000 + number)
    raw = tmp_path / "raw"
    shutil.copytree(microbench_raw, raw)
    target = rng.choice(sorted(raw.glob("*.csv")))
    what, data = mutate_csv(target.read_text(), rng, MICROBENCH_KINDS)
    target.write_bytes(data)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    fit = ["--fit", rng.choice(FIT_KEYS[4:])] if rng.random() < 0.25 else []
    check_calibrate([raw, "--profile", BASE["microbench"], *fit], target.name, out_dir, what)


@pytest.mark.parametrize("number", range(SCENARIO_CASES))
def test_a_mutated_new_keys_scenario_is_run_or_refused_in_one_line(tmp_path, number):
    rng = random.Random(CASE_SEED + 2000 + number)
    what, data = mutate_yaml(NEW_KEYS.encode(), rng)
    scenario = tmp_path / "new-keys.yaml"
    scenario.write_bytes(data)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    rc, lines = check_scenario("validate", scenario, scenario, out_dir, what)
    run_rc, run_lines = check_scenario("run", scenario, scenario, out_dir, what)
    assert run_rc == rc, f"validate {rc}, run {run_rc} [{what}]: {run_lines}"
    if rc == 2:
        assert run_lines == lines, what


@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("result")
    (folder / "new-keys.yaml").write_text(NEW_KEYS)
    run_gpumux("run", folder / "new-keys.yaml", "-q", "-o", folder / "out.h5", check=0,
               timeout=TIMEOUT_S)
    return folder / "out.h5"


@pytest.mark.parametrize("number", range(REPORT_CASES))
def test_a_result_file_cut_short_is_one_line_for_report_and_the_text_readers(tmp_path,
                                                                              result_file,
                                                                              number):
    """`report` of a result cut at a random byte names the file; `inspect`, `validate` and
    `run` given a result (an HDF5 file, whole or cut) say it is one, not "not UTF-8 text"."""
    data = result_file.read_bytes()
    cut = random.Random(CASE_SEED + 3000 + number).randrange(len(data))
    path = tmp_path / "cut.h5"
    path.write_bytes(data[:cut])
    for command in (["report"], ["report", "--format", "json"], ["inspect"], ["validate"]):
        out = run_gpumux(*command, path, timeout=TIMEOUT_S, errors="replace")
        lines = out.stderr.strip().splitlines()
        context = f"{command} of the result cut at byte {cut}: {out.stderr}"
        assert out.returncode == 2, context
        assert len(lines) == 1 and lines[0].startswith("gpumux: error: "), context
        assert "cut.h5" in lines[0], context
        if command[0] != "report" and cut >= 4:
            assert "an HDF5 file" in lines[0], context


def test_the_cases_mutate_every_kind_of_input():
    """The fixed catalog cases cover every calibration/fit CSV and each mutation kind, and some
    are fitted (exit 0), not all refused (a change of CASE_SEED that lost one fails here)."""
    cases = [catalog_case(number) for number in range(CATALOG_CASES)]
    assert {name for name, *_ in cases} == {p.name for p in FIT.glob("*.csv")}
    text = " | ".join(what for _, what, *_ in cases)
    for marker in ("truncated", "emptied", "non-UTF-8", "only the header", "->", "dropped",
                   "added", "renamed", "duplicated", "swapped", "only source"):
        assert marker in text, marker
    assert any(fit for *_, fit in cases)
