#!/usr/bin/python3
"""Writes the seed part of tests/fuzz/corpus/ (run from the repository root; idempotent).

Each seed is one byte selecting the target of tests/fuzz/fuzz_inputs.cpp, then the document:
0 scenario YAML, 4 request trace csv, 5 azure-llm, 6 mooncake, 7 torch/Kineto JSON,
8 kernel csv, 9 ncu csv, 10 nsys sqlite; and (issue 27) 0xF0 cluster scenario YAML (GKE keys
among its pools' keys), 0xF1 openb node CSV, 0xF2 openb pod CSV, 0xF3 device-plugin config,
0xF4 mig-parted config, 0xF5 planning scenario YAML; (issue 36) 0xF6 a result file.
Seeds: a few shipped scenarios, the trace files of tests/data/traces and scenarios/traces, the
bad inputs of tests/cli/test_error_contract.py (the scenario, and the trace it names fed to its
reader), the shipped cluster scenarios, openb CSVs, device-plugin and mig-parted examples and
planning scenarios, the issue-27 cases (ISSUE_27_CLUSTER below), the issue-36 LLM card, batched
and catalog cases, and result files written by build/gpumux (result_seeds). Minimized findings of a campaign are
added by hand as corpus/crash-* / corpus/timeout-* / corpus/oom-*.
"""
import importlib.util
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/fuzz/corpus"
LIMIT = 16 * 1024  # bytes per seed: keep the corpus small and the runs fast

# ncu --csv in its two layouts (as tests/unit/test_kernel_trace.cpp KernelTraceNcu).
NCU_LONG = (
    '==PROF== Connected to process 1\n'
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
    '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
    '"Metric Value"\n'
    '"0","1","python","h","void at::native::vectorized_elementwise_kernel<4>(int)","1","7",'
    '"(128, 1, 1)","(80, 1, 1)","0","8.0","Command line profiler metrics",'
    '"dram__throughput.avg.pct_of_peak_sustained_elapsed","%","81.5"\n'
    '"0","1","python","h","void at::native::vectorized_elementwise_kernel<4>(int)","1","7",'
    '"(128, 1, 1)","(80, 1, 1)","0","8.0","Command line profiler metrics",'
    '"sm__throughput.avg.pct_of_peak_sustained_elapsed","%","9.5"\n')
NCU_WIDE = (
    '"Kernel Name","dram__throughput.avg.pct_of_peak_sustained_elapsed",'
    '"sm__throughput.avg.pct_of_peak_sustained_elapsed"\n'
    '"","%","%"\n'
    '"ampere_sgemm_128x64_tn","12.0","88.0"\n')

TRACE_SELECTOR = {"azure-llm": 5, "azure_llm": 5, "mooncake": 6, "csv": 4}
CLUSTER, OPENB_NODES, OPENB_PODS, DEVICE_PLUGIN, MIG_PARTED, PLAN, RESULT = range(0xF0, 0xF7)
RESULT_LIMIT = 64 * 1024  # a result file is not cut (it would not open): smaller ones only

# The cluster cases of issue 27 (tests/unit/test_cluster_reliability.cpp has each with its
# expected answer): one pool, then each case's pods (and keys after them).
CLUSTER_HEAD = """name: issue-27
cluster:
  pools:
    - name: h100
      count: 2
      gpu: h100-sxm-80gb
      gpus_per_node: 2
      cpu: "64"
      memory: 256Gi
      network: 1bit/s
      cost_per_hour: {cost}
  pods:
"""
ISSUE_27_CLUSTER = {
    "slow-arrivals": """    - name: slow
      arrivals: {process: constant, rate: 3.2e-10/s, count: 4}
      requests: {nvidia.com/gpu: 1}
      duration: 1s
""",
    "arrival-plus-duration": """    - name: late
      arrivals: {process: constant, rate: 3.2e-10/s, count: 3}
      requests: {nvidia.com/gpu: 1}
      duration: 4000000000s
""",
    "queued-end-wraps": """    - name: big
      count: 5
      arrival: 4000000000s
      requests: {nvidia.com/gpu: 1}
      duration: 4000000000s
""",
    "gang-steps-petabytes": """    - name: dp
      count: 2
      gang: 2
      gang_bytes_per_step: 4000PB
      gang_steps: 1000000
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      duration: 1h
""",
    "gpu-count-2-32": """    - name: huge
      arrival: 0s
      requests: {nvidia.com/gpu: 4294967297}
      duration: 1s
""",
    "sample-1ns": """    - name: p
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      duration: 1s
  duration: 1h
  sample: 1ns
""",
    "workload-pod-over-budget": """    - name: svc
      count: 100
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      workload:
        workload:
          arrivals: {process: poisson, rate: 1000000/s}
          request:
            kernels: [{name: k, duration: 10us}]
  duration: 1h
""",
}
OPENB_NON_UTF8 = b"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,1,V100\nn1,1000,1024,1,P\x95100\n"


def put(name, selector, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > LIMIT:
        # Cut at a line end so that the document stays well formed.
        cut = data.rfind(b"\n", 0, LIMIT)
        data = data[: cut + 1 if cut > 0 else LIMIT]
    (OUT / f"seed-{name}").write_bytes(bytes([selector]) + data)


def result_seeds():
    """Result files for the report readers (0xF6), written by the gpumux binary ($GPUMUX_BIN or
    build/gpumux): a run, an LLM run (TTFT and TPOT series), a compare and a cluster replay,
    each short enough to stay under RESULT_LIMIT."""
    import os
    import subprocess
    binary = os.environ.get("GPUMUX_BIN") or str(REPO / "build" / "gpumux")
    short = ["--set", "duration=20ms", "--set", "warmup=0s"]
    runs = {
        "run-quickstart": ["run", "scenarios/quickstart.yaml", *short],
        "run-llm-serving": ["run", "scenarios/pattern-llm-serving.yaml", *short],
        "compare-hybrid": ["compare", "scenarios/hybrid-h100.yaml", "--strategies",
                           "mps,time-slicing", "--set", "duration=5ms", "--set", "warmup=0s"],
        "cluster-gang": ["run", "scenarios/cluster/gang-two-nodes.yaml"],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in runs.items():
            out = Path(tmp) / f"{name}.h5"
            subprocess.run([binary, *args, "-o", str(out)], cwd=REPO, check=True,
                           stdout=subprocess.DEVNULL)
            data = out.read_bytes()
            if len(data) <= RESULT_LIMIT:
                (OUT / f"seed-result-{name}").write_bytes(bytes([RESULT]) + data)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ["quickstart", "mps-h100", "mig-all-balanced-a100", "hybrid-h100",
                 "pattern-llm-serving", "pattern-training", "antipattern-mps-fault-blast-radius",
                 "trace-azure-llm", "trace-csv-mig-a100"]:
        put(f"scenario-{name}", 0, (REPO / "scenarios" / f"{name}.yaml").read_text())
    put("scenario-full", 0, (REPO / "tests/data/scenarios/full.yaml").read_text())
    for path in sorted((REPO / "tests/data/traces").glob("*")):
        if path.is_file() and path.suffix in (".csv", ".jsonl"):
            selector = 6 if path.suffix == ".jsonl" else (5 if "azure" in path.name else 4)
            put(f"trace-{path.name}", selector, path.read_bytes())
    for path in sorted((REPO / "scenarios/traces").rglob("*")):
        if not path.is_file() or "alibaba-openb" in path.parts:  # openb: its own targets below
            continue
        if path.suffix == ".json":
            put(f"torch-{path.name}", 7, path.read_bytes())
        elif path.suffix == ".csv" and "ncu" in path.name:
            put(f"ncu-{path.name}", 9, path.read_bytes())
        elif path.suffix == ".csv":
            put(f"kernels-{path.name}", 8, path.read_bytes())
            put(f"azure-{path.name}", 5, path.read_bytes())
        elif path.suffix == ".sqlite":  # whole: a cut database is only a header error
            (OUT / f"seed-nsys-{path.name}").write_bytes(bytes([10]) + path.read_bytes())

    for path in sorted((REPO / "scenarios/cluster").glob("*.yaml")):
        put(f"cluster-{path.stem}", CLUSTER, path.read_bytes())
    for path in sorted((REPO / "tests/data/cluster").glob("*.yaml")):
        if path.name.startswith("device-plugin"):
            put(f"device-plugin-{path.stem}", DEVICE_PLUGIN, path.read_bytes())
        elif path.name.startswith("mig-parted"):
            put(f"mig-parted-{path.stem}", MIG_PARTED, path.read_bytes())
        else:
            put(f"cluster-{path.stem}", CLUSTER, path.read_bytes())
    for path in sorted((REPO / "scenarios/traces/alibaba-openb").glob("*.csv")):
        selector = OPENB_NODES if "node_list" in path.name else OPENB_PODS
        put(f"openb-{path.stem}", selector, path.read_bytes())
    for path in sorted((REPO / "scenarios/plan").glob("*.yaml")):
        put(f"plan-{path.stem}", PLAN, path.read_bytes())
    for name, pods in ISSUE_27_CLUSTER.items():
        put(f"issue27-{name}", CLUSTER, CLUSTER_HEAD.format(cost=4.0) + pods)
    put("issue27-cost-1e308", CLUSTER, CLUSTER_HEAD.format(cost="1e308") +
        ISSUE_27_CLUSTER["gpu-count-2-32"])
    put("issue27-openb-non-utf8", OPENB_NODES, OPENB_NON_UTF8)

    put("ncu-long", 9, NCU_LONG)
    put("ncu-wide", 9, NCU_WIDE)

    # Issue 36: LLM cards, batched kernel terms and the catalog's bus_bandwidth at the edges of
    # their ranges (tests/cli/test_llm_card_ranges.py), each key at its most extreme value.
    spec = importlib.util.spec_from_file_location(
        "llm_card_ranges", REPO / "tests/cli/test_llm_card_ranges.py")
    ranges = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ranges)
    inline = ranges.INLINE.format(hidden=4096, ffn=11008)
    written = {"layers": "layers: 32", "hidden": "hidden: 4096", "ffn": "ffn: 11008",
               "vocabulary": "vocabulary: 32000"}
    for key, values in ranges.EXTREMES.items():
        if key in written:  # an inline card's architecture: its largest value
            card = inline.replace(written[key], f"{key}: {values[-1]}")
        else:  # an assumption of the catalog card: its smallest (or most extreme) value
            card = f"{{model: llama-2-7b, {key}: {values[0]}}}"
        put(f"issue36-llm-{key}", 0, ranges.LLM.format(llm=card, tokens="{input: 512, output: 64}"))
    put("issue36-llm-positions", 0,
        ranges.LLM.format(llm="{model: llama-2-7b}", tokens="{input: 100000, output: 64}"))
    put("issue36-llm-no-tokens", 0,
        ranges.LLM.format(llm="{model: llama-2-7b}", tokens="{input: 0, output: 0}"))
    put("issue36-batched-per-sequence", 0, ranges.BATCHED.replace("HOST_GAP", "0s").replace(
        "PER_SEQUENCE", "1000000h").replace("PER_CONTEXT", "0s"))
    put("issue36-catalog-bus-bandwidth", 0, ranges.CATALOG.format(bus="1e-9B/s"))
    # Catalog tenants (workload `model:` keys): the shipped pattern and the saturated tenant.
    for name in ["pattern-batch-inference", "antipattern-training-plus-inference-timesliced"]:
        put(f"issue36-catalog-{name}", 0, (REPO / "scenarios" / f"{name}.yaml").read_text())
    put("issue36-catalog-saturated", 0,
        (REPO / "tests/data/scenarios/saturated-catalog.yaml").read_text())
    # A plan small enough for the plan target to search and write its `-o` folder.
    put("issue36-plan-o-two-tenants", PLAN,
        (REPO / "scenarios/plan/plan-identical-tenants.yaml").read_text()
        .replace("replicas: 12", "replicas: 2").replace("max_gpus: 3", "max_gpus: 2"))
    result_seeds()

    spec = importlib.util.spec_from_file_location(
        "error_contract", REPO / "tests/cli/test_error_contract.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for case in module.CASES:
        with tempfile.TemporaryDirectory() as tmp:
            scenario = case(Path(tmp))
            name = case.__name__[5:]
            put(f"contract-{name}", 0, scenario.read_bytes())
            for other in Path(tmp).iterdir():
                if other == scenario:
                    continue
                text = scenario.read_text(errors="replace")
                fmt = next((f for f in TRACE_SELECTOR if f"format: {f}" in text), "csv")
                put(f"contract-{name}-{other.name}", TRACE_SELECTOR[fmt], other.read_bytes())


if __name__ == "__main__":
    sys.exit(main())
