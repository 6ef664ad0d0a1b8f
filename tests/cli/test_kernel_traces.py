"""Kernel traces through the CLI (docs/traces.md): files written here in each tool's real schema
(Nsight Systems SQLite export, PyTorch profiler / Kineto JSON, gpumux CSV), replayed on the GPU
they were recorded on (recorded time within 2 %: exactly, in fact, plus one launch overhead) and
on another GPU (the rescale rule, recomputed here from the profiles' numbers); the error cases
(one line naming the file, exit 2); and the shipped trace scenarios under each strategy.
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "calibration" / "profiles"


def profile(name):
    doc = yaml.safe_load((PROFILES / f"{name}.yaml").read_text())

    def value(key):
        v = doc[key]
        return v["value"] if isinstance(v, dict) else v

    def number(text, units):
        for suffix, scale in units:
            if str(text).endswith(suffix):
                return float(str(text)[: -len(suffix)]) * scale
        raise ValueError(text)

    return {
        "sms": int(value("sms")),
        "launch_ns": number(value("launch_overhead"), [("us", 1e3), ("ns", 1.0)]),
        "clock_mhz": number(value("boost_clock"), [("MHz", 1.0)]),
        "bandwidth": number(value("hbm_bandwidth"), [("TB/s", 1e12), ("GB/s", 1e9)]),
    }


# A decode-like step: (name, duration ns, gap before ns, grid, block, registers, shared bytes).
# Gaps both shorter (queued launches) and longer (CPU-bound) than the launch overhead.
KERNELS = [
    ("rms_norm_kernel", 6_100, 0, 8, 1024, 32, 64),
    ("ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_tn", 88_400, 2_900, 96, 128, 230, 65_536),
    ("vectorized_elementwise_kernel", 4_300, 900, 32, 128, 28, 0),
    ("flash_fwd_splitkv_kernel", 31_800, 2_600, 512, 128, 255, 49_152),
    ("ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_tn", 171_900, 1_200, 1720, 256, 232, 98_304),
    ("reduce_kernel", 7_900, 45_000, 8, 1024, 20, 0),
    ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_tn", 86_200, 2_600, 128, 256, 210, 81_920),
]
T0 = 5_000_000_000


def timeline(stream=7):
    out, clock = [], T0
    for name, dur, gap, grid, block, regs, smem in KERNELS:
        start = clock + gap
        out.append(dict(name=name, start=start, end=start + dur, grid=grid, block=block,
                        regs=regs, smem=smem, stream=stream))
        clock = start + dur
    return out


def span(ks):
    return ks[-1]["end"] - ks[0]["start"]


def write_nsys(path, ks):
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
        " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
        " shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL,"
        " gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,"
        " blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
        " staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, bytes INTEGER NOT NULL,"
        " copyKind INTEGER NOT NULL);")
    for i, k in enumerate(ks):
        db.execute("INSERT INTO StringIds VALUES (?, ?)", (2 * i + 1, k["name"]))
        db.execute("INSERT INTO StringIds VALUES (?, ?)", (2 * i + 2, "void " + k["name"] + "()"))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                   "(?,?,?,1,?,?,1,?,?,?,?,1,1,?,1,1,?,0)",
                   (k["start"], k["end"], k.get("device", 0), k["stream"], 100 + i, 2 * i + 2,
                    2 * i + 1, k["regs"], k["grid"], k["block"], k["smem"]))
    db.commit()
    db.close()


def write_torch(path, ks):
    events = [{"ph": "X", "cat": "kernel", "name": k["name"], "pid": 0, "tid": k["stream"],
               "ts": k["start"] / 1000.0, "dur": (k["end"] - k["start"]) / 1000.0,
               "args": {"stream": k["stream"], "grid": [k["grid"], 1, 1],
                        "block": [k["block"], 1, 1], "registers per thread": k["regs"],
                        "shared memory": k["smem"], "blocks per SM": k["grid"] / 108,
                        "est. achieved occupancy %": 25}} for k in ks]
    events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1.0,
                   "args": {"Device Type": 1, "Device Id": 0, "Bytes": 1,
                            "Total Allocated": 3 << 30, "Total Reserved": 4 << 30}})
    Path(path).write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))


def write_csv(path, ks):
    rows = ["name,duration_ns,grid,block,registers_per_thread,shared_memory_bytes,gap_ns"]
    previous = ks[0]["start"]
    for k in ks:
        rows.append(f"{k['name']},{k['end'] - k['start']},{k['grid']},{k['block']},{k['regs']},"
                    f"{k['smem']},{k['start'] - previous}")
        previous = k["end"]
    Path(path).write_text("\n".join(rows) + "\n")


WRITERS = {"nsys": ("trace.sqlite", write_nsys), "torch": ("trace.json", write_torch),
           "csv": ("trace.csv", write_csv)}


def scenario(tmp_path, fmt, trace_name, model, recorded_on="a100-80gb", extra=""):
    text = f"""name: replay
seed: 1
duration: 2s
gpus: [{{name: gpu0, model: {model}, sharing: {{mode: exclusive}}}}]
tenants:
  - name: app
    device: gpu0
    workload:
      arrivals: {{process: closed, concurrency: 1, think: 0ms}}
      request:
        kernel_trace: {trace_name}
        format: {fmt}
        recorded_on: {recorded_on}
{extra}"""
    path = tmp_path / f"scenario-{fmt}-{model}.yaml"
    path.write_text(text)
    return path


def run_json(path):
    r = gpumux("run", str(path), "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("fmt", ["nsys", "torch", "csv"])
@pytest.mark.parametrize("model", ["a100-80gb", "h100-sxm-80gb"])
def test_replay_on_the_recorded_gpu_takes_the_recorded_time(tmp_path, fmt, model):
    ks = timeline()
    name, write = WRITERS[fmt]
    write(tmp_path / name, ks)
    out = run_json(scenario(tmp_path, fmt, name, model, recorded_on=model))
    app = out["tenants"]["app"]
    assert app["completed"] > 100
    recorded = span(ks) + profile(model)["launch_ns"]
    for q in ("p50", "max"):
        assert abs(app["latency_ns"][q] - recorded) <= 0.02 * recorded
        assert abs(app["latency_ns"][q] - recorded) <= 2  # in fact exact to the ns


def expected_on(target, recorded, ks):
    """The documented rule, recomputed: compute part x clock ratio x waves ratio, memory part x
    bandwidth ratio, m from the kernel-name class; host gaps kept; launches of the target."""
    rec, tgt = profile(recorded), profile(target)

    def bps(k, smem_per_sm):
        threads = k["block"]
        warps = (threads + 31) // 32
        b = min(32, 2048 // (warps * 32))
        per_warp = (k["regs"] * 32 + 255) // 256 * 256
        b = min(b, (65536 // per_warp) // warps)
        b = min(b, smem_per_sm // ((k["smem"] + 1024 + 127) // 128 * 128))
        return b

    def m_of(name):
        n = name.lower()
        if "gemv" in n:
            return 0.9
        if any(w in n for w in ("gemm", "flash")):
            return 0.1
        if any(w in n for w in ("norm", "elementwise", "reduce")):
            return 0.9
        return 0.5

    smem = {"a100-80gb": 164 * 1024, "h100-sxm-80gb": 228 * 1024, "h200-141gb": 228 * 1024}
    total, previous_end = 0.0, None
    for k in ks:
        d = k["end"] - k["start"]
        waves_r = max(1.0, k["grid"] / (bps(k, smem[recorded]) * rec["sms"]))
        waves_t = max(1.0, k["grid"] / (bps(k, smem[target]) * tgt["sms"]))
        c = rec["clock_mhz"] / tgt["clock_mhz"] * waves_t / waves_r
        m = m_of(k["name"])
        d_t = max(1, round(d * ((1 - m) * c + m * rec["bandwidth"] / tgt["bandwidth"])))
        if previous_end is None:
            launch, host = tgt["launch_ns"], 0
        else:
            gap = k["start"] - previous_end
            if gap >= rec["launch_ns"]:
                host, launch = gap - rec["launch_ns"], tgt["launch_ns"]
            else:
                host, launch = 0, min(gap, tgt["launch_ns"])
        total += host + launch + d_t
        previous_end = k["end"]
    return total


@pytest.mark.parametrize("fmt", ["nsys", "torch", "csv"])
@pytest.mark.parametrize("target", ["h100-sxm-80gb", "h200-141gb"])
def test_replay_on_another_gpu_follows_the_rescale_rule(tmp_path, fmt, target):
    ks = timeline()
    name, write = WRITERS[fmt]
    write(tmp_path / name, ks)
    out = run_json(scenario(tmp_path, fmt, name, target, recorded_on="a100-80gb"))
    p50 = out["tenants"]["app"]["latency_ns"]["p50"]
    expected = expected_on(target, "a100-80gb", ks)
    assert abs(p50 - expected) <= 0.005 * expected + 2
    assert p50 < span(ks)  # a faster GPU


def test_memory_from_the_trace_unless_the_scenario_sets_it(tmp_path):
    ks = timeline()
    write_torch(tmp_path / "trace.json", ks)  # [memory] events: peak Total Reserved 4 GiB
    path = scenario(tmp_path, "torch", "trace.json", "a100-80gb")
    assert run_json(path)["devices"]["gpu0"]["memory_peak_bytes"] == 4 << 30
    text = path.read_text().replace("    device: gpu0\n", "    device: gpu0\n    memory: 1GiB\n")
    path.write_text(text)
    assert run_json(path)["devices"]["gpu0"]["memory_peak_bytes"] == 1 << 30
    write_csv(tmp_path / "trace.csv", ks)  # no allocation records: the scenario's (none)
    assert run_json(scenario(tmp_path, "csv", "trace.csv", "a100-80gb"))[
        "devices"]["gpu0"]["memory_peak_bytes"] == 0


def test_select_stream_and_window(tmp_path):
    ks = timeline(stream=7) + [dict(k, stream=13, start=k["start"] + 10_000_000,
                                    end=k["end"] + 10_000_000) for k in timeline()]
    write_nsys(tmp_path / "two.sqlite", ks)
    one = run_json(scenario(tmp_path, "nsys", "two.sqlite", "a100-80gb",
                            extra="        select: {stream: 13}\n"))
    recorded = span(timeline()) + profile("a100-80gb")["launch_ns"]
    assert abs(one["tenants"]["app"]["latency_ns"]["p50"] - recorded) <= 2
    window = run_json(scenario(tmp_path, "nsys", "two.sqlite", "a100-80gb",
                               extra="        select: {window: [0ms, 5ms]}\n"))
    assert abs(window["tenants"]["app"]["latency_ns"]["p50"] - recorded) <= 2


def test_select_device_of_a_multi_gpu_recording(tmp_path):
    ks = timeline() + [dict(k, device=1) for k in timeline()]
    write_nsys(tmp_path / "two-gpus.sqlite", ks)
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "nsys", "two-gpus.sqlite", "a100-80gb"))),
                    "two-gpus.sqlite", "kernels of 2 GPUs (device 0, 1)", "select: {device: N}")
    out = run_json(scenario(tmp_path, "nsys", "two-gpus.sqlite", "a100-80gb",
                            extra="        select: {device: 1}\n"))
    recorded = span(timeline()) + profile("a100-80gb")["launch_ns"]
    assert abs(out["tenants"]["app"]["latency_ns"]["p50"] - recorded) <= 2


def one_line_exit_2(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_errors_are_one_line_naming_the_file(tmp_path):
    ks = timeline()
    # A truncated SQLite file (cut in half after a large enough export).
    write_nsys(tmp_path / "full.sqlite", ks * 200)
    data = (tmp_path / "full.sqlite").read_bytes()
    (tmp_path / "cut.sqlite").write_bytes(data[: len(data) // 2])
    path = scenario(tmp_path, "nsys", "cut.sqlite", "a100-80gb")
    for command in ("run", "validate"):
        one_line_exit_2(gpumux(command, str(path)), "cut.sqlite", "truncated SQLite file")
    # A JSON without traceEvents.
    (tmp_path / "bad.json").write_text('{"schemaVersion": 1}')
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "torch", "bad.json", "a100-80gb"))),
                    "bad.json", "traceEvents")
    # A CSV with a missing column.
    (tmp_path / "bad.csv").write_text("name,grid,block\nk,1,1\n")
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "csv", "bad.csv", "a100-80gb"))),
                    "bad.csv:1", "missing column 'duration_ns'")
    # A CSV row that is not a number.
    (tmp_path / "row.csv").write_text("name,duration_ns\nk,1000\nj,fast\n")
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "csv", "row.csv", "a100-80gb"))),
                    "row.csv:3", "duration_ns")
    # No kernels in the selected window or stream.
    write_nsys(tmp_path / "ok.sqlite", ks)
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "nsys", "ok.sqlite", "a100-80gb",
                                                 extra="        select: {window: [1s, 2s]}\n"))),
                    "ok.sqlite", "no kernels in the selection")
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "nsys", "ok.sqlite", "a100-80gb",
                                                 extra="        select: {stream: 99}\n"))),
                    "ok.sqlite", "stream 99", "stream(s) 7")
    # Unknown format; missing file; unknown recorded_on model.
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "nvprof", "ok.sqlite", "a100-80gb"))),
                    "format", "unknown kernel trace format 'nvprof'")
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "nsys", "absent.sqlite", "a100-80gb"))),
                    "kernel trace not found", "absent.sqlite")
    one_line_exit_2(gpumux("run", str(scenario(tmp_path, "nsys", "ok.sqlite", "a100-80gb",
                                                 recorded_on="v99-gpu"))),
                    "recorded_on", "v99-gpu")
    # kernels and kernel_trace together; trace keys without kernel_trace.
    both = scenario(tmp_path, "nsys", "ok.sqlite", "a100-80gb",
                    extra="        kernels: [{name: k, duration: 1ms}]\n")
    one_line_exit_2(gpumux("validate", str(both)), "give kernels or kernel_trace, not both")
    stray = tmp_path / "stray.yaml"
    stray.write_text(both.read_text().replace("        kernel_trace: ok.sqlite\n", ""))
    one_line_exit_2(gpumux("validate", str(stray)), "'format' belongs to a kernel_trace: request")


SHIPPED = ["trace-nsys-decode-a100", "trace-torch-rescaled-h100", "trace-csv-mig-a100",
           "trace-orion-resnet50-a100"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_trace_scenarios_run_and_compare(name):
    path = REPO / "scenarios" / f"{name}.yaml"
    out = run_json(path)
    assert out["tenants"]["decode"]["completed"] > 500
    strategies = {"trace-nsys-decode-a100": "time-slicing,mps,dedicated",
                  "trace-torch-rescaled-h100": "mps,time-slicing,dedicated",
                  "trace-csv-mig-a100": "mig,mps,time-slicing",
                  "trace-orion-resnet50-a100": "mps,time-slicing,dedicated"}[name]
    r = gpumux("compare", str(path), "--strategies", strategies)
    assert r.returncode == 0, r.stderr
    for s in strategies.split(","):
        assert s in r.stdout


def test_orion_file_reads_unchanged_and_replays_on_its_v100(tmp_path):
    """The Orion per-kernel file as released (Name,Profile,Memory_footprint,SM_usage,Duration),
    replayed on the V100 profile it was measured on: back to back, each kernel its Duration plus
    the profile's launch overhead (the file has no gaps)."""
    kernels = REPO / "scenarios" / "traces" / "kernels"
    orion = kernels / "orion" / "resnet50_4_fwd.csv"
    assert orion.read_text().splitlines()[0] == "Name,Profile,Memory_footprint,SM_usage,Duration"
    durations = [int(line.rsplit(",", 1)[1]) for line in orion.read_text().splitlines()[1:] if line]
    v100 = kernels / "v100-sxm2-16gb.yaml"
    path = tmp_path / "orion.yaml"
    path.write_text(f"""name: orion
seed: 1
duration: 2s
gpus: [{{name: gpu0, model: {v100}, sharing: {{mode: exclusive}}}}]
tenants:
  - name: app
    device: gpu0
    workload:
      arrivals: {{process: closed, concurrency: 1, think: 0ms}}
      request: {{kernel_trace: {orion}, format: csv, recorded_on: {v100}}}
""")
    p50 = run_json(path)["tenants"]["app"]["latency_ns"]["p50"]
    assert abs(p50 - (sum(durations) + len(durations) * 1860)) <= 2

