"""gpumux's fgd and best-fit make the FGD reference simulator's decisions (docs/cluster.md, "FGD
beside the reference simulator"). The reference breaks equal scores by the smallest node name
and names its nodes with a prefix from a seeded random permutation; given those names
(bench/fgd/reference_node_names_every*.csv, read from its logs), gpumux's name tie-break follows
the same order, and its allocation and failed pods on the kit's openb subsets equal the
reference's, to the milli-GPU.

The expected figures are the reference's own output: kubernetes-scheduler-simulator commit
8f3d641 (https://github.com/hkust-adsl/kubernetes-scheduler-simulator), built with go1.19.8,
run by bench/fgd/compare_fgd.py on 2026-12-03 ("MilliGpu: 92.6% (579810/626000)", "there are
45 unscheduled pods", ...). Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import csv
import json
from pathlib import Path

import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "bench" / "fgd"

# (subset, policy): (milli-GPUs allocated, milli-GPUs of the cluster, failed pods), the
# reference's figures.
REFERENCE = {
    ("every10", "fgd"): (579_810, 626_000, 45),
    ("every10", "best-fit"): (571_270, 626_000, 54),
    ("every5", "fgd"): (1_157_650, 1_257_000, 115),
    ("every5", "best-fit"): (1_148_160, 1_257_000, 124),
}


def scenario_in_reference_order(tmp_path, subset):
    with open(KIT / f"reference_node_names_{subset}.csv", newline="") as f:
        names = {row["sn"]: row["reference_name"] for row in csv.DictReader(f)}
    with open(KIT / f"openb_node_list_gpu_node_{subset}.csv", newline="") as f:
        nodes = list(csv.DictReader(f))
    renamed = tmp_path / "nodes.csv"
    with open(renamed, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(nodes[0]))
        w.writeheader()
        for row in nodes:
            w.writerow({**row, "sn": names[row["sn"]]})
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"""name: fgd-reference-order
cluster:
  openb:
    nodes: {renamed}
    pods: {KIT / f"openb_pod_list_default_{subset}.csv"}
  scheduler: {{policy: fgd, ignore_deletions: true}}
""")
    return scenario


@pytest.mark.parametrize("subset,policy", sorted(REFERENCE))
def test_same_node_order_gives_the_references_allocation_and_failures(tmp_path, subset, policy):
    allocated, total, failed = REFERENCE[(subset, policy)]
    scenario = scenario_in_reference_order(tmp_path, subset)
    r = run_gpumux("run", scenario, "--set", f"cluster.scheduler.policy={policy}", "--json",
                   timeout=600)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert round(s["allocation"]["gpu_milli_final"] * total) == allocated
    assert s["failed_on_arrival"] == failed


def test_the_exact_score_or_random_ties_would_not_reproduce_it(tmp_path):
    # The test above is not vacuous: the old scoring (exact scores) or upstream's random ties
    # give other allocations on the same input.
    allocated, total, _ = REFERENCE[("every10", "fgd")]
    scenario = scenario_in_reference_order(tmp_path, "every10")
    for override in ("cluster.scheduler.node_score=exact", "cluster.scheduler.tie_break=random"):
        r = run_gpumux("run", scenario, "--set", override, "--json", timeout=600)
        assert r.returncode == 0, r.stderr
        assert round(json.loads(r.stdout)["allocation"]["gpu_milli_final"] * total) != allocated
