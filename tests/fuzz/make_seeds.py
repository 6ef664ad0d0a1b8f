#!/usr/bin/python3
"""Writes the seed part of tests/fuzz/corpus/ (run from the repository root; idempotent).

Each seed is one byte selecting the target of tests/fuzz/fuzz_inputs.cpp, then the document:
0 scenario YAML, 4 request trace csv, 5 azure-llm, 6 mooncake, 7 torch/Kineto JSON,
8 kernel csv, 9 ncu csv, 10 nsys sqlite. Seeds: a few shipped scenarios, the trace files of
tests/data/traces and scenarios/traces, and the bad inputs of tests/cli/test_error_contract.py
(the scenario, and the trace it names fed to its reader). Minimized findings of a campaign are
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


def put(name, selector, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > LIMIT:
        # Cut at a line end so that the document stays well formed.
        cut = data.rfind(b"\n", 0, LIMIT)
        data = data[: cut + 1 if cut > 0 else LIMIT]
    (OUT / f"seed-{name}").write_bytes(bytes([selector]) + data)


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
        if not path.is_file():
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

    put("ncu-long", 9, NCU_LONG)
    put("ncu-wide", 9, NCU_WIDE)

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
