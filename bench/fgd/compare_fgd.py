"""gpumux's FGD and best-fit beside the FGD reference simulator, on the openb subsets of this
folder, in one command (docs/cluster.md, "FGD beside the reference simulator"):

    FGD=/path/to/simon /usr/bin/python3 bench/fgd/compare_fgd.py [--subsets every10,every5]
        [--policies fgd,best-fit] [--gpumux build/gpumux] [--keep DIR]

FGD is the path of an already-built binary of the reference simulator
(https://github.com/hkust-adsl/kubernetes-scheduler-simulator, Apache-2.0; its README says how to
build it). This script contains none of its code: it writes the reference's inputs (Kubernetes
Node and Pod objects, a simon/v1alpha1 cluster config and a KubeSchedulerConfiguration, the
formats its README documents), runs `simon apply` on them, reads the allocation it logs, runs
gpumux on the same CSV rows, and prints the two side by side with the wall time of each.

The reference's settings are those of its experiments' run script (scripts/generate_config_and_run.py
defaults; the FGD kit's RESULTS.md): typical pods with popularity threshold 95 and step 1, CPU
pods included, pods in creation (file) order, no inflation, no tuning, FGD weight 1000 with
dimExtMethod share / normMethod max, or BestFit weight 1000. gpumux runs its scenario
(openb-mini10.yaml, openb-mini5.yaml) with its own defaults, which follow the same settings.

The reference breaks equal scores by the smallest node name, and names its nodes with a prefix
from a seeded random permutation (0086-openb-node-0790): its tie order is random but fixed. The
"same order" column runs gpumux once more with the nodes renamed as the reference's log names
them; with the same tie order the two simulators make the same decisions, so the allocation and
failed pods should be equal, and any difference is a difference of algorithm.

Without FGD set, only gpumux's side is printed."""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SUBSETS = {"every10": "openb-mini10.yaml", "every5": "openb-mini5.yaml"}
# gpumux policy -> the reference's score plugin
REFERENCE_PLUGIN = {"fgd": "FGDScore", "best-fit": "BestFitScore"}
ALL_PLUGINS = ["RandomScore", "DotProductScore", "GpuClusteringScore", "GpuPackingScore",
               "BestFitScore", "FGDScore", "ImageLocality", "NodeAffinity", "PodTopologySpread",
               "TaintToleration", "NodeResourcesBalancedAllocation", "InterPodAffinity",
               "NodeResourcesLeastAllocated", "NodePreferAvoidPods"]
ALLOC_LINE = re.compile(r"\[Alloc\]; Used nodes: (\d+); Used GPUs: (\d+); Used GPU Milli: (\d+); "
                        r"Total GPUs: (\d+)")
FAILED_LINE = re.compile(r"failed to schedule pod\(")
NODE_NAME = re.compile(r"\b(\d{4})-(openb-node-\d{4})\b")
SCHEDULED_LINE = re.compile(r"pod\(default/([^)]+)\) is scheduled to node\(([^)]+)\)")


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def quote(text):
    return json.dumps(str(text))  # a JSON string is a valid YAML scalar


def write_nodes(csv_path, out):
    """Kubernetes Node objects with the GPU labels and allocatable the reference reads
    (alibabacloud.com/gpu-count, alibabacloud.com/gpu-milli, alibabacloud.com/gpu-card-model)."""
    docs = []
    for r in rows(csv_path):
        gpus = int(r["gpu"])
        labels = {"kubernetes.io/hostname": r["sn"], "kubernetes.io/os": "linux",
                  "beta.kubernetes.io/os": "linux"}
        if r["model"]:
            labels["alibabacloud.com/gpu-card-model"] = r["model"]
        alloc = {"cpu": f"{int(r['cpu_milli'])}m", "memory": f"{int(r['memory_mib'])}Mi",
                 "pods": "1001", "alibabacloud.com/gpu-count": str(gpus),
                 "alibabacloud.com/gpu-milli": str(1000 * gpus)}
        lines = ["apiVersion: v1", "kind: Node", "metadata:", f"  name: {quote(r['sn'])}",
                 "  labels:"]
        lines += [f"    {k}: {quote(v)}" for k, v in labels.items()]
        lines.append("status:")
        for section in ("allocatable", "capacity"):
            lines.append(f"  {section}:")
            lines += [f"    {k}: {quote(v)}" for k, v in alloc.items()]
        docs.append("\n".join(lines))
    out.write_text("\n---\n".join(docs) + "\n")


def write_pods(csv_path, out):
    """Pod objects: requests cpu / memory, GPU asks as the annotations alibabacloud.com/gpu-milli
    (per GPU), alibabacloud.com/gpu-count and alibabacloud.com/gpu-card-model (gpu_spec)."""
    docs = []
    for r in rows(csv_path):
        requests = {"cpu": f"{int(r['cpu_milli'])}m", "memory": f"{int(r['memory_mib'])}Mi"}
        annotations = {}
        if int(r["num_gpu"]) != 0:
            annotations["alibabacloud.com/gpu-milli"] = str(int(r["gpu_milli"]))
            annotations["alibabacloud.com/gpu-count"] = str(int(r["num_gpu"]))
            models = [m for m in r.get("gpu_spec", "").split("|") if m]
            if models:
                annotations["alibabacloud.com/gpu-card-model"] = "|".join(models)
        lines = ["apiVersion: v1", "kind: Pod", "metadata:", f"  name: {quote(r['name'])}",
                 "  namespace: default"]
        if annotations:
            lines.append("  annotations:")
            lines += [f"    {k}: {quote(v)}" for k, v in annotations.items()]
        lines += ["spec:", "  restartPolicy: OnFailure", "  containers:", "  - name: main",
                  "    image: main", "    resources:"]
        for section in ("requests", "limits"):
            lines.append(f"      {section}:")
            lines += [f"        {k}: {quote(v)}" for k, v in requests.items()]
        docs.append("\n".join(lines))
    out.write_text("\n---\n".join(docs) + "\n")


def write_reference_configs(workdir, subset, cluster_dir, plugin):
    cluster = f"""apiVersion: simon/v1alpha1
kind: Config
metadata:
  name: gpumux-fgd-comparison
spec:
  cluster:
    customConfig: {quote(cluster_dir)}
  customConfig:
    shufflePod: false
    exportConfig: {{}}
    workloadInflationConfig: {{ratio: 1, seed: 233}}
    workloadTuningConfig: {{ratio: 0, seed: 233}}
    descheduleConfig: {{ratio: 0}}
    typicalPodsConfig:
      isInvolvedCpuPods: true
      podPopularityThreshold: 95
      podIncreaseStep: 1
      gpuResWeight: 0
"""
    disabled = "\n".join(f"          - name: {p}" for p in ALL_PLUGINS)
    scheduler = f"""apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
profiles:
  - schedulerName: simon-scheduler
    plugins:
      filter:
        enabled:
          - name: Open-Gpu-Share
      score:
        disabled:
{disabled}
        enabled:
          - name: {plugin}
            weight: 1000
      reserve:
        enabled:
          - name: Open-Gpu-Share
      bind:
        disabled:
          - name: DefaultBinder
        enabled:
          - name: Simon
    pluginConfig:
      - name: {plugin}
        args: {{dimExtMethod: share, normMethod: max}}
      - name: Open-Gpu-Share
        args: {{dimExtMethod: share, normMethod: max, gpuSelMethod: {"FGDScore" if plugin == "FGDScore" else "best"}}}
"""
    cc = workdir / f"cluster-{subset}-{plugin}.yaml"
    sc = workdir / f"scheduler-{subset}-{plugin}.yaml"
    cc.write_text(cluster)
    sc.write_text(scheduler)
    return cc, sc


def run_reference(binary, workdir, subset, policy):
    cluster_dir = workdir / subset
    cluster_dir.mkdir(exist_ok=True)
    write_nodes(HERE / f"openb_node_list_gpu_node_{subset}.csv", cluster_dir / "nodes.yaml")
    write_pods(HERE / f"openb_pod_list_default_{subset}.csv", cluster_dir / "pods.yaml")
    # The configs go beside the cluster folder: the reference reads every YAML file in it.
    cc, sc = write_reference_configs(workdir, subset, cluster_dir, REFERENCE_PLUGIN[policy])
    log = workdir / f"reference-{subset}-{policy}.log"
    t0 = time.time()
    with open(log, "wb") as out:
        rc = subprocess.call([binary, "apply", "--extended-resources", "gpu", "-f", str(cc),
                              "--default-scheduler-config", str(sc)],
                             stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
    wall = time.time() - t0
    text = log.read_text(errors="replace")
    allocs = ALLOC_LINE.findall(text)
    if rc != 0 or not allocs:
        sys.exit(f"{log}: the reference exited {rc} without an [Alloc] line; see the log")
    _, used_gpus, used_milli, total_gpus = (int(x) for x in allocs[-1])
    return {"alloc": used_milli / (1000 * total_gpus), "gpus": used_gpus / total_gpus,
            "failed": len(FAILED_LINE.findall(text)), "wall_s": wall,
            "names": reference_node_names(text), "log": text}


def reference_node_names(log_text):
    """The reference prefixes every node name with its place in a seeded random permutation
    (0086-openb-node-0790) and breaks score ties by the smallest name: its log's names give
    that order."""
    return {m.group(2): m.group(0) for m in NODE_NAME.finditer(log_text)}


def scenario_with_node_names(workdir, subset, names):
    """The subset's scenario with the nodes renamed as the reference named them, so that
    gpumux's name tie-break follows the reference's node order."""
    nodes = rows(HERE / f"openb_node_list_gpu_node_{subset}.csv")
    missing = [r["sn"] for r in nodes if r["sn"] not in names]
    if missing:
        return None  # a node that never got a pod is not in the log: order unknown
    csv_path = workdir / f"nodes-{subset}-reference-order.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(nodes[0].keys()))
        w.writeheader()
        for r in nodes:
            w.writerow({**r, "sn": names[r["sn"]]})
    text = (HERE / SUBSETS[subset]).read_text()
    text = text.replace(f"openb_node_list_gpu_node_{subset}.csv", str(csv_path))
    text = text.replace(f"openb_pod_list_default_{subset}.csv",
                        str(HERE / f"openb_pod_list_default_{subset}.csv"))
    scenario = workdir / f"openb-{subset}-reference-order.yaml"
    scenario.write_text(text)
    return scenario


def run_gpumux(binary, subset, policy, scenario=None, placements_to=None):
    scenario = scenario or HERE / SUBSETS[subset]
    extra = ["-o", str(placements_to)] if placements_to else []
    wall = float("inf")
    for _ in range(3):  # the best of three: the machine may be busy with something else
        t0 = time.time()
        out = subprocess.run([binary, "run", str(scenario), "--set",
                              f"cluster.scheduler.policy={policy}", "--json", "--quiet", *extra],
                             check=True, capture_output=True, text=True)
        wall = min(wall, time.time() - t0)
    summary = json.loads(out.stdout)
    return {"alloc": summary["allocation"]["gpu_milli_final"],
            "gpus": summary["allocation"]["gpus_final"],
            "failed": summary["failed_on_arrival"], "wall_s": wall}


def same_nodes(h5_path, log_text):
    """(pods gpumux placed on the node the reference placed them on, pods the reference placed)."""
    import h5py
    with h5py.File(h5_path, "r") as f:
        ours = {row["name"].decode(): row["node"].decode() for row in f["/cluster/pods"][()]}
    theirs = dict(SCHEDULED_LINE.findall(log_text))
    return sum(1 for pod, node in theirs.items() if ours.get(pod) == node), len(theirs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--subsets", default="every10,every5")
    ap.add_argument("--policies", default="fgd,best-fit")
    ap.add_argument("--gpumux", default=str(REPO / "build" / "gpumux"))
    ap.add_argument("--keep", help="write the reference's inputs and logs here (kept)")
    args = ap.parse_args()
    reference = os.environ.get("FGD")
    if reference and not os.access(reference, os.X_OK):
        sys.exit(f"FGD={reference}: not an executable file")
    subsets = args.subsets.split(",")
    policies = args.policies.split(",")
    for s in subsets:
        if s not in SUBSETS:
            sys.exit(f"--subsets: unknown subset {s!r} (known: {', '.join(SUBSETS)})")
    for p in policies:
        if p not in REFERENCE_PLUGIN:
            sys.exit(f"--policies: unknown policy {p!r} (known: {', '.join(REFERENCE_PLUGIN)})")
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gpumux-fgd-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = {}
    try:
        for s in subsets:
            for p in policies:
                g = run_gpumux(args.gpumux, s, p)
                r = run_reference(reference, workdir, s, p) if reference else None
                same_order = None
                if r:
                    scenario = scenario_with_node_names(workdir, s, r["names"])
                    if scenario:
                        h5 = workdir / f"gpumux-{s}-{p}-reference-order.h5"
                        same_order = run_gpumux(args.gpumux, s, p, scenario, h5)
                        same_order["same_nodes"] = same_nodes(h5, r["log"])
                results[(s, p)] = (g, r, same_order)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    # Allocation: milli-GPUs allocated / milli-GPUs of the cluster when every pod was tried.
    # "same order": gpumux with the nodes renamed as the reference named them (its tie order).
    print("| subset | policy | reference alloc | gpumux alloc | difference | gpumux, same order "
          "| reference failed | gpumux failed | same order failed | reference wall s "
          "| gpumux wall s | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (s, p), (g, r, o) in results.items():
        if r:
            same = f"{100 * o['alloc']:.2f} %" if o else "n/a"
            same_failed = o["failed"] if o else "n/a"
            print(f"| {s} | {p} | {100 * r['alloc']:.2f} % | {100 * g['alloc']:.2f} % | "
                  f"{100 * (g['alloc'] - r['alloc']):+.2f} | {same} | {r['failed']} | "
                  f"{g['failed']} | {same_failed} | {r['wall_s']:.1f} | {g['wall_s']:.2f} | "
                  f"{r['wall_s'] / g['wall_s']:.0f}x |")
        else:
            print(f"| {s} | {p} | | {100 * g['alloc']:.2f} % | | | | {g['failed']} | | | "
                  f"{g['wall_s']:.2f} | |")
    for (s, p), (g, r, o) in results.items():
        if o:
            same, placed = o["same_nodes"]
            print(f"{s} {p}, same node order: {same} of the reference's {placed} placed pods on "
                  "the same node")
    for s in subsets:
        order = {}
        for side in (0, 1):
            vals = {p: results[(s, p)][side] for p in policies}
            if all(v is not None for v in vals.values()):
                order[side] = sorted(policies, key=lambda p: -vals[p]["alloc"])
        if len(order) == 2:
            print(f"{s}: ranking gpumux {' > '.join(order[0])}, reference "
                  f"{' > '.join(order[1])}: {'same' if order[0] == order[1] else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
