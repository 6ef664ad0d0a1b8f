"""Reliability round 4: bad input on the surfaces rounds 1-3 did not reach (test_fuzz_round3.py,
test_fuzz_new_surfaces.py, test_fuzz_traces_and_options.py, test_cluster_reliability.py,
test_front_door_reliability.py), each case run with a timeout.

Surfaces: cluster scenarios (node pools, MIG layouts per pool, device-plugin sharing, pods, the
scheduler policy) and their options (--workers, --dask, --shards, -o); openb pod and node lists
(empty, duplicated, out of range, reordered, cut short); `plan` (SLOs, prices, max_gpus,
max_duration, --platform, --gpus, --strategies, --headroom, --jobs, --prices); `compare
--strategies`; `report` and `report --html` on result files whose tables have the wrong type or
shape (written with h5py); the Python API (run / compare / plan / sweep with wrong types, grids
empty or of 10^7 points, a scenario dict that holds itself). Signals during compare and plan -o
are covered by test_output_safety.py and test_signals_cluster.py.

Asserted for every bad case: exit 2 (never a signal, exit 3, a traceback or a run past
TIMEOUT_S), exactly one stderr line `gpumux: error: ` naming the file (and line and key) or the
option, and nothing left in the output folder. Each family's base input runs with exit 0 (the
cases fail for the mutation, not the base). Python: ScenarioError (a ValueError) or TypeError
with one line.

Found and fixed (2026-12-08; before -> after, each now one line, exit 2 / ValueError):
- `compare --strategies exclusive,dedicated` (two names of one strategy) or
  `mig+time-slicing,mig+time_slicing` (two spellings of its mode): exit 0, the same strategy
  simulated twice under two names; Python compare(["exclusive", "dedicated"]) too;
- `report --html` (and plot) on a result file whose /requests or /devices is not a table of
  records, whose /tenant_names holds numbers, whose /timeseries or /strategies is a dataset, or
  whose `strategies` attribute is not a JSON list: a Python traceback, exit 3;
- Python sweep: a grid key with no values, or an empty list of points, returned an empty frame;
  a grid of 10^7 points built every point (GBs) before running any; grid=None / a str / a list
  of ints gave a bare TypeError ("'NoneType' object is not iterable");
- Python compare(strategies=None) / plan(strategies=5): "'NoneType' object is not iterable";
  plan(strategies=["mig", "mig"]) was accepted (the CLI refuses it);
- `--set cluster.pods.0.requests.nvidia.com/gpu=2` (a resource name holds dots): "requests has
  no key 'nvidia'" with a hint that wrote a nested block no loader reads;
- a pod larger than every node (4 GPUs on 2-GPU nodes) pending with reason `fragmented` (the
  free total covered it), though no node could ever hold it: now `Insufficient nvidia.com/gpu`;
- Python gpumux.load of a cluster replay's file: a device Result with no tenants whose
  .requests / .slos / .events raised KeyError 'tenants';
- Python run(d) with a dict that holds itself: RecursionError;
- Python run(cluster, shards=2) without client= ignored shards; save_compare(path, []) was a
  RuntimeError; plan(gpus=[...]) and plan(prices=5) gave messages naming no argument.
Drives $GPUMUX_BIN (and the Python package on PYTHONPATH, as ctest sets it).
"""
import resource
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import GPUMUX, one_error, run_gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "scenarios" / "quickstart.yaml"
MIG_SCENARIO = REPO / "scenarios" / "mig-all-balanced-a100.yaml"
MIG_PARTED = REPO / "scenarios" / "cluster" / "mig-parted.yaml"
TIMEOUT_S = 20


def gpumux(*args, cwd=None):
    return run_gpumux(*args, timeout=TIMEOUT_S, cwd=cwd, errors="replace")


# ------------------------------------------------------------------------- cluster scenarios

CLUSTER = """\
name: r4
cluster:
  duration: 2h
  scheduler: {policy: best-fit}
  pools:
    - name: a100
      count: 1
      gpu: a100-80gb
      gpus_per_node: 1
      cpu: "32"
      memory: 256Gi
      cost_per_hour: 4.0
      sharing:
        device_plugin:
          version: v1
          flags: {migStrategy: mixed}
          sharing:
            timeSlicing:
              resources:
                - {name: nvidia.com/mig-2g.20gb, replicas: 3}
        mig_parted: {file: mig-parted.yaml, config: all-balanced}
    - name: whole
      count: 2
      gpu: h100-sxm-80gb
      gpus_per_node: 2
      cpu: "64"
      memory: 512Gi
  pods:
    - name: finetune
      count: 3
      arrival: 0s
      requests: {cpu: "4", memory: 32Gi, nvidia.com/mig-2g.20gb: 1}
      duration: 30min
    - name: train
      arrival: 10s
      requests: {cpu: "8", nvidia.com/gpu: 2}
      duration: 1h
"""

# case -> (text replaced, its replacement, what the one line names besides the file)
CLUSTER_CASES = {
    "pool count huge": ("count: 1\n", "count: 100000000\n",
                        ["cluster.pools.0.count", "at most 100000 nodes"]),
    "pool count negative": ("count: 1\n", "count: -1\n", ["cluster.pools.0.count", ">= 0"]),
    "gpus_per_node huge": ("gpus_per_node: 1\n", "gpus_per_node: 100000\n",
                           ["cluster.pools.0.gpus_per_node", "at most 64"]),
    "gpus_per_node 0 with a gpu": ("gpus_per_node: 1\n", "gpus_per_node: 0\n",
                                   ["cluster.pools.0.gpu", "drop `gpu`"]),
    "duplicate pool name": ("name: whole", "name: a100", ["cluster.pools.1.name", "duplicate"]),
    "unknown policy": ("policy: best-fit", "policy: bogus",
                       ["cluster.scheduler.policy", "unknown scheduling policy 'bogus'"]),
    "empty policy": ("policy: best-fit", "policy: ''", ["cluster.scheduler.policy"]),
    "unknown mig-parted config": ("config: all-balanced", "config: nope",
                                  ["cluster.pools.0.sharing.mig_parted.config", "'nope'"]),
    "mig-parted file is a folder": ("file: mig-parted.yaml", "file: sub",
                                    ["cluster.pools.0.sharing.mig_parted.file", "directory"]),
    "mig layout for a GPU without MIG": ("gpu: a100-80gb", "gpu: l4-24gb",
                                         ["cluster.pools.0.sharing.mig_parted.config",
                                          "l4-24gb"]),
    "time-slicing replicas 0": ("replicas: 3", "replicas: 0", ["replicas", ">= 2"]),
    "time-slicing replicas huge": ("replicas: 3", "replicas: 1000000000",
                                   ["replicas", "at most 1024"]),
    "unknown migStrategy": ("migStrategy: mixed", "migStrategy: bogus",
                            ["flags.migStrategy", "bogus"]),
    "unknown device-plugin version": ("version: v1", "version: v9",
                                      ["device_plugin.version", "v9"]),
    "pod count huge": ("count: 3", "count: 100000000",
                       ["cluster.pods.0.count", "at most 1000000 pods"]),
    "pod duration 0": ("duration: 30min", "duration: 0s", ["cluster.pods.0.duration"]),
    "pod duration huge": ("duration: 30min", "duration: 1e300s",
                          ["cluster.pods.0.duration", "too large"]),
    "pod arrival negative": ("arrival: 0s", "arrival: -1s", ["cluster.pods.0.arrival"]),
    "pod GPUs fractional": ("nvidia.com/gpu: 2", "nvidia.com/gpu: 1.5",
                            ["cluster.pods.1.requests.nvidia.com/gpu", "whole number"]),
    "pod GPUs negative": ("nvidia.com/gpu: 2", "nvidia.com/gpu: -1",
                          ["cluster.pods.1.requests.nvidia.com/gpu", "negative"]),
    "pod CPU out of range": ('cpu: "8"', 'cpu: "1e30"', ["cluster.pods.1.requests.cpu"]),
    "pool memory negative": ("memory: 256Gi", "memory: -1Gi", ["cluster.pools.0.memory"]),
    "pool price negative": ("cost_per_hour: 4.0", "cost_per_hour: -4.0",
                            ["cluster.pools.0.cost_per_hour"]),
    "duplicate pod name": ("name: train", "name: finetune-0",
                           ["cluster.pods.1.name", "duplicate pod name 'finetune-0'"]),
}


def cluster_file(tmp_path, text=CLUSTER):
    shutil.copy(MIG_PARTED, tmp_path / "mig-parted.yaml")
    (tmp_path / "sub").mkdir(exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_the_cluster_base_replays(tmp_path):
    out = gpumux("run", cluster_file(tmp_path), "--json", "-q")
    assert out.returncode == 0, out.stderr
    assert '"pods"' in out.stdout


@pytest.mark.parametrize("case", sorted(CLUSTER_CASES))
def test_a_bad_cluster_scenario_is_one_located_line(tmp_path, case):
    old, new, named = CLUSTER_CASES[case]
    assert old in CLUSTER
    path = cluster_file(tmp_path, CLUSTER.replace(old, new, 1))
    for command in ("validate", "run"):
        one_error(gpumux(command, path, "-q"), f"{path}:", *named)


def test_pods_no_node_can_hold_wait_with_their_reason(tmp_path):
    """Not an input error: a pool of no nodes, or a pod asking more CPU than any node has, is a
    cluster where those pods pend (Kubernetes' "Insufficient ..."): exit 0, the pods counted as
    never started, the reason given."""
    import json
    path = cluster_file(tmp_path, CLUSTER.replace('cpu: "4"', 'cpu: "400"'))
    summary = json.loads(gpumux("run", path, "--json", "-q").stdout)
    finetune = next(c for c in summary["classes"] if c["class"] == "finetune")
    assert finetune["pods"] == 3 and finetune["started"] == 0
    # The reason of the nodes nearest to fit (here the MIG-less H100 nodes' missing slice).
    assert [r["pods"] for r in summary["pending_reasons"]] == [3]
    assert summary["pending_reasons"][0]["reason"].startswith("Insufficient ")
    empty = cluster_file(tmp_path, CLUSTER.replace("count: 2\n", "count: 0\n"))
    summary = json.loads(gpumux("run", empty, "--json", "-q").stdout)
    train = next(c for c in summary["classes"] if c["class"] == "train")
    assert train["started"] == 0


def test_set_reaches_a_resource_name_with_dots(tmp_path):
    """`--set cluster.pods.N.requests.nvidia.com/gpu=...`: the path was split at every dot
    ("requests has no key 'nvidia'", and a hint to set `nvidia={com/gpu: ...}`); the rest of a
    path holding '/' is now the one resource key, checked as the file's."""
    import json
    path = cluster_file(tmp_path)
    key = "cluster.pods.1.requests.nvidia.com/gpu"
    one_error(gpumux("run", path, "-q", "--set", f"{key}=1.5"), f"--set {key}", "whole number")
    base = json.loads(gpumux("run", path, "--json", "-q").stdout)
    wide = json.loads(gpumux("run", path, "--json", "-q", "--set", f"{key}=4").stdout)
    started = {c["class"]: c["started"] for c in base["classes"]}
    assert started["train"] == 1
    assert {c["class"]: c["started"] for c in wide["classes"]}["train"] == 0  # 2-GPU nodes
    # No node can ever hold 4 GPUs: kube-scheduler's reason, not "fragmented" (4 GPUs are free
    # in total on the two H100 nodes, which it was called until 2026-12-08).
    assert wide["pending_reasons"] == [{"reason": "Insufficient nvidia.com/gpu", "pods": 1}]
    added = json.loads(gpumux("run", path, "--json", "-q", "--set",
                              "cluster.pods.0.requests.nvidia.com/mig-7g.80gb=1").stdout)
    assert {c["class"]: c["started"] for c in added["classes"]}["finetune"] == 0
    one_error(gpumux("run", path, "-q", "--set", "cluster.pods.0.requests.nvidia=1"),
              "unknown resource 'nvidia'")


@pytest.mark.parametrize("options,named", [
    (["--workers", "0"], ["--workers", "1..1024"]),
    (["--workers", "-1"], ["--workers"]),
    (["--workers", "x"], ["--workers"]),
    (["--workers", "2.5"], ["--workers"]),
    (["--workers", "100000"], ["--workers", "1..1024"]),
    (["--dask", "local:0"], ["--dask local:0", "1..1024"]),
    (["--dask", "local:x"], ["--dask local:x"]),
    (["--dask", "tcp://:0"], ["--dask tcp://:0", "port"]),
    (["--dask", "bogus"], ["--dask bogus"]),
    (["--workers", "2", "--dask", "local:2"], ["--dask, --workers"]),
    (["--workers", "2", "--shards", "0"], ["--shards"]),
    (["--shards", "2"], ["--shards", "only with --dask"]),
])
def test_a_bad_cluster_option_is_one_line_naming_it(tmp_path, options, named):
    one_error(gpumux("run", cluster_file(tmp_path), "-q", *options), *named)


@pytest.mark.parametrize("target,named", [
    ("folder.h5", "is a directory"), ("missing/r.h5", "does not exist"),
    ("r.txt", "HDF5 result files only")])
def test_a_cluster_result_into_a_wrong_place_leaves_nothing(tmp_path, target, named):
    path = cluster_file(tmp_path)
    (tmp_path / "folder.h5").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    one_error(gpumux("run", path, "-q", "-o", tmp_path / target), "-o", named)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("option", [["--workers", "2"], ["--dask", "local:1"],
                                    ["--shards", "3"]])
def test_cluster_options_on_a_device_scenario_are_refused(option):
    one_error(gpumux("run", QUICKSTART, "-q", *option), option[0], "cluster:")


# ------------------------------------------------------------------------------ openb lists

OPENB = "name: o\ncluster:\n  openb: {nodes: nodes.csv, pods: pods.csv}\n"
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,96000,524288,8,V100M32\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
        "deletion_time,scheduled_time\n"
        "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
        "p1,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
        "p2,6000,12288,2,1000,V100M32,LS,Running,500000,12902960,500000\n")

# case -> (file, text replaced, replacement, what the line names: "FILE:LINE:COL: KEY" parts)
OPENB_CASES = {
    "pods empty": ("pods", PODS, "", ["pods.csv: empty file"]),
    "pods header only": ("pods", PODS, PODS.split("\n")[0] + "\n", ["pods.csv:1:1", "no pods"]),
    "nodes header only": ("nodes", NODES, NODES.split("\n")[0] + "\n",
                          ["nodes.csv:1:1", "no nodes"]),
    "pod listed twice": ("pods", "\np1,", "\np0,", ["pods.csv:3:1", "'p0' listed twice"]),
    "node listed twice": ("nodes", "\nn1,", "\nn0,", ["nodes.csv:3:1", "'n0' listed twice"]),
    "deleted before created": ("pods", "427061,12902960", "427061,100",
                               ["pods.csv:3:", "deletion_time"]),
    "creation time past int64": ("pods", ",0,12537496,0", ",99999999999999999999,12537496,0",
                                 ["pods.csv:2:", "creation_time"]),
    "creation time huge": ("pods", ",0,12537496,0",
                           ",9223372036854775807,9223372036854775807,0",
                           ["pods.csv:2:", "creation_time", "1000000000"]),
    "gpu share above 1000": ("pods", "p0,12000,16384,1,1000", "p0,12000,16384,1,5000",
                             ["pods.csv:2:", "gpu_milli"]),
    "num_gpu huge": ("pods", "p0,12000,16384,1,", "p0,12000,16384,1000000,",
                     ["pods.csv:2:", "num_gpu", "at most 64"]),
    "num_gpu negative": ("pods", "p0,12000,16384,1,", "p0,12000,16384,-1,",
                         ["pods.csv:2:", "num_gpu"]),
    "cpu negative": ("pods", "p0,12000", "p0,-12000", ["pods.csv:2:", "cpu_milli"]),
    "cpu nan": ("pods", "p0,12000", "p0,nan", ["pods.csv:2:", "cpu_milli", "'nan'"]),
    "node GPUs huge": ("nodes", ",2,P100", ",100000,P100", ["nodes.csv:2:", "gpu", "at most 64"]),
    "node CPU past int64": ("nodes", "n0,64000", "n0,99999999999999999999",
                            ["nodes.csv:2:", "cpu_milli"]),
    "columns swapped": ("pods", "name,cpu_milli", "cpu_milli,name", ["pods.csv:2:", "cpu_milli"]),
    "column dropped": ("pods", ",scheduled_time\n", "\n", ["pods.csv:2:1", "header has 10"]),
    "row cut short": ("pods", ",427061\n", "\n", ["pods.csv:3:1", "header has 11"]),
    "row with an extra field": ("pods", ",500000\n", ",500000,x\n",
                                ["pods.csv:4:1", "header has 11"]),
    "byte-order mark": ("pods", "name,", "\ufeffname,", ["pods.csv:1:1", "missing column"]),
    "file cut mid-row": ("pods", PODS, PODS[:150], ["pods.csv:2:1", "header has 11"]),
}


def openb_files(tmp_path, pods=PODS, nodes=NODES):
    (tmp_path / "pods.csv").write_text(pods, encoding="utf-8")
    (tmp_path / "nodes.csv").write_text(nodes, encoding="utf-8")
    path = tmp_path / "o.yaml"
    path.write_text(OPENB)
    return path


@pytest.mark.parametrize("case", sorted(OPENB_CASES))
def test_a_bad_openb_list_is_one_line_at_its_row(tmp_path, case):
    which, old, new, named = OPENB_CASES[case]
    texts = {"pods": PODS, "nodes": NODES}
    assert old in texts[which]
    texts[which] = texts[which].replace(old, new, 1)
    path = openb_files(tmp_path, **texts)
    one_error(gpumux("run", path, "-q"), *named)


def test_an_openb_list_in_any_order_replays_the_same(tmp_path):
    """The replay sorts pods by creation time: the rows reversed give the same summary."""
    path = openb_files(tmp_path)
    forward = gpumux("run", path, "--json", "-q")
    assert forward.returncode == 0, forward.stderr
    header, *rows = PODS.strip().split("\n")
    openb_files(tmp_path, pods="\n".join([header, *reversed(rows)]) + "\n")
    backward = gpumux("run", path, "--json", "-q")
    assert backward.returncode == 0, backward.stderr
    assert backward.stdout == forward.stdout


def test_an_openb_list_that_is_a_folder_names_the_key(tmp_path):
    path = openb_files(tmp_path)
    (tmp_path / "podsdir").mkdir()
    path.write_text(OPENB.replace("pods: pods.csv", "pods: podsdir"))
    one_error(gpumux("run", path, "-q"), f"{path}:3:", "cluster.openb.pods", "is a directory")


# ------------------------------------------------------------------------------------ plan

PLAN = """\
name: p
seed: 7
duration: 1s
warmup: 100ms
plan:
  gpus:
    - {model: h100-sxm-80gb, cost_per_hour: 4.0, currency: USD}
  max_gpus: 2
tenants:
  - name: svc
    replicas: 2
    memory: 2GiB
    workload:
      arrivals: {process: poisson, rate: 50/s}
      request:
        kernels:
          - {name: k, duration: 2ms, sm_fraction: 0.5, memory_bound: 0.3}
    slo: {p99: 20ms}
"""

PLAN_CASES = {
    "slo 0": ("p99: 20ms", "p99: 0ms", ["tenants.0.slo.p99", "greater than zero"]),
    "slo negative": ("p99: 20ms", "p99: -1ms", ["tenants.0.slo.p99", "negative"]),
    "price negative": ("cost_per_hour: 4.0", "cost_per_hour: -4.0",
                       ["plan.gpus.0.cost_per_hour", "> 0"]),
    "price 0": ("cost_per_hour: 4.0", "cost_per_hour: 0", ["plan.gpus.0.cost_per_hour"]),
    "price missing": ("cost_per_hour: 4.0, ", "", ["plan.gpus.0.cost_per_hour", "missing"]),
    "price nan": ("cost_per_hour: 4.0", "cost_per_hour: .nan", ["plan.gpus.0.cost_per_hour"]),
    "price overflows": ("cost_per_hour: 4.0", "cost_per_hour: 1e400",
                        ["plan.gpus.0.cost_per_hour", "finite"]),
    "currency empty": ("currency: USD", "currency: ''", ["plan.gpus.0.currency"]),
    "max_gpus 0": ("max_gpus: 2", "max_gpus: 0", ["plan.max_gpus", ">= 1"]),
    "max_duration huge": ("  max_gpus: 2", "  max_duration: 1e30s",
                          ["plan.max_duration", "too large"]),
    "max_duration negative": ("  max_gpus: 2", "  max_duration: -1s", ["plan.max_duration"]),
    "model unknown": ("model: h100-sxm-80gb", "model: nope",
                      ["plan.gpus.0.model", "unknown GPU model 'nope'"]),
    "gpus twice": ("  max_gpus: 2", "  gpus: []", ["plan.gpus", "duplicate key"]),
}


@pytest.mark.parametrize("case", sorted(PLAN_CASES))
def test_a_bad_plan_block_is_one_located_line_and_writes_nothing(tmp_path, case):
    old, new, named = PLAN_CASES[case]
    assert old in PLAN
    path = tmp_path / "p.yaml"
    path.write_text(PLAN.replace(old, new, 1))
    one_error(gpumux("plan", path, "-q", "-o", tmp_path / "best.yaml"), f"{path}:", *named)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.yaml"]


@pytest.mark.parametrize("options,named", [
    (["--platform", "nope"], ["--platform", "unknown platform 'nope'"]),
    (["--platform", ""], ["--platform", "missing value"]),
    (["--platform", "GKE"], ["--platform", "did you mean 'gke'"]),
    (["--gpus", "h100-sxm-80gb=-1"], ["--gpus", "> 0"]),
    (["--gpus", "h100-sxm-80gb="], ["--gpus", "MODEL=PRICE"]),
    (["--gpus", "=1"], ["--gpus", "MODEL=PRICE"]),
    (["--gpus", ""], ["--gpus", "non-empty"]),
    (["--gpus", "h100-sxm-80gb=1,h100-sxm-80gb=2"], ["--gpus", "listed twice"]),
    (["--strategies", ""], ["--strategies", "no strategy"]),
    (["--strategies", "mig,mig"], ["--strategies", "'mig' listed twice"]),
    (["--strategies", "nope"], ["--strategies", "unknown strategy 'nope'"]),
    (["--headroom", "-1"], ["--headroom"]),
    (["--headroom", "nan"], ["--headroom", "finite"]),
    (["--jobs", "0"], ["--jobs", "1..1024"]),
    (["--jobs", "100000"], ["--jobs", "1..1024"]),
    (["--prices", "/no/such/prices.yaml"], ["--prices", "cannot open"]),
])
def test_a_bad_plan_option_is_one_line_naming_it(tmp_path, options, named):
    path = tmp_path / "p.yaml"
    path.write_text(PLAN)
    one_error(gpumux("plan", path, "-q", "-o", tmp_path / "best.yaml", *options), *named)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.yaml"]


def test_the_plan_base_is_planned_and_an_infeasible_one_says_why(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(PLAN)
    assert gpumux("plan", path, "-q", "-o", tmp_path / "best.yaml").returncode == 0
    assert (tmp_path / "best.yaml").is_file()
    path.write_text(PLAN.replace("memory: 2GiB", "memory: 500GiB"))
    out = gpumux("plan", path, "-q", "-o", tmp_path / "none.yaml")
    assert out.returncode == 1, out.stderr
    assert "no setup meets every SLO" in out.stderr and "needs 500 GiB" in out.stderr
    assert not (tmp_path / "none.yaml").exists()


# ---------------------------------------------------------------------------------- compare

@pytest.mark.parametrize("strategies,named", [
    ("exclusive,dedicated", "'exclusive' and 'dedicated' are one strategy"),
    ("dedicated,exclusive", "'dedicated' and 'exclusive' are one strategy"),
    ("mig+time-slicing,mig+time_slicing", "'mig+time-slicing' and 'mig+time_slicing' are one"),
    ("mig+timeslicing,mps,mig+time_slicing", "'mig+timeslicing' and 'mig+time_slicing' are one"),
    ("mps,mps", "'mps' listed twice"),
    ("", "no strategy given"),
    (",", "no strategy given"),
    ("nope", "unknown strategy 'nope'"),
    ("MIG", "unknown strategy 'MIG'"),
])
def test_compare_runs_each_strategy_once_and_refuses_unknown_ones(tmp_path, strategies, named):
    one_error(gpumux("compare", MIG_SCENARIO, "-q", "--strategies", strategies, "-o",
                     tmp_path / "c.h5"), "--strategies", named)
    assert list(tmp_path.iterdir()) == []


def test_compare_of_distinct_strategies_runs_each(tmp_path):
    """The control: mig, mig+exclusive, exclusive and mps are four strategies (the check
    compares the strategies, not the text before '+')."""
    import json
    out = gpumux("compare", MIG_SCENARIO, "-q", "--json", "--set", "duration=1s", "--set",
                 "warmup=0s", "--strategies", "mig,mig+exclusive,exclusive,mps")
    assert out.returncode == 0, out.stderr
    assert [s["strategy"] for s in json.loads(out.stdout)] == [
        "mig", "mig+exclusive", "exclusive", "mps"]


# -------------------------------------------------------------------------- report on HDF5

@pytest.fixture(scope="module")
def result_files(tmp_path_factory):
    """A device run's file and a compare file of the quickstart, 2 s simulated."""
    folder = tmp_path_factory.mktemp("results")
    device, compared = folder / "dev.h5", folder / "cmp.h5"
    short = ["--set", "duration=2s", "--set", "warmup=0s", "-q"]
    assert gpumux("run", QUICKSTART, "-o", device, *short).returncode == 0
    assert gpumux("compare", QUICKSTART, "--strategies", "exclusive,mps", "-o", compared,
                  *short).returncode == 0
    return {"dev": device, "cmp": compared}


def replaced(name, data):
    def edit(h5):
        del h5[name]
        h5.create_dataset(name, data=data)
    return edit


def set_attribute(name, value):
    def edit(h5):
        h5.attrs[name] = value
    return edit


# case -> (base file, edit, what the line names)
H5_CASES = {
    "requests of floats": ("dev", replaced("requests", np.arange(5, dtype="f4")),
                           "/requests is not a table of records"),
    "devices a group": ("dev", lambda h5: (h5.__delitem__("devices"), h5.create_group("devices")),
                        "/devices is not a table of records"),
    "tenant names numbers": ("dev", replaced("tenant_names", [1]),
                             "/tenant_names is not a list of names"),
    "timeseries a dataset": ("dev", replaced("timeseries", [1, 2]),
                             "/timeseries is not a group"),
    "requests without a column": ("dev", replaced("requests", np.zeros(
        3, dtype=[("tenant", "<u4"), ("request_id", "<u8")])), "/requests has no column"),
    "strategies a dataset": ("cmp", replaced("strategies", [1]), "/strategies is not a group"),
    "strategies attribute a number": ("cmp", set_attribute("strategies", 5),
                                      "strategies attribute is not a JSON list"),
    "strategies attribute not JSON": ("cmp", set_attribute("strategies", "[mps"),
                                      "strategies attribute is not a JSON list"),
    "a strategy table of floats": ("cmp", replaced("strategies/mps/requests", np.zeros(2)),
                                   "/strategies/mps/requests is not a table"),
}


@pytest.mark.parametrize("case", sorted(H5_CASES))
def test_report_html_of_a_mangled_result_file_is_one_line(tmp_path, result_files, case):
    base, edit, named = H5_CASES[case]
    path = tmp_path / f"{base}.h5"
    shutil.copy(result_files[base], path)
    with h5py.File(path, "r+") as h5:
        edit(h5)
    page = tmp_path / "r.html"
    one_error(gpumux("report", path, "--html", page, "-q"), str(path), named)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_report_html_of_the_intact_files_is_written(tmp_path, result_files):
    for name, path in result_files.items():
        page = tmp_path / f"{name}.html"
        out = gpumux("report", path, "--html", page, "-q")
        assert out.returncode == 0, out.stderr
        assert page.stat().st_size > 1000


# ------------------------------------------------------------------------------- Python API

def python_error(call, kind=None):
    """The one-line message of the exception CALL(gpumux) raises (a ScenarioError, which is a
    ValueError, unless KIND)."""
    import gpumux as gm
    with pytest.raises(kind or gm.ScenarioError) as raised:
        call(gm)
    if kind is None:
        assert isinstance(raised.value, ValueError)
    message = str(raised.value)
    assert len(message.splitlines()) == 1, message
    return message


def test_python_strategy_lists_are_checked_as_the_clis(tmp_path):
    quick, plan = str(QUICKSTART), tmp_path / "p.yaml"
    plan.write_text(PLAN)
    assert "'exclusive' and 'dedicated' are one strategy" in python_error(
        lambda g: g.compare(quick, ["exclusive", "dedicated"]))
    assert "'mps' listed twice" in python_error(lambda g: g.compare(quick, "mps,mps"))
    assert "no strategy given" in python_error(lambda g: g.compare(quick, []))
    assert "'mig' listed twice" in python_error(lambda g: g.plan(str(plan),
                                                                 strategies=["mig", "mig"]))
    for bad in (None, 5, {"mig": 1}, b"mig"):
        assert "strategies must be a comma-separated str or a list" in python_error(
            lambda g: g.compare(quick, bad), TypeError)
    assert "strategies must be" in python_error(lambda g: g.plan(str(plan), strategies=5),
                                                TypeError)
    frame = __import__("gpumux").compare(quick, np.array(["exclusive", "mps"]),
                                         overrides={"duration": "1s", "warmup": "0s"})
    assert list(frame.index.get_level_values("strategy").unique()) == ["exclusive", "mps"]


def test_python_sweep_refuses_empty_and_huge_grids_before_building_them():
    quick = str(QUICKSTART)
    assert "grid key 'seed' has no values" in python_error(
        lambda g: g.sweep(quick, {"seed": []}, processes=1), ValueError)
    assert "the grid has no points" in python_error(
        lambda g: g.sweep(quick, [], processes=1), ValueError)
    assert "more than 100,000 points (at 'duration')" in python_error(
        lambda g: g.sweep(quick, {"seed": range(10**4), "duration": ["1s"] * 10**4},
                          processes=1), ValueError)
    for grid, text in ((None, "not NoneType"), ("seed", "not str"),
                       ([5], "a list holding int"), ({1: [1]}, "grid keys must be")):
        assert text in python_error(lambda g: g.sweep(quick, grid, processes=1), TypeError)


def test_a_sweep_of_ten_million_points_is_refused_in_bounded_memory_and_time():
    """In a child process limited to 2 GiB of address space: before the bound, the 10^7 point
    dicts and their override lists were built first (several GB)."""
    script = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        import gpumux
        try:
            gpumux.sweep({str(QUICKSTART)!r}, {{"seed": range(10**7)}}, processes=1)
        except ValueError as e:
            print(e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    assert "more than 100,000 points (at 'seed')" in out.stdout
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 2 << 20  # KiB: < 2 GiB


def test_python_cluster_and_plan_arguments_are_checked_not_ignored(tmp_path):
    """shards= without client= was ignored (the CLI refuses --shards without --dask);
    save_compare of no Results was a RuntimeError; plan(gpus=[...]) gave dict()'s "dictionary
    update sequence element #0 has length 13"; plan(prices=5) os.fspath's message."""
    cluster = str(cluster_file(tmp_path))
    assert "shards=: only with client=" in python_error(lambda g: g.run(cluster, shards=2))
    assert "save_compare needs at least one Result" in python_error(
        lambda g: g.save_compare(tmp_path / "c.h5", []))
    assert not (tmp_path / "c.h5").exists()
    plan = tmp_path / "p.yaml"
    plan.write_text(PLAN)
    assert "gpus must be a dict {model: price per hour}, not list" in python_error(
        lambda g: g.plan(str(plan), gpus=["h100-sxm-80gb"]), TypeError)
    assert "prices must be the path of a price table, not int" in python_error(
        lambda g: g.plan(str(plan), prices=5), TypeError)


def test_python_load_of_a_cluster_file_says_what_it_is(tmp_path):
    """gpumux.load gave a device Result of a cluster replay's file: no tenants, and .requests,
    .slos and .events raised KeyError 'tenants'. Now the CLI's line (report --html, plot)."""
    out = tmp_path / "cluster.h5"
    assert gpumux("run", cluster_file(tmp_path), "-q", "-o", out).returncode == 0
    message = python_error(lambda g: g.load(out), ValueError)
    assert message.startswith(f"{out}: gpumux.load reads device results")
    assert "cluster replay's file" in message


def test_python_scenario_dict_that_holds_itself_is_one_line():
    scenario = {"name": "loop"}
    scenario["tenants"] = [scenario]
    assert "refers to itself" in python_error(lambda g: g.run(scenario))


def test_the_cases_cover_each_surface():
    assert len(CLUSTER_CASES) >= 20 and len(OPENB_CASES) >= 20
    assert len(PLAN_CASES) >= 10 and len(H5_CASES) >= 8
    assert Path(GPUMUX).is_file()
