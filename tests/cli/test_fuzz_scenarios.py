"""A deterministic mutation fuzz of the shipped scenarios and traces: the error contract holds for
whatever a typo, a bad edit or a corrupt file makes of them.

Each case takes one input by a fixed seed (CASE_SEED + the case's number): a shipped scenario of
scenarios/ (not the cluster fleets of 1,024 and 10,240 nodes, whose validation alone takes
seconds, nor cluster/mig-parted.yaml, a mig-parted config), one of the two scenarios below that
use the newest workload keys (catalog: serving, io_dtype, harness, attention_seq_len,
gemm_library, conv_library, host; an LLM card with an engine's batching), or a trace a shipped
scenario reads (Azure CSV, kernel CSV, Orion CSV, Nsight Systems SQLite, PyTorch JSON). It
applies one mutation (a key deleted, duplicated or unknown; a value of the wrong type, negative,
zero, huge, NaN or with a wrong unit; the file truncated at a random byte; non-UTF-8 bytes; a
trace row's field changed or a byte flipped) and runs `validate` and `run -o OUT.h5` on it.

Asserted for every case: exit 0 or 2, never a signal, exit 3 (internal error), a Python
traceback or a run past 20 s; on exit 2 exactly one stderr line, `gpumux: error: ` and the name
of the mutated file, the same line from `validate` and `run`, and nothing left in -o's folder
(no OUT.h5, no OUT.h5.tmp.PID); on exit 0 from `run`, OUT.h5 written. `validate` and `run`
agree on the exit code (a scenario `validate` passes is not refused by the run). The cases
are fixed (the same mutations every run); a failure prints the case's input to reproduce it.

Bugs this and its exploratory runs found, each with a focused test (test_reliability_fixes.py):
a time slice of 1ns (from `timeslice: 1e-9s`) simulating for minutes; a context switch of
100000h overflowing the clock (exit 3); a cluster workload pod's kernel of 100000h running for
minutes. Drives $GPUMUX_BIN; about 40 s on two loaded cores.
"""
import random
import re
import shutil
from pathlib import Path

import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
CASE_SEED = 20261207
CASES = 96
TIMEOUT_S = 20
SKIP = {"cluster/mig-parted.yaml", "cluster/fleet-1024.yaml", "cluster/fleet-10240.yaml"}
# Planning scenarios (no device per tenant: `run` refuses them by design) and the openb replay
# (8,152 pods: its run alone is over a second) are validated only.
VALIDATE_ONLY = ("plan/", "cluster/openb-default.yaml")

CATALOG_KEYS = """\
name: catalog-keys
seed: 3
duration: 2s
warmup: 200ms
gpus:
  - name: gpu0
    model: a100-sxm4-40gb
    sharing: {mode: time-slicing, timeslice: 2ms, context_switch: 30us}
tenants:
  - name: bert
    device: gpu0
    memory: 4GiB
    workload:
      model: bert-large
      batch: 1
      seq_len: 128
      dtype: fp16
      runtime: tensorrt
      serving: triton-grpc
      io_dtype: int8
      harness: none
      attention_seq_len: 384
      arrivals: {process: poisson, rate: 50/s}
    slo: {p99: 40ms}
  - name: rn50
    device: gpu0
    workload:
      model: resnet50
      batch: 4
      dtype: fp16
      runtime: pytorch
      conv_library: cudnn
      memory_format: channels_last
      gemm_library: tally-cutlass
      serving: triton-shm
      host: {cpu_speed: 1.3, front_end_latency: 300us}
      arrivals: {process: constant, rate: 20/s}
"""

LLM_CARD = """\
name: llm-card
seed: 5
duration: 2s
gpus:
  - name: gpu0
    model: h100-sxm-80gb
    sharing: {mode: mps}
tenants:
  - name: chat
    device: gpu0
    memory: 40GiB
    workload:
      llm: {model: llama-2-7b, dtype: fp16, tp: 1, host_per_op: vllm-v0}
      batching: {max_batch: 32, scheduler: sarathi, chunk_size: 512, engine_cpu: {per_iteration: 1ms, per_sequence: 40us}}
      arrivals: {process: poisson, rate: 4/s}
      tokens: {input: {uniform: {min: 64, max: 512}}, output: 32}
    slo: {p99: 5s}
  - name: inline
    device: gpu0
    memory: 20GiB
    workload:
      llm: {layers: 4, hidden: 1024, heads: 16, kv_heads: 4, ffn: 4096, vocabulary: 32000, experts: 4, experts_per_token: 2, expert_ffn: 1024, sliding_window: 256}
      batching: {max_batch: 8, scheduler: vllm, max_tokens_in_batch: 4096, engine_cpu: vllm-v0}
      arrivals: {process: poisson, rate: 10/s}
      tokens: {input: 128, output: 16}
"""
EXTRA = {"catalog-keys.yaml": CATALOG_KEYS, "llm-card.yaml": LLM_CARD}

# (scenario, the trace it reads, relative to scenarios/)
TRACES = [("trace-azure-llm.yaml", "traces/azure-llm-conv-excerpt.csv"),
          ("trace-csv-mig-a100.yaml", "traces/kernels/llama7b-decode-a100.csv"),
          ("trace-orion-resnet50-a100.yaml", "traces/kernels/orion/resnet50_4_fwd.csv"),
          ("trace-nsys-decode-a100.yaml", "traces/kernels/llama7b-decode-a100.sqlite"),
          ("trace-torch-rescaled-h100.yaml", "traces/kernels/llama7b-decode-a100.pt.trace.json")]

KEY_LINE = re.compile(rb"^(\s*(?:- )?)([A-Za-z_][\w.-]*):(\s*)(.*)$")
FLOW_VALUE = re.compile(rb"([{,]\s*)([A-Za-z_][\w.-]*):\s*([^,{}\[\]#]+)")
VALUES = [b"-1", b"0", b"1e308", b"-1e308", b".nan", b".inf", b"-.inf", b"1e-320",
          b"99999999999999999999", b"[]", b"{}", b"~", b"true", b'""', b"abc", b"1ms", b"-5ms",
          b"1 parsec", b"10GiB", b"0/s", b"1e30/s", b"5%", b"0.5", b"1e9", b"0x10", b"[1, 2]",
          b"{a: 1}", b"18446744073709551616", b"1e-9s", b"100000h", b"1e400", b"NaNms",
          b"infs", b"*a", b"!!binary AAAA"]
UNITS = [b"ms", b"us", b"ns", b"s", b"h", b"GiB", b"MB", b"/s", b"%", b"TB", b"kg", b"min"]
NUMBERS = [b"-1", b"0", b"1e308", b"1e-300", b"123456789012", b"-0.0"]


def shipped():
    names = []
    for path in sorted(SCENARIOS.rglob("*.yaml")):
        name = path.relative_to(SCENARIOS).as_posix()
        if not name.startswith("traces/") and name not in SKIP:
            names.append(name)
    return names


def mutate_yaml(data, rng):
    """DATA with one mutation; returns (what, bytes)."""
    lines = data.split(b"\n")
    kind = rng.choice(["delete", "value", "value", "flow", "flow", "unit", "unknown", "truncate",
                       "duplicate", "non-utf8", "indent", "number"])
    keys = [i for i, line in enumerate(lines)
            if KEY_LINE.match(line) and not line.lstrip().startswith(b"#")]
    if kind == "truncate" or not keys:
        cut = rng.randrange(len(data))
        return f"truncated at byte {cut}", data[:cut]
    if kind == "non-utf8":
        at = rng.randrange(len(data))
        return f"non-UTF-8 at byte {at}", data[:at] + rng.choice([b"\xff", b"\xc3(", b"\xe9"]) \
            + data[at:]
    i = rng.choice(keys)
    match = KEY_LINE.match(lines[i])
    indent = match.group(1).replace(b"-", b" ")
    if kind == "delete":
        depth = len(lines[i]) - len(lines[i].lstrip())
        end = i + 1
        while end < len(lines) and (not lines[end].strip()
                                    or len(lines[end]) - len(lines[end].lstrip()) > depth):
            end += 1
        return f"line {i + 1} deleted with its block", b"\n".join(lines[:i] + lines[end:])
    if kind == "duplicate":
        value = rng.choice(VALUES)
        lines.insert(i + 1, indent + match.group(2) + b": " + value)
        return f"line {i + 1} key duplicated: {value!r}", b"\n".join(lines)
    if kind == "unknown":
        lines.insert(i + 1, indent + b"bogus_key: 1")
        return f"unknown key after line {i + 1}", b"\n".join(lines)
    if kind == "indent":
        lines[i] = b"  " + lines[i] if rng.random() < 0.5 else lines[i].lstrip()
        return f"line {i + 1} re-indented", b"\n".join(lines)
    # A scalar value: a block value (key: VALUE) or one inside a flow mapping ({key: VALUE}).
    spans = []
    for n, line in enumerate(lines):
        if line.lstrip().startswith(b"#"):
            continue
        spans += [(n, m.start(3), m.end(3)) for m in FLOW_VALUE.finditer(line)]
        m = KEY_LINE.match(line)
        if m and m.group(4) and not m.group(4).startswith((b"{", b"[", b"#", b">", b"|")):
            spans.append((n, m.start(4), m.end(4)))
    n, start, end = rng.choice(spans)
    old = lines[n][start:end]
    number = re.match(rb"\s*[-+0-9.e]+", old)
    if kind == "unit":
        new = (number.group(0) if number else b"1") + rng.choice(UNITS)
    elif kind == "number" and number:
        new = rng.choice(NUMBERS) + old[number.end():]
    else:
        new = rng.choice(VALUES)
    lines[n] = lines[n][:start] + new + lines[n][end:]
    return f"line {n + 1}: {old!r} -> {new!r}", b"\n".join(lines)


def mutate_trace(data, name, rng):
    """A trace's bytes with one mutation; returns (what, bytes)."""
    text = not name.endswith(".sqlite")
    kind = rng.choice(["truncate", "flip", "field", "field", "duplicate", "non-utf8", "empty"]
                      if text else ["truncate", "flip", "flip", "zero"])
    data = bytearray(data)
    if kind == "truncate":
        cut = rng.randrange(len(data))
        return f"truncated at byte {cut}", bytes(data[:cut])
    if kind == "empty":
        return "empty", b""
    if kind == "flip":
        at = [rng.randrange(len(data)) for _ in range(rng.randint(1, 4))]
        for a in at:
            data[a] ^= 1 << rng.randrange(8)
        return f"bits flipped at {at}", bytes(data)
    if kind == "zero":
        at = rng.randrange(len(data))
        data[at:at + 32] = bytes(len(data[at:at + 32]))
        return f"32 bytes zeroed at {at}", bytes(data)
    if kind == "non-utf8":
        at = rng.randrange(len(data))
        return f"non-UTF-8 at byte {at}", bytes(data[:at]) + b"\xff\xfe" + bytes(data[at:])
    lines = bytes(data).split(b"\n")
    row = rng.randrange(len(lines))
    if kind == "duplicate":
        lines.insert(row, lines[row])
        return f"line {row + 1} duplicated", b"\n".join(lines)
    value = rng.choice([b"-1", b"0", b"1e308", b"nan", b"inf", b"x", b"", b"1e400",
                        b"99999999999999999999", b"null"])
    if name.endswith(".json"):
        numbers = list(re.finditer(rb"-?\d+(\.\d+)?", bytes(data)))
        m = rng.choice(numbers)
        return f"number at byte {m.start()} -> {value!r}", \
            bytes(data[:m.start()]) + value + bytes(data[m.end():])
    fields = lines[row].split(b",")
    column = rng.randrange(len(fields))
    if rng.random() < 0.2:
        fields.pop(column)
        what = f"line {row + 1}: field {column} removed"
    else:
        fields[column] = value
        what = f"line {row + 1}: field {column} -> {value!r}"
    lines[row] = b",".join(fields)
    return what, b"\n".join(lines)


def pick_scenario(rng):
    """A shipped scenario, or (a third of the time: their keys are the newest) an extra one."""
    return rng.choice(sorted(EXTRA)) if rng.random() < 1 / 3 else rng.choice(shipped())


def make_case(number, root):
    """Writes case NUMBER's tree under ROOT; returns (scenario path, mutated file, what)."""
    rng = random.Random(CASE_SEED + number)
    tree = root / "s"
    (tree / "cluster").mkdir(parents=True)
    (tree / "plan").mkdir()
    (tree / "cluster" / "mig-parted.yaml").symlink_to(SCENARIOS / "cluster" / "mig-parted.yaml")
    if rng.random() < 0.25:
        scenario, trace = rng.choice(TRACES)
        # The traces are copied (each is small), the one under test mutated.
        shutil.copytree(SCENARIOS / "traces" / "kernels", tree / "traces" / "kernels",
                        ignore=shutil.ignore_patterns("*.py", "*.md", "*.txt"))
        shutil.copy(SCENARIOS / "traces" / "azure-llm-conv-excerpt.csv", tree / "traces")
        what, data = mutate_trace((SCENARIOS / trace).read_bytes(), trace, rng)
        (tree / trace).write_bytes(data)
        shutil.copy(SCENARIOS / scenario, tree / scenario)
        return tree / scenario, tree / trace, f"{trace}: {what}"
    (tree / "traces").symlink_to(SCENARIOS / "traces")
    name = pick_scenario(rng)
    source = EXTRA[name].encode() if name in EXTRA else (SCENARIOS / name).read_bytes()
    what, data = mutate_yaml(source, rng)
    (tree / name).write_bytes(data)
    return tree / name, tree / name, f"{name}: {what}"


def check(command, scenario, mutated, out_dir, what):
    args = [command, scenario, "-q"]
    if command == "run":
        args += ["-o", out_dir / "out.h5", "--format", "json"]
    out = run_gpumux(*args, timeout=TIMEOUT_S, cwd=scenario.parent, errors="replace")
    context = f"{command} [{what}]\n{out.stderr}"
    assert out.returncode in (0, 2), context
    assert "Traceback" not in out.stderr, context
    lines = out.stderr.strip().splitlines()
    if out.returncode == 2:
        assert len(lines) == 1, context
        assert lines[0].startswith("gpumux: error: "), context
        assert "internal error" not in lines[0], context
        assert mutated.name in lines[0] or scenario.name in lines[0], context
        assert not list(out_dir.iterdir()), context  # no OUT.h5, no OUT.h5.tmp.PID
    elif command == "run":
        assert (out_dir / "out.h5").is_file(), context
        assert [p.name for p in out_dir.iterdir()] == ["out.h5"], context
    return out.returncode, lines


@pytest.mark.parametrize("number", range(CASES))
def test_a_mutated_input_is_run_or_refused_in_one_line(tmp_path, number):
    scenario, mutated, what = make_case(number, tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    rc, lines = check("validate", scenario, mutated, out_dir, what)
    relative = scenario.relative_to(tmp_path / "s").as_posix()
    if relative.startswith(VALIDATE_ONLY):
        return
    run_rc, run_lines = check("run", scenario, mutated, out_dir, what)
    assert run_rc == rc, f"validate {rc}, run {run_rc} [{what}]: {run_lines}"
    if rc == 2:
        assert run_lines == lines, what


def test_the_cases_mutate_every_kind_of_input():
    """The fixed cases cover what they claim: shipped scenarios, both extra scenarios, every
    trace format, and each mutation kind (a change of CASE_SEED that lost one fails here)."""
    whats = []
    for number in range(CASES):
        rng = random.Random(CASE_SEED + number)
        if rng.random() < 0.25:
            scenario, trace = rng.choice(TRACES)
            whats.append((trace, mutate_trace((SCENARIOS / trace).read_bytes(), trace, rng)[0]))
        else:
            name = pick_scenario(rng)
            source = EXTRA[name].encode() if name in EXTRA else (SCENARIOS / name).read_bytes()
            whats.append((name, mutate_yaml(source, rng)[0]))
    inputs = {name for name, _ in whats}
    assert set(EXTRA) <= inputs
    assert {trace for _, trace in TRACES} <= inputs
    assert len(inputs & set(shipped())) >= 12
    text = " | ".join(what for _, what in whats)
    for marker in ("deleted", "duplicated", "unknown key", "truncated", "non-UTF-8", "->",
                   "re-indented", "flipped"):
        assert marker in text, marker
