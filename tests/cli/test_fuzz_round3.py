"""Reliability round 3: targeted bad input on the surfaces added since the last two rounds
(test_fuzz_new_surfaces.py, test_fuzz_traces_and_options.py), each case run with a timeout.

Surfaces: `gpumux calibrate`'s catalog CSVs with the `cuda_graph` and `harness` columns, its
`--fit`, `--profile`, `-o` and `--report`; a user profile's power terms and name-to-time
mappings; the scenario keys of the newest runtimes and terms (`tensorrt-onnx`, `cuda_graph`,
`host:`, `attention_seq_len`, `gemm_library`, `conv_library`, `client_order`, `priority`, a
`power:` override, `slo:` with `ttft`/`tpot`); `inspect` on every runtime at a batch or sequence
length of 0, negative or huge; `plan` with an SLO no setup can be judged on; `report` on the
result of an interrupted or killed run; calibration/fit/rerun_chain.py's options; the Python API
(gpumux.calibrate / run / validate / inspect) on the same input.

Asserted for every bad case: exit 2 (never a signal, exit 3, a traceback or a run past
TIMEOUT_S), exactly one stderr line `gpumux: error: ` naming the file (and line and key) or the
option, and nothing left in the output folder (no -o file, no temporary file). The base input of
each family runs with exit 0 (a control: the cases fail for the mutation, not the base). Python:
ScenarioError (a ValueError) or TypeError with the same one line, never a crash.

Found and fixed (2026-12-08; before -> after, each now one located line, exit 2):
- calibrate, a `harness` of YAML characters: `[x]` exit 3 "internal error: yaml-cpp: bad
  conversion"; `a: b` an error naming calibrate's temporary profile; `#x` "no host time for the
  harness '#x'" (the written key became a comment);
- calibrate, a header naming `cuda_graph` twice (the second read silently) or `CUDA_GRAPH`
  (ignored: every point a stream launch); `--fit kernel_fixed_cost,kernel_fixed_cost` (accepted);
  `--fit harness_per_request` on points of no harness (fitted nothing, exit 0); `--profile ''`
  (taken as no --profile);
- a profile's `harness_per_request: {[x]: 1us}` (or any mapping key that is a list or a
  mapping): exit 3 "internal error: yaml-cpp: bad conversion";
- a profile whose `tdp` does not exceed `power.idle` (tdp 1W, idle 500W), or a scenario `power:`
  override that makes it so: every kernel ran at the base clock, exit 0;
- `runtime: tensorrt-onnx` or `fastertransformer` with `phase: training`: a training step of an
  inference engine was simulated (tensorrt alone was refused);
- `slo: {ttft: ...}` or `{tpot: ...}` on a tenant without output tokens: run MISSED forever, plan
  "no setup meets every SLO" exit 1;
- Python: calibrate(fit="kernel_fixed_cost") was split letter by letter ("unknown parameter
  'k'"); calibrate(profile="bogus") without output= was not checked; fit=[1] or profile=5 gave
  pybind's four-line TypeError; a bad harness or profile key gave RuntimeError (not ValueError);
- a catalog tenant with `replicas:` and a seq_len distribution: each replica built and kept each
  length's kernels (40 replicas over 1..512: 17 s and 3.8 GB to validate; 1000: out of memory;
  `plan` of 10: 103 s); the lengths of all tenants together are now bounded as one tenant's;
- Python `gpumux.load` of a result cut short or left by a killed run: h5py's OSError naming no
  file (its docstring promises ValueError); now "PATH: not a gpumux result file (cannot open:
  ...)";
- calibration/fit/rerun_chain.py: argparse's three-line usage error; `--gpumux` in a folder
  without build.ninja failed in ninja's words (exit 1); `--date 2026-02-30` was accepted into
  every written provenance.
Drives $GPUMUX_BIN (and the Python package on PYTHONPATH, as ctest sets it).
"""
import csv
import io
import json
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import GPUMUX, one_error, run_gpumux

REPO = Path(__file__).resolve().parents[2]
SOLO = REPO / "calibration" / "fit" / "solo-latency.csv"
PROFILE = REPO / "calibration" / "profiles" / "a100-sxm4-40gb.yaml"
PLAN = REPO / "scenarios" / "plan" / "plan-identical-tenants.yaml"
RERUN_CHAIN = REPO / "calibration" / "fit" / "rerun_chain.py"
TIMEOUT_S = 20
RUNTIMES = ["pytorch", "pytorch-sdpa", "onnxruntime", "tensorrt", "tensorrt-onnx",
            "fastertransformer", "tensorflow", "tensorflow-xla"]


def gpumux(*args, cwd=None):
    return run_gpumux(*args, timeout=TIMEOUT_S, cwd=cwd, errors="replace")


# ---------------------------------------------------------------------------------- calibrate

def catalog_rows():
    """The header and three demoBERT rows of solo-latency.csv (A100 40GB, CUDA graphs): a fit of
    a few simulations."""
    rows = list(csv.reader(io.StringIO(SOLO.read_text())))
    return rows[0], [list(r) for r in rows[1:4]]


def write_csv(path, header, body):
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header] + body)
    path.write_text(out.getvalue())
    return path


def with_cell(column, value):
    header, body = catalog_rows()
    body[0][header.index(column)] = value
    return header, body


def calibrate_into(tmp_path, data, *options):
    """`calibrate DATA OPTIONS -o OUT/p.yaml --report OUT/r.md`: the run and the OUT folder."""
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    run = gpumux("calibrate", data, "-q", "--iterations", "1", *options, "-o",
                 out_dir / "p.yaml", "--report", out_dir / "r.md")
    return run, out_dir


def test_the_base_csv_is_fitted_and_written(tmp_path):
    data = write_csv(tmp_path / "base.csv", *catalog_rows())
    run, out_dir = calibrate_into(tmp_path, data, "--fit", "kernel_fixed_cost")
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in out_dir.iterdir()) == ["p.yaml", "r.md"]


CSV_CASES = {
    "cuda_graph yes": (with_cell("cuda_graph", "yes"), ":2: cuda_graph: expected true, false"),
    "cuda_graph TRUE": (with_cell("cuda_graph", "TRUE"), ":2: cuda_graph"),
    "cuda_graph 1": (with_cell("cuda_graph", "1"), ":2: cuda_graph"),
    "cuda_graph nan": (with_cell("cuda_graph", "nan"), ":2: cuda_graph"),
    "harness [x]": (with_cell("harness", "[x]"), ":2: harness: expected a harness name"),
    "harness a: b": (with_cell("harness", "a: b"), ":2: harness: expected a harness name"),
    "harness #x": (with_cell("harness", "#x"), ":2: harness: expected a harness name"),
    "harness a b": (with_cell("harness", "a b"), ":2: harness: expected a harness name"),
    "harness null": (with_cell("harness", "null"), ":2: harness: expected a harness name"),
    "harness -x": (with_cell("harness", "-x"), ":2: harness: expected a harness name"),
    "harness a runtime": (with_cell("harness", "tensorrt"), "'tensorrt' is a runtime"),
}


def header_case(edit):
    header, body = catalog_rows()
    return edit(header, body)


def renamed(old, new):
    def edit(header, body):
        header[header.index(old)] = new
        return header, body
    return edit


def doubled(column):
    def edit(header, body):
        i = header.index(column)
        return header + [column], [row + [row[i]] for row in body]
    return edit


CSV_CASES.update({
    "cuda_graph twice": (header_case(doubled("cuda_graph")),
                         ":1: header: column 'cuda_graph' named twice"),
    "CUDA_GRAPH": (header_case(renamed("cuda_graph", "CUDA_GRAPH")),
                   ":1: header: unknown column 'CUDA_GRAPH' (did you mean 'cuda_graph'?)"),
    "Harness": (header_case(renamed("harness", "Harness")), "did you mean 'harness'?"),
    "no value column": (header_case(renamed("value", "val")), ":1: value: missing column"),
})


@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_a_bad_cuda_graph_or_harness_cell_or_header_is_one_located_line(tmp_path, case):
    (header, body), text = CSV_CASES[case]
    data = write_csv(tmp_path / "points.csv", header, body)
    run, out_dir = calibrate_into(tmp_path, data)
    one_error(run, "points.csv", text)
    assert not list(out_dir.iterdir()), case


@pytest.mark.parametrize("options,text", [
    (["--fit", "bogus"], "--fit: unknown parameter 'bogus'"),
    (["--fit", "kernel_fixed_cost,kernel_fixed_cost"], "--fit: 'kernel_fixed_cost' listed twice"),
    (["--fit", ""], "--fit: unknown parameter ''"),
    (["--fit", ","], "--fit: unknown parameter ''"),
    (["--fit", "KERNEL_FIXED_COST"], "--fit: unknown parameter"),
    (["--fit", "harness_per_request"], "--fit harness_per_request: no point names a harness"),
    (["--fit", "timeslice"], "--fit timeslice: no data file given informs it"),
    (["--profile", "bogus"], "--profile: unknown GPU model 'bogus'"),
    (["--profile", ""], "--profile: empty"),
    (["--profile", "/nonexistent/p.yaml"], "--profile: /nonexistent/p.yaml"),
    (["--profile", "/"], "--profile: /: is a directory"),
    (["--date", "2026-02-30"], "--date"),
])
def test_a_bad_fit_list_or_profile_is_one_line_naming_the_option(tmp_path, options, text):
    data = write_csv(tmp_path / "points.csv", *catalog_rows())
    run, out_dir = calibrate_into(tmp_path, data, *options)
    one_error(run, text)
    assert not list(out_dir.iterdir()), options


@pytest.mark.parametrize("option,target,text", [
    ("-o", "/nonexistent/p.yaml", "-o /nonexistent/p.yaml: directory /nonexistent does not exist"),
    ("-o", "", "-o (empty path)"),
    ("-o", "FOLDER", "is a directory"),
    ("--report", "/nonexistent/r.md", "--report /nonexistent/r.md"),
    ("--report", "FOLDER", "is a directory"),
])
def test_an_output_into_a_missing_or_wrong_place_leaves_nothing(tmp_path, option, target, text):
    data = write_csv(tmp_path / "points.csv", *catalog_rows())
    folder = tmp_path / "out"
    folder.mkdir()
    target = str(folder) if target == "FOLDER" else target
    run = gpumux("calibrate", data, "-q", "--iterations", "1", option, target)
    one_error(run, text)
    assert not list(folder.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "points.csv"]


# ------------------------------------------------------------------------------ user profiles

def profile_with(tmp_path, edit):
    """A copy of the A100 SXM4 40GB profile with EDIT(text) applied, and a scenario of one
    BERT-base tenant on it (both in TMP_PATH)."""
    profile = tmp_path / "mine.yaml"
    profile.write_text(edit(PROFILE.read_text()))
    scenario = tmp_path / "s.yaml"
    scenario.write_text("""\
name: p
duration: 20ms
gpus: [{name: g, model: mine.yaml}]
tenants:
  - name: a
    device: g
    workload: {model: bert-base, batch: 8, runtime: tensorrt,
               arrivals: {process: closed, concurrency: 1}}
""")
    return scenario


def replace_value(key, value):
    """The top-level (or power:) KEY's `{value: ...}` replaced by VALUE."""
    def edit(text):
        lines = text.splitlines(keepends=True)
        for i, line in enumerate(lines):
            if line.lstrip().startswith(f"{key}: {{value: "):
                head, rest = line.split("{value: ", 1)
                lines[i] = head + "{value: " + value + "," + rest.split(",", 1)[1]
                return "".join(lines)
        raise AssertionError(key)
    return edit


def add_under(parent, line):
    def edit(text):
        assert f"\n{parent}:\n" in text, parent
        return text.replace(f"\n{parent}:\n", f"\n{parent}:\n  {line}\n", 1)
    return edit


PROFILE_CASES = {
    "harness key a list": (add_under("harness_per_request", "[x]: {value: 1us, assumption: t}"),
                           "harness_per_request: a key must be a plain name"),
    "harness key a mapping": (add_under("harness_per_request",
                                        "? {a: 1}\n  : {value: 1us, assumption: t}"),
                              "harness_per_request: a key must be a plain name"),
    "host key a list": (add_under("host_per_request", "[x]: {value: 1us, assumption: t}"),
                        "host_per_request: a key must be a plain name"),
    "a top-level key a list": (lambda t: t + "[x]: 1\n", "a key must be a plain name"),
    "tdp 0W": (replace_value("tdp", "0W"), "tdp: expected a value in W"),
    "tdp -1W": (replace_value("tdp", "-1W"), "tdp: expected a value in W"),
    "tdp below idle": (replace_value("tdp", "1W"), "tdp: must exceed power.idle (1W <= 55W)"),
    "tdp at idle": (replace_value("tdp", "55W"), "tdp: must exceed power.idle (55W <= 55W)"),
    "idle above tdp": (replace_value("idle", "500W"), "tdp: must exceed power.idle"),
    "boost below base": (replace_value("boost_clock", "500MHz"), "must not exceed boost_clock"),
    "tensor_energy negative": (replace_value("tensor_energy", "-1pJ/FLOP"),
                               "power.tensor_energy: expected a value in pJ/FLOP"),
    "tensor_energy no unit": (replace_value("tensor_energy", "0.757"),
                              "power.tensor_energy"),
    "tensor_energy wrong unit": (replace_value("tensor_energy", "0.757pJ/B"),
                                 "power.tensor_energy"),
    "clock_exponent 7": (replace_value("clock_exponent", "7"), "power.clock_exponent"),
    "sm_dynamic in pJ/B": (replace_value("sm_dynamic", "289pJ/B"), "power.sm_dynamic"),
}


def test_the_profile_copy_runs(tmp_path):
    scenario = profile_with(tmp_path, lambda t: t)
    assert gpumux("run", scenario, "-q", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("case", sorted(PROFILE_CASES))
def test_a_bad_user_profile_is_one_line_naming_its_file_line_and_key(tmp_path, case):
    edit, text = PROFILE_CASES[case]
    scenario = profile_with(tmp_path, edit)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    lines = []
    for command in (["validate"], ["run", "-o", out_dir / "out.h5"]):
        lines.append(one_error(gpumux(*command, scenario, "-q", cwd=tmp_path), "mine.yaml:",
                               text))
    assert lines[0] == lines[1]
    assert not list(out_dir.iterdir())


# ---------------------------------------------------------------------------- scenario keys

SCENARIO = """\
name: keys
duration: 30ms
gpus:
  - name: g
    model: a100-sxm4-40gb
    sharing: {mode: mps, client_order: interleaved}
    power: {tdp: 400W}
tenants:
  - name: bert
    device: g
    workload:
      model: bert-large
      batch: 1
      seq_len: 128
      dtype: fp16
      runtime: tensorrt-onnx
      cuda_graph: false
      priority: 0
      arrivals: {process: closed, concurrency: 1}
    slo: {p99: 100ms}
  - name: rn
    device: g
    workload:
      model: resnet50
      batch: 2
      runtime: pytorch
      conv_library: native
      gemm_library: tally-cutlass
      host: {per_request: 1ms, per_op: 5us, cpu_speed: 1.3}
      arrivals: {process: poisson, rate: 20/s}
"""


def edited(old, new):
    assert SCENARIO.count(old) == 1, old
    return SCENARIO.replace(old, new)


SCENARIO_CASES = {
    "tensorrt-onnx training": (edited("      dtype: fp16\n", "      dtype: fp16\n      phase: "
                                      "training\n"), "17:16: tenants.0.workload.runtime: "
                               "tensorrt-onnx runs inference only"),
    "fastertransformer training": (edited("tensorrt-onnx\n", "fastertransformer\n      phase: "
                                          "training\n"), "fastertransformer runs inference"),
    "softmax as a workload key": (edited("      cuda_graph: false\n", "      softmax: "
                                         "one_kernel\n"), "unknown key 'softmax'"),
    "cuda_graph maybe": (edited("cuda_graph: false", "cuda_graph: maybe"),
                         "17:19: tenants.0.workload.cuda_graph: expected true or false"),
    "cuda_graph 1": (edited("cuda_graph: false", "cuda_graph: 1"), "cuda_graph"),
    "cuda_graph a list": (edited("cuda_graph: false", "cuda_graph: [true]"), "cuda_graph"),
    "host per_request negative": (edited("per_request: 1ms", "per_request: -1ms"),
                                  "tenants.1.workload.host.per_request: must not be negative"),
    "host per_request wrong unit": (edited("per_request: 1ms", "per_request: 1 parsec"),
                                    "unknown duration unit 'parsec'"),
    "host per_request no unit": (edited("per_request: 1ms", "per_request: 1"), "missing unit"),
    "host unknown key": (edited("per_op: 5us", "per_opp: 5us"), "host.per_opp: unknown key"),
    "host cpu_speed 0": (edited("cpu_speed: 1.3", "cpu_speed: 0"), "host.cpu_speed"),
    "host per_op huge": (edited("per_op: 5us", "per_op: 1e30s"), "host.per_op: value too large"),
    "attention_seq_len 0": (edited("seq_len: 128\n", "seq_len: 128\n      attention_seq_len: "
                                   "0\n"), "attention_seq_len: must be >= 1"),
    "attention_seq_len short": (edited("seq_len: 128\n", "seq_len: 128\n      "
                                       "attention_seq_len: 64\n"), "shorter than seq_len 128"),
    "attention_seq_len huge": (edited("seq_len: 128\n", "seq_len: 128\n      "
                                      "attention_seq_len: 100000\n"), "does not fit"),
    "attention_seq_len 1.5": (edited("seq_len: 128\n", "seq_len: 128\n      "
                                     "attention_seq_len: 1.5\n"), "got 1.5"),
    "gemm_library unknown": (edited("tally-cutlass", "cutlass"), "unknown GEMM library"),
    "conv_library unknown": (edited("conv_library: native", "conv_library: cudnn8"),
                             "unknown convolution library"),
    "client_order unknown": (edited("client_order: interleaved", "client_order: fifo"),
                             "gpus.0.sharing.client_order: unknown MPS client order"),
    "priority 101": (edited("priority: 0", "priority: 101"), "tenants.0.workload.priority"),
    "priority -101": (edited("priority: 0", "priority: -101"), "tenants.0.workload.priority"),
    "priority 1.5": (edited("priority: 0", "priority: 1.5"), "tenants.0.workload.priority"),
    "ttft on a catalog tenant": (edited("slo: {p99: 100ms}", "slo: {ttft: {p99: 10ms}}"),
                                 "tenants.0.slo.ttft: the workload produces no output tokens"),
    "tpot on a catalog tenant": (edited("slo: {p99: 100ms}", "slo: {p99: 1s, tpot: {p50: 1ms}}"),
                                 "tenants.0.slo.tpot: the workload produces no output tokens"),
    "power tdp below idle": (edited("power: {tdp: 400W}", "power: {tdp: 30W}"),
                             "7:12: gpus.0.power: the board's idle draw 55W reaches its tdp 30W"),
    "power idle above tdp": (edited("power: {tdp: 400W}", "power: {idle: 500W}"),
                             "gpus.0.power: the board's idle draw 500W"),
    "power tdp 0": (edited("power: {tdp: 400W}", "power: {tdp: 0W}"), "gpus.0.power.tdp"),
    "power tensor_energy negative": (edited("power: {tdp: 400W}",
                                            "power: {tensor_energy: -1pJ/FLOP}"),
                                     "gpus.0.power.tensor_energy"),
}


def test_the_keys_scenario_runs(tmp_path):
    path = tmp_path / "keys.yaml"
    path.write_text(SCENARIO)
    assert gpumux("run", path, "-q", "-o", tmp_path / "out.h5").returncode == 0
    assert (tmp_path / "out.h5").is_file()


@pytest.mark.parametrize("case", sorted(SCENARIO_CASES))
def test_a_bad_new_scenario_key_is_one_located_line_from_validate_and_run(tmp_path, case):
    text, message = SCENARIO_CASES[case]
    path = tmp_path / "keys.yaml"
    path.write_text(text)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    validate = one_error(gpumux("validate", path, "-q"), "keys.yaml:", message)
    run = one_error(gpumux("run", path, "-q", "-o", out_dir / "out.h5"), "keys.yaml:", message)
    assert validate == run
    assert not list(out_dir.iterdir())


# ------------------------------------------------------------------- inspect at odd sizes

def inspect_scenario(runtime, key, value):
    model = "bert-base" if key == "seq_len" else "resnet50"
    if runtime in ("fastertransformer", "tensorflow-xla") and key == "batch":
        model = "bert-base"  # their catalog entries are encoders
    return f"""\
name: sizes
duration: 20ms
gpus: [{{name: g, model: h200-141gb}}]
tenants:
  - name: a
    device: g
    workload: {{model: {model}, {key}: {value}, runtime: {runtime}, arrivals: {{process: closed,
                concurrency: 1}}}}
"""


SIZES = [("batch", "0", "must be >= 1"), ("batch", "-1", "must be >= 1"),
         ("batch", "1000001", "at most 1000000 samples"), ("batch", "2147483648", "too large"),
         ("batch", "99999999999999999999", "out of range"), ("batch", "1e9", "expected an integer"),
         ("seq_len", "0", "must be >= 1"), ("seq_len", "-5", "must be >= 1"),
         ("seq_len", "100000", "does not fit"), ("seq_len", "2147483648", "too large"),
         ("seq_len", "{uniform: {min: 1, max: 1e12}}", "tokens per request"),
         ("batch", "1000000", "GiB")]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_inspect_refuses_an_odd_batch_or_length_on_every_runtime_in_bounded_memory(tmp_path,
                                                                                  runtime):
    """Each size on each runtime is one line (the batch of a million: a memory the GPU does not
    have, found without allocating it): the children's peak resident memory stays small."""
    for key, value, text in SIZES:
        path = tmp_path / f"{key}.yaml"
        path.write_text(inspect_scenario(runtime, key, value))
        line = one_error(gpumux("inspect", path), f"{key}.yaml:")
        assert text in line, (runtime, key, value, line)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mib < 512, peak_mib


LENGTHS = """\
name: lengths
duration: 1s
gpus: [{name: g, model: h200-141gb, sharing: {mode: time-slicing}}]
tenants:
  - name: a
    device: g
    replicas: REPLICAS
    workload: {model: bert-base, seq_len: {uniform: {min: 1, max: 512}}, runtime: tensorflow,
               arrivals: {process: closed, concurrency: 1}}
"""


@pytest.mark.parametrize("command", ["validate", "run", "inspect", "plan"])
def test_replicas_of_a_seq_len_distribution_are_bounded_before_anything_is_built(tmp_path,
                                                                                 command):
    """Every replica builds and keeps each length's kernels (~0.2 MB, ~1 ms each): 40 replicas
    over 1..512 took 17 s and 3.8 GB to validate, 1000 would exhaust the memory, and a plan of 10
    failed after 103 s. Now the lengths of all tenants together are bounded as one tenant's
    (4096), refused in one line at once (a plan's tenants have no device: its own scenario)."""
    text = LENGTHS.replace("REPLICAS", "10" if command == "plan" else "1000")  # plan: <= 64
    if command == "plan":
        text = text.replace("    device: g\n", "").replace(
            "gpus: [{name: g, model: h200-141gb, sharing: {mode: time-slicing}}]",
            "plan: {gpus: [{model: h200-141gb, cost_per_hour: 4}], max_gpus: 2}")
    path = tmp_path / "lengths.yaml"
    path.write_text(text)
    started = time.monotonic()
    line = 7 if command == "plan" else 8  # the plan's tenant has no device line
    one_error(gpumux(command, path), f"lengths.yaml:{line}:43:", "tenants.0.workload.seq_len: "
              "the catalog tenants' seq_len distributions span 4608 lengths so far")
    assert time.monotonic() - started < 5
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mib < 512, peak_mib


# ------------------------------------------------------------------------------------ plan

@pytest.mark.parametrize("slo,text", [
    ("{ttft: {p99: 10ms}}", "tenants.0.slo.ttft: the workload produces no output tokens"),
    ("{tpot: {p99: 1ms}}", "tenants.0.slo.tpot"),
    ("{p99: 0ms}", "tenants.0.slo.p99: must be greater than zero"),
    ("{p99: 20ms, p99: 30ms}", "duplicate key 'p99'"),
])
def test_plan_refuses_an_slo_no_setup_can_be_judged_on(tmp_path, slo, text):
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.read_text().replace("slo: {p99: 20ms}", f"slo: {slo}"))
    one_error(gpumux("plan", plan, "-o", tmp_path / "best.yaml"), "plan.yaml:", text)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.yaml"]


def test_plan_of_an_slo_that_cannot_be_met_says_so_and_writes_nothing(tmp_path):
    """A target below the kernel's own time is a valid question with the answer "none"
    (exit 1), not bad input; nothing is written."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.read_text().replace("slo: {p99: 20ms}", "slo: {p99: 1us}")
                    .replace("replicas: 12", "replicas: 2"))
    run = gpumux("plan", plan, "-o", tmp_path / "best.yaml")
    assert run.returncode == 1, run.stderr
    assert "no setup meets every SLO" in run.stderr and "Traceback" not in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.yaml"]


# ------------------------------------------------------------------ interrupted results

LONG = """\
name: long
duration: 100000s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 900/s}
      request: {kernels: [{name: k, duration: 1ms}]}
"""


def stopped_run(tmp_path, name, sig):
    """A long run to NAME.h5 stopped by SIG after its first 0.8 s: the run's exit status."""
    scenario = tmp_path / "long.yaml"
    scenario.write_text(LONG)
    proc = subprocess.Popen([GPUMUX, "run", str(scenario), "-o", str(tmp_path / f"{name}.h5"),
                             "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.8)
    proc.send_signal(sig)
    proc.communicate(timeout=TIMEOUT_S)
    return proc.returncode


def test_report_reads_an_interrupted_run_and_refuses_a_killed_one_in_one_line(tmp_path):
    assert stopped_run(tmp_path, "partial", signal.SIGINT) == 130
    table = gpumux("report", tmp_path / "partial.h5")
    assert table.returncode == 0, table.stderr
    assert "status: interrupted" in table.stdout
    summary = json.loads(gpumux("report", tmp_path / "partial.h5", "--format", "json").stdout)
    assert summary["status"] == "interrupted" and summary["tenants"]["t"]["completed"] > 0
    # A run killed outright leaves its temporary file (no handler runs): not a result.
    assert stopped_run(tmp_path, "killed", signal.SIGKILL) == -signal.SIGKILL
    left = [p for p in tmp_path.iterdir() if p.name.startswith("killed.h5.tmp.")]
    assert len(left) == 1 and not (tmp_path / "killed.h5").exists()
    one_error(gpumux("report", left[0]), left[0].name, "not a gpumux result file")
    # The interrupted result cut in half (a copy that stopped): one line naming it.
    cut = tmp_path / "cut.h5"
    data = (tmp_path / "partial.h5").read_bytes()
    cut.write_bytes(data[:len(data) // 2])
    for command in (["report"], ["report", "--format", "json"]):
        one_error(gpumux(*command, cut), "cut.h5")
    # Python's load: the interrupted result reads; one cut short or killed is the ValueError its
    # docstring promises (h5py's OSError escaped, naming no file, until 2026-12-08).
    import gpumux as gm
    assert gm.load(tmp_path / "partial.h5").status == "interrupted"
    for bad in (cut, left[0]):
        with pytest.raises(ValueError) as raised:
            gm.load(bad)
        message = str(raised.value)
        assert message.startswith(f"{bad}: not a gpumux result file (cannot open: "), message
        assert len(message.splitlines()) == 1, message


# ------------------------------------------------------------------- rerun_chain.py options

@pytest.mark.parametrize("args,text", [
    (["--from", "0"], "argument --from: invalid choice: 0"),
    (["--from", "x"], "argument --from: invalid int value: 'x'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--gpumux", "/nonexistent/gpumux"], "--gpumux /nonexistent/gpumux: /nonexistent is not a "
                                          "configured build directory"),
    (["--gpumux", "TMP/gpumux"], "is not a configured build directory (no build.ninja"),
    (["--date", "2026-02-30"], "--date: expected a day as YYYY-MM-DD, got '2026-02-30'"),
    (["--date", "20261208"], "--date: expected a day"),
])
def test_rerun_chain_refuses_bad_options_in_one_line_before_any_build(tmp_path, args, text):
    args = [a.replace("TMP", str(tmp_path)) for a in args]
    before = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                            text=True).stdout
    run = subprocess.run([sys.executable, str(RERUN_CHAIN), *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=TIMEOUT_S)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rerun_chain: error: "), run.stderr
    assert text in lines[0], lines[0]
    assert run.stdout == ""  # no stage started, nothing rebuilt
    assert subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                          text=True).stdout == before


# ---------------------------------------------------------------------------- Python API

def python_error(call, kind=None):
    """The one-line message of the exception CALL raises (a ScenarioError, which is a
    ValueError, unless KIND)."""
    import gpumux as gm
    with pytest.raises(kind or gm.ScenarioError) as raised:
        call(gm)
    if kind is None:
        assert isinstance(raised.value, ValueError)
    message = str(raised.value)
    assert len(message.splitlines()) == 1, message
    return message


def test_python_calibrate_takes_the_clis_fit_list_and_checks_what_it_is_given(tmp_path):
    data = str(write_csv(tmp_path / "points.csv", *catalog_rows()))
    import gpumux as gm
    as_text = gm.calibrate(data, fit="kernel_fixed_cost", profile="a100-sxm4-40gb", iterations=1)
    as_list = gm.calibrate(data, fit=["kernel_fixed_cost"], profile="a100-sxm4-40gb",
                           iterations=1)
    assert list(as_text["parameters"]) == list(as_list["parameters"]) == ["kernel_fixed_cost"]
    assert as_text["parameters"] == as_list["parameters"]
    assert "listed twice" in python_error(
        lambda g: g.calibrate(data, fit="kernel_fixed_cost,kernel_fixed_cost", iterations=1))
    assert "no point names a harness" in python_error(
        lambda g: g.calibrate(data, fit=["harness_per_request"], iterations=1))
    assert python_error(lambda g: g.calibrate(data, profile="bogus", iterations=1)).startswith(
        "profile: unknown GPU model 'bogus'")
    assert "fit: each name must be a str" in python_error(
        lambda g: g.calibrate(data, fit=[1], iterations=1), TypeError)
    assert "profile must be a str" in python_error(
        lambda g: g.calibrate(data, profile=5, iterations=1), TypeError)
    assert "data must be a path or a list of paths" in python_error(
        lambda g: g.calibrate(None), TypeError)


def test_python_gives_the_clis_line_for_the_same_bad_input(tmp_path):
    """The harness, header and profile faults through gpumux.calibrate / validate / run /
    inspect: a ScenarioError (ValueError) naming the file, line and key, never a RuntimeError
    or a crash; calibrate's output= is not written."""
    bad_harness = str(write_csv(tmp_path / "harness.csv", *with_cell("harness", "[x]")))
    target = tmp_path / "out" / "p.yaml"
    target.parent.mkdir()
    assert "harness.csv:2: harness" in python_error(
        lambda g: g.calibrate(bad_harness, profile="a100-sxm4-40gb", output=target))
    assert not list(target.parent.iterdir())
    twice = str(write_csv(tmp_path / "twice.csv", *header_case(doubled("cuda_graph"))))
    assert "twice.csv:1: header" in python_error(lambda g: g.calibrate(twice))
    scenario = profile_with(tmp_path, add_under("harness_per_request",
                                                "[x]: {value: 1us, assumption: t}"))
    for call in (lambda g: g.validate(str(scenario)), lambda g: g.run(str(scenario)),
                 lambda g: g.inspect(str(scenario))):
        assert "mine.yaml:" in python_error(call)
    keys = tmp_path / "keys.yaml"
    for case in ("ttft on a catalog tenant", "tensorrt-onnx training", "power tdp below idle"):
        text, message = SCENARIO_CASES[case]
        keys.write_text(text)
        assert message in python_error(lambda g: g.run(str(keys)))
    keys.write_text(SCENARIO)
    assert "cuda_graph: expected true or false" in python_error(
        lambda g: g.validate(str(keys), overrides={"tenants.0.workload.cuda_graph": "maybe"}))


def test_the_cases_cover_every_runtime_and_surface(tmp_path):
    """Every runtime the catalog knows is inspected at odd sizes (its list from the line that
    refuses an unknown one: a runtime added without a case fails here), and each family has
    cases."""
    path = tmp_path / "keys.yaml"
    path.write_text(edited("runtime: tensorrt-onnx", "runtime: no-such-runtime"))
    line = one_error(gpumux("validate", path), "unknown runtime 'no-such-runtime'")
    known = line.split("use one of: ", 1)[1].split(", ")
    assert sorted(known) == sorted(RUNTIMES)
    assert len(CSV_CASES) >= 10 and len(PROFILE_CASES) >= 10 and len(SCENARIO_CASES) >= 20
