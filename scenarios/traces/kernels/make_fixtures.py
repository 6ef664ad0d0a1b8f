#!/usr/bin/env python3
"""Writes the small kernel-trace fixtures of scenarios/traces/kernels/ in each tool's real file
format: an Nsight Systems SQLite export (nsys), a PyTorch profiler / Kineto Chrome trace (torch)
and gpumux's documented CSV (csv).

They are SYNTHESISED, not recorded: no GPU was available where gpumux is developed. The kernel
names, launch shapes (grid, block, registers, shared memory) and durations are typical of what
Nsight Systems shows for one decode step of a 7B llama-style model (fp16, batch 8) on an A100 80GB
(two transformer layers shown; cuBLAS GEMMs, FlashAttention, RMSNorm, fused SiLU), with 2-6 us CPU
gaps between launches and one 300 us host stall (a Python-side sampler). Only the schema is
asserted to be real (table and column names as `nsys export --type sqlite` and
`torch.profiler ... export_chrome_trace` write them); the numbers are illustrative. Re-run to
regenerate (deterministic):  python3 scenarios/traces/kernels/make_fixtures.py
"""
import json
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, duration_ns, grid, block, registers, static_smem, dynamic_smem, gap_before_ns)
LAYER = [
    ("rms_norm_kernel", 6_100, (8, 1, 1), (1024, 1, 1), 32, 64, 0, 3_200),
    ("ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x4_tn", 88_400, (96, 1, 1), (128, 1, 1), 230, 0, 65_536, 2_900),
    ("rotary_embedding_kernel", 4_300, (8, 32, 1), (128, 1, 1), 28, 0, 0, 2_400),
    ("reshape_and_cache_kernel", 3_900, (8, 1, 1), (512, 1, 1), 24, 0, 0, 2_300),
    ("flash_fwd_splitkv_kernel", 31_800, (2, 32, 8), (128, 1, 1), 255, 0, 49_152, 2_600),
    ("flash_fwd_splitkv_combine_kernel", 4_800, (32, 8, 1), (128, 1, 1), 40, 0, 4_224, 1_100),
    ("ampere_fp16_s16816gemm_fp16_64x64_sliced1x2_ldg8_f2f_tn", 29_700, (64, 1, 1), (128, 1, 1), 168, 0, 32_768, 2_700),
    ("fused_add_rms_norm_kernel", 6_400, (8, 1, 1), (1024, 1, 1), 30, 64, 0, 2_500),
    ("ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_tn", 171_900, (172, 1, 1), (256, 1, 1), 232, 0, 98_304, 2_800),
    ("act_and_mul_kernel<silu>", 7_900, (8, 1, 1), (1024, 1, 1), 20, 0, 0, 2_300),
    ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn", 86_200, (128, 1, 1), (256, 1, 1), 210, 0, 81_920, 2_600),
]
STREAM = 7
T0 = 1_712_345_000_000  # ns, as nsys timestamps (since session start) look after ~28 min


def kernels():
    """Two layers, then the LM head and a host stall before sampling; absolute start/end ns."""
    out, clock = [], T0
    seq = LAYER + LAYER + [
        ("rms_norm_kernel", 6_000, (8, 1, 1), (1024, 1, 1), 32, 64, 0, 3_000),
        ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn", 212_000, (250, 1, 1), (256, 1, 1), 210, 0, 81_920, 2_700),
        ("argmax_kernel", 9_800, (8, 1, 1), (1024, 1, 1), 40, 8_192, 0, 301_500),
    ]
    for name, dur, grid, block, regs, smem_s, smem_d, gap in seq:
        start = clock + gap
        out.append(dict(name=name, start=start, end=start + dur, grid=grid, block=block,
                        regs=regs, smem_static=smem_s, smem_dynamic=smem_d, stream=STREAM))
        clock = start + dur
    return out


def write_nsys(path, ks):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript("""
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
  sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
  srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
  migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, address INTEGER NOT NULL,
  pc INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER NOT NULL,
  memoryOperationType INTEGER NOT NULL, name TEXT, correlationId INTEGER,
  localMemoryPoolAddress INTEGER, localMemoryPoolReleaseThreshold INTEGER,
  localMemoryPoolSize INTEGER, localMemoryPoolUtilizedSize INTEGER,
  importedMemoryPoolAddress INTEGER, importedMemoryPoolProcessId INTEGER);
""")
    ids = {}

    def sid(text):
        if text not in ids:
            ids[text] = len(ids) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[text], text))
        return ids[text]

    pid = 0x1A2B << 24
    for i, k in enumerate(ks):
        short = k["name"]
        demangled = "void " + short + "(Params)" if not short.startswith("ampere_") else short
        db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
            "(?,?,0,1,NULL,?,?,?,?,?,NULL,0,0,?,?,?,?,?,?,?,?,?,0,0,?,0,NULL,0)",
            (k["start"], k["end"], k["stream"], 5000 + i, pid, sid(demangled), sid(short),
             k["regs"], *k["grid"], *k["block"], k["smem_static"], k["smem_dynamic"], 700 + i))
    # The sampled token back to the host: 32 bytes DtoH after the argmax (copyKind 2).
    last = ks[-1]["end"]
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES "
               "(?,?,0,1,NULL,?,6000,?,32,2,NULL,1,2,0,1,0,1,0,NULL,0)",
               (last + 1_800, last + 3_300, STREAM, pid))
    # cudaMalloc'd device memory (memKind 2): weights 13.5 GB, KV cache pool 20 GiB, workspace.
    for t, address, size, op in [(T0 - 9_000_000_000, 0x7F0000000000, 13_476_831_232, 0),
                                 (T0 - 8_000_000_000, 0x7F8000000000, 21_474_836_480, 0),
                                 (T0 - 7_000_000_000, 0x7FF000000000, 268_435_456, 0),
                                 (T0 - 6_000_000_000, 0x7FF000000000, 268_435_456, 1)]:
        db.execute("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES "
                   "(?,?,0,1,?,0,?,2,?,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL)",
                   (t, pid, address, size, op))
    db.commit()
    db.execute("VACUUM")
    db.close()


def write_torch(path, ks):
    events = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0,
               "args": {"name": "python"}}]
    origin_us = 1_000.0
    for i, k in enumerate(ks):
        threads = k["block"][0] * k["block"][1] * k["block"][2]
        blocks = k["grid"][0] * k["grid"][1] * k["grid"][2]
        ts = origin_us + (k["start"] - T0) / 1000.0
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": round(ts - 6.0, 3), "dur": 4.1,
                       "args": {"cbid": 211, "correlation": 5000 + i, "external id": 900 + i}})
        events.append({
            "ph": "X", "cat": "kernel", "name": k["name"], "pid": 0, "tid": k["stream"],
            "ts": round(ts, 3), "dur": round((k["end"] - k["start"]) / 1000.0, 3),
            "args": {"External id": 900 + i, "queued": 0, "device": 0, "context": 1,
                     "stream": k["stream"], "correlation": 5000 + i,
                     "registers per thread": k["regs"],
                     "shared memory": k["smem_static"] + k["smem_dynamic"],
                     "blocks per SM": round(blocks / 108, 6),
                     "warps per SM": round(blocks * ((threads + 31) // 32) / 108, 6),
                     "grid": list(k["grid"]), "block": list(k["block"]),
                     "est. achieved occupancy %": 25}})
    last = ks[-1]["end"]
    events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)",
                   "pid": 0, "tid": STREAM, "ts": round(origin_us + (last - T0 + 1_800) / 1000.0, 3),
                   "dur": 1.5, "args": {"device": 0, "context": 1, "stream": STREAM,
                                        "correlation": 6000, "bytes": 32,
                                        "memory bandwidth (GB/s)": 0.021}})
    for j, (allocated, reserved) in enumerate([(13_476_831_232, 13_589_544_960),
                                               (34_951_667_712, 35_064_381_440),
                                               (35_220_103_168, 35_332_816_896)]):
        events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
                       "ts": origin_us - 5_000 + j,
                       "args": {"Device Type": 1, "Device Id": 0, "Addr": 140000000000 + j,
                                "Bytes": 1, "Total Allocated": allocated,
                                "Total Reserved": reserved}})
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85_031_714_816,
                                 "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                                 "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                                 "regsPerMultiprocessor": 65536, "warpSize": 32,
                                 "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,
                                 "numSms": 108, "sharedMemPerBlockOptin": 166912}],
           "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
           "traceEvents": events,
           "traceName": "decode_step.pt.trace.json",
           "displayTimeUnit": "ms"}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def write_csv(path, ks):
    with open(path, "w") as f:
        f.write("name,duration_ns,grid,block,registers_per_thread,shared_memory_bytes,gap_ns,stream\n")
        previous_end = ks[0]["start"]
        for k in ks:
            gap = k["start"] - previous_end
            grid = "x".join(str(d) for d in k["grid"])
            block = "x".join(str(d) for d in k["block"])
            name = k["name"]
            if "," in name or "<" in name:
                name = '"' + name + '"'
            f.write(f"{name},{k['end'] - k['start']},{grid},{block},{k['regs']},"
                    f"{k['smem_static'] + k['smem_dynamic']},{gap},{k['stream']}\n")
            previous_end = k["end"]


if __name__ == "__main__":
    ks = kernels()
    write_nsys(os.path.join(HERE, "llama7b-decode-a100.sqlite"), ks)
    write_torch(os.path.join(HERE, "llama7b-decode-a100.pt.trace.json"), ks)
    write_csv(os.path.join(HERE, "llama7b-decode-a100.csv"), ks)
