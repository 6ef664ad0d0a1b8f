"""`gpumux inspect` and the workload catalog through the CLI and Python (docs/workloads.md):
each parameter's origin (user, default, catalog:NAME), the defaults warning of validate and run
(once per tenant, on stderr), the formats, catalog errors (one line, exit 2), and
gpumux.inspect()'s DataFrame. Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import csv
import io
import json
import math
import re
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

MIXED = """name: mixed
duration: 1s
gpus: [{name: gpu0, model: a100-80gb, sharing: {mode: mps}}]
tenants:
  - name: hand
    device: gpu0
    replicas: 3
    memory: 2GiB
    workload:
      arrivals: {process: poisson, rate: 10/s}
      request:
        kernels:
          - {name: given, duration: 1ms, sm_fraction: 0.5, memory_bound: 0.2}
          - {name: bare, duration: 2ms, repeat: 3}
  - name: api
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 10/s}
      model: bert-base
      batch: 4
"""


@pytest.fixture()
def mixed(tmp_path):
    path = tmp_path / "mixed.yaml"
    path.write_text(MIXED)
    return path


def test_inspect_json_names_every_origin(mixed):
    p = gpumux("inspect", str(mixed), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    tenants = {t["name"]: t for t in doc["tenants"]}
    hand = {k["name"]: k for k in tenants["hand-0"]["kernels"]}
    assert hand["given"]["sm_fraction"] == {"value": 0.5, "origin": "user"}
    assert hand["given"]["memory_bound"]["origin"] == "user"
    assert hand["given"]["waves"] == {"value": 1.0, "origin": "default"}
    assert hand["bare"]["sm_fraction"] == {"value": 1.0, "origin": "default"}
    assert hand["bare"]["repeat"] == {"value": "3", "origin": "user"}
    assert tenants["hand-0"]["memory_bytes"] == {"value": 2 * 2**30, "origin": "user"}
    api = tenants["api"]
    assert api["memory_bytes"]["origin"] == "catalog:bert-base"
    assert api["memory_bytes"]["value"] > 200e6  # 110 M parameters in fp16
    assert api["launch"] == {"value": "stream", "origin": "default"}
    kernels = {k["name"]: k for k in api["kernels"]}
    qkv = kernels["layer.qkv"]
    assert qkv["count"] == 12  # one per layer
    for field in ("duration_ns", "sm_fraction", "waves", "memory_bound", "working_set_bytes"):
        assert qkv[field]["origin"] == "catalog:bert-base", field
    # batch 4 x 128 tokens = 512 rows by 2304 columns: the grid of the tile and split-K the
    # selection chose (its `implementation`), and sm_fraction = min(1, blocks / 108 SMs).
    # Its input, the LayerNorm's 512 x 768 fp16 output, is read from L2.
    m = re.fullmatch(r"gemm (\d+)x(\d+)(?: split-K (\d+)(?: serial)?)?, input 768KiB from L2",
                     qkv["implementation"])
    assert m, qkv["implementation"]
    tm, tn, split = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
    assert qkv["blocks"] == math.ceil(512 / tm) * math.ceil(2304 / tn) * split
    assert qkv["sm_fraction"]["value"] == pytest.approx(min(1.0, qkv["blocks"] / 108))
    assert kernels["layer.attention"]["implementation"].startswith("fused attention, input ")
    # The default inference runtime is TensorRT: no host dispatch between kernels.
    assert api["runtime"] == {"value": "tensorrt", "origin": "default"}
    assert api["host_gap_ns"] == {"value": 0.0, "origin": "catalog:bert-base"}
    # The warnings: the hand-written tenant once (not per replica), the catalog tenant never.
    assert doc["warnings"] == [
        "hand-0: sm_fraction not given for 1 kernel: assumed full grid; memory_bound not given "
        "for 1 kernel: assumed compute-bound (see gpumux inspect)"
    ]


def test_validate_and_run_warn_once_per_tenant_on_stderr(mixed):
    for args in (("validate", str(mixed)), ("run", str(mixed), "--quiet")):
        p = gpumux(*args)
        assert p.returncode == 0, p.stderr
        lines = [line for line in p.stderr.splitlines() if "not given" in line]
        assert lines == [
            "gpumux: warning: hand-0: sm_fraction not given for 1 kernel: assumed full grid; "
            "memory_bound not given for 1 kernel: assumed compute-bound (see gpumux inspect)"
        ], args


def test_quickstart_rests_on_no_default():
    p = gpumux("run", str(REPO / "scenarios" / "quickstart.yaml"), "--quiet")
    assert p.returncode == 0
    assert "not given" not in p.stderr


def test_inspect_table_and_csv(mixed):
    table = gpumux("inspect", str(mixed))
    assert table.returncode == 0, table.stderr
    assert "tenant api on gpu0: memory" in table.stdout
    assert "(catalog:bert-base)" in table.stdout
    assert "user; default: waves, working_set" in table.stdout
    rows = list(csv.DictReader(io.StringIO(gpumux("inspect", str(mixed), "--format", "csv").stdout)))
    bare = next(r for r in rows if r["tenant"] == "hand-1" and r["kernel"] == "bare")
    assert (bare["sm_fraction"], bare["sm_fraction_origin"]) == ("1", "default")
    assert {r["tenant"] for r in rows} == {"hand-0", "hand-1", "hand-2", "api"}


def test_set_reaches_catalog_keys(mixed):
    one = json.loads(gpumux("inspect", str(mixed), "--json").stdout)
    big = json.loads(gpumux("inspect", str(mixed), "--json", "--set", "tenants.1.workload.batch=256").stdout)

    def qkv(doc):
        api = next(t for t in doc["tenants"] if t["name"] == "api")
        return next(k for k in api["kernels"] if k["name"] == "layer.qkv")

    assert qkv(big)["sm_fraction"]["value"] == 1.0
    assert qkv(big)["duration_ns"]["value"] > 10 * qkv(one)["duration_ns"]["value"]


@pytest.mark.parametrize(
    "tail, message",
    [
        ("      model: bert-bse\n", "unknown workload model 'bert-bse' (did you mean 'bert-base'?); known:"),
        ("      model: gpt2\n      phase: training\n      bus_bandwidth: 9GB\n",
         "tenants.0.workload.bus_bandwidth: bandwidth needs a size per second"),
        ("      model: resnet50\n      seq_len: 10\n", "tenants.0.workload.seq_len: resnet50 has no sequence length"),
        ("      model: resnet50\n      dtype: fp8\n", "has no compute_throughput.fp8_tensor"),
        ("      model: bert-base\n      seq_len: {uniform: {min: 0, max: 128}}\n",
         "tenants.0.workload.seq_len: every sequence length it can draw must be >= 1"),
        ("      model: bert-base\n      seq_len: {empirical: {values: [64, 128], weights: [1]}}\n",
         "expected one weight per value (2), got 1"),
        ("      model: bert-base\n      seq_len: {uniform: {min: 64, max: 600}}\n",
         "bert-base has 512 positions; seq_len 513 does not fit"),
        ("      model: resnet50\n      request: {kernels: [{duration: 1ms}]}\n",
         "tenants.0.workload.request: give request or model"),
    ],
)
def test_catalog_errors_are_one_located_line(tmp_path, tail, message):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\nduration: 1s\ngpus: [{name: gpu0, model: a100-80gb}]\ntenants:\n"
        "  - name: api\n    device: gpu0\n    workload:\n"
        "      arrivals: {process: poisson, rate: 1/s}\n" + tail
    )
    for command in ("validate", "inspect", "run"):
        p = gpumux(command, str(path))
        assert p.returncode == 2, (command, p.stderr)
        assert p.stderr.count("\n") == 1, p.stderr
        assert str(path) + ":" in p.stderr and message in p.stderr, p.stderr


def test_inspect_shows_a_seq_len_distribution(tmp_path):
    """A catalog tenant whose lengths vary: inspect names the distribution, its mean, the lengths
    built, the one the kernels are listed at and the one memory is at."""
    path = tmp_path / "lengths.yaml"
    path.write_text(
        "name: lengths\nduration: 1s\ngpus: [{name: gpu0, model: a100-80gb}]\ntenants:\n"
        "  - name: qa\n    device: gpu0\n    workload:\n"
        "      arrivals: {process: poisson, rate: 1/s}\n      model: bert-large\n"
        "      seq_len: {empirical: {values: [128, 384], weights: [3, 1]}}\n"
    )
    p = gpumux("inspect", str(path))
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stdout.splitlines() if l.strip().startswith("lengths:"))
    assert "empirical 128 (0.75), 384 (0.25)" in line and "(mean 192)" in line, line
    assert "2 lengths 128..384" in line and "rows below at 128" in line and "at 384" in line, line
    doc = json.loads(gpumux("inspect", str(path), "--json").stdout)
    assert doc["tenants"][0]["lengths"] == line.strip()[len("lengths: "):]


def test_python_inspect_dataframe(mixed):
    gpumux_py = pytest.importorskip("gpumux")
    df = gpumux_py.inspect(str(mixed))
    assert {"tenant", "kernel", "count", "sm_fraction", "sm_fraction_origin", "memory_origin"} <= set(df.columns)
    api = df[df.tenant == "api"]
    assert set(api.duration_origin) == {"catalog:bert-base"}
    bare = df[(df.tenant == "hand-0") & (df.kernel == "bare")].iloc[0]
    assert bare.sm_fraction_origin == "default"
    assert bare.repeat_origin == "user"
    text = gpumux_py.inspect(MIXED)  # YAML text works too
    assert len(text) == len(df)
    with pytest.raises(gpumux_py.ScenarioError, match="unknown workload model"):
        gpumux_py.inspect(MIXED.replace("bert-base", "bort"))


def test_inspect_shows_the_runtime_and_its_host_gap(tmp_path):
    """`runtime: pytorch` (eager): unfused attention kernels, and a host gap per launch equal to
    the runtime's dispatch time of every operator spread over the kernels."""
    path = tmp_path / "eager.yaml"
    path.write_text(MIXED.replace("      batch: 4\n", "      batch: 4\n      runtime: pytorch\n"))
    doc = json.loads(gpumux("inspect", str(path), "--json").stdout)
    api = next(t for t in doc["tenants"] if t["name"] == "api")
    assert api["runtime"] == {"value": "pytorch", "origin": "user"}
    names = {k["name"] for k in api["kernels"]}
    assert {"layer.attention_scores", "layer.softmax", "layer.attention_context"} <= names
    assert "layer.attention" not in names
    kernels = sum(k["count"] for k in api["kernels"])
    # 10 us per operator (kernel-families.yaml runtimes.pytorch), at least one per kernel.
    assert api["host_gap_ns"]["origin"] == "catalog:bert-base"
    assert api["host_gap_ns"]["value"] >= 10e3
    assert api["host_gap_ns"]["value"] * kernels < 10e3 * 2 * kernels
    table = gpumux("inspect", str(path)).stdout
    assert "runtime pytorch (user), host gap" in table


def test_inspect_shows_overlapped_phases_of_catalog_kernels(mixed):
    # Catalog kernels are rooflines whose SM and memory phases overlap (contention law 2): each
    # carries busy_share beside memory_bound, the larger of the two 1, both from the catalog; a
    # hand-written kernel without busy_share has serial phases (null, shown as '-').
    p = gpumux("inspect", str(mixed), "--json")
    assert p.returncode == 0, p.stderr
    tenants = {t["name"]: t for t in json.loads(p.stdout)["tenants"]}
    api = tenants["api"]["kernels"]
    assert api
    for k in api:
        assert k["busy_share"]["origin"] == "catalog:bert-base", k
        busy, m = k["busy_share"]["value"], k["memory_bound"]["value"]
        assert 0 <= busy <= 1 and 0 <= m <= 1, k
        assert max(busy, m) == pytest.approx(1.0, abs=1e-12), k
    assert any(k["busy_share"]["value"] < 1 for k in api)  # some kernel is memory-bound
    assert any(k["memory_bound"]["value"] < 1 for k in api)  # and some compute- or latency-bound
    hand = {k["name"]: k for k in tenants["hand-0"]["kernels"]}
    assert hand["given"]["busy_share"]["value"] is None
    table = gpumux("inspect", str(mixed))
    assert table.returncode == 0, table.stderr
    assert " busy " in table.stdout.splitlines()[1]


def test_a_written_busy_share_round_trips_and_a_bad_one_is_one_line(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(MIXED.replace("memory_bound: 0.2}", "memory_bound: 1, busy_share: 0.25}"))
    p = gpumux("inspect", str(good), "--json")
    assert p.returncode == 0, p.stderr
    tenants = {t["name"]: t for t in json.loads(p.stdout)["tenants"]}
    given = {k["name"]: k for k in tenants["hand-0"]["kernels"]}["given"]
    assert given["busy_share"] == {"value": 0.25, "origin": "user"}
    bad = tmp_path / "bad.yaml"
    bad.write_text(MIXED.replace("memory_bound: 0.2}", "memory_bound: 0.2, busy_share: 0.5}"))
    p = gpumux("validate", str(bad))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "bad.yaml:" in lines[0] and "busy_share" in lines[0] and "one of them to be 1" in lines[0]
