"""LLM serving from a model card and the batch schedulers, from the command line.

`gpumux run` on `workload: {llm: ...}` gives TTFT, TPOT and tokens/s; every mistake in an
`llm:` or `batching:` block is exit 2 with one line naming the file, line and key. The Vidur
side by side (bench/vidur) runs from the repository alone and stays within its bounds.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GPUMUX, run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

SCENARIO = """\
name: llm
seed: 1
duration: 4s
gpus:
  - {{name: gpu0, model: {model}, sharing: {{mode: exclusive}}}}
tenants:
  - name: chat
    device: {device}
    workload:
      arrivals: {{process: poisson, rate: 4/s}}
      tokens: {{input: 512, output: 64}}
      batching: {batching}
      llm: {llm}
"""


def write(tmp_path, model="a100-80gb", device="gpu0", batching="{max_batch: 64, scheduler: vllm}",
          llm="{model: llama-2-7b, dtype: fp16, tp: 1}"):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(model=model, device=device, batching=batching, llm=llm))
    return path


def test_card_runs_and_reports_ttft_tpot_tokens(tmp_path):
    for scheduler in ("orca", "vllm", "sarathi"):
        path = write(tmp_path, batching=f"{{max_batch: 64, scheduler: {scheduler}}}")
        proc = gpumux("run", path, "-o", tmp_path / "r.h5", "--json")
        assert proc.returncode == 0, proc.stderr
        tenant = json.loads(proc.stdout)["tenants"]["chat"]
        assert tenant["completed"] == tenant["requests"] > 0
        # 64 tokens of a 7B model's decode: each at least its 13.5 GB weights' read at the
        # A100's measured 1.77 TB/s (7.6 ms), and the first token after the prompt's FLOPs.
        assert tenant["tpot_ns"]["p50"] > 7.6e6
        assert tenant["ttft_ns"]["p50"] > 2 * 6.48e9 * 512 / 312e12 * 1e9


def test_inline_card_equals_the_catalog_card(tmp_path):
    named = gpumux("run", write(tmp_path), "-o", tmp_path / "a.h5", "--json")
    inline = gpumux("run", write(tmp_path, llm="{layers: 32, hidden: 4096, heads: 32, kv_heads: 32,"
                                 " ffn: 11008, vocabulary: 32000}"),
                    "-o", tmp_path / "b.h5", "--json")
    assert named.returncode == inline.returncode == 0, named.stderr + inline.stderr
    a, b = (json.loads(p.stdout)["tenants"]["chat"] for p in (named, inline))
    assert a["latency_ns"] == b["latency_ns"] and a["ttft_ns"] == b["ttft_ns"]


@pytest.mark.parametrize("kwargs, key, words", [
    ({"llm": "{model: llama-9-1b}"}, "llm.model", "unknown LLM model card"),
    ({"llm": "{model: llama-2-7b, layers: 3}"}, "llm.layers", "not both"),
    ({"llm": "{model: llama-2-7b, tp: 2}"}, "llm.tp", "needs the tenant on 2 GPUs"),
    ({"llm": "{model: llama-2-7b, dtype: fp12}"}, "llm.dtype", "unknown dtype"),
    ({"llm": "{model: llama-2-7b, dtype: fp8}"}, "llm", "fp8_tensor"),
    # A profile without compute_throughput (every shipped profile has one).
        ({"model": str(Path(__file__).resolve().parent.parent / "data" / "profiles" /
                       "minimal-mig.yaml")}, "llm", "compute_throughput"),
    ({"llm": "{model: llama-2-70b}"}, "llm", "do not fit"),
    ({"llm": "{layers: 32, hidden: 4001, heads: 32, ffn: 1, vocabulary: 1}"}, "llm.heads",
     "not a multiple"),
    ({"batching": "{max_batch: 8, scheduler: fifo}"}, "batching.scheduler", "unknown batch"),
    ({"batching": "{max_batch: 8, chunk_size: 256}"}, "batching.chunk_size", "sarathi"),
    ({"batching": "{max_batch: 8, kv_block: 16}"}, "batching.kv_block", "orca"),
    ({"batching": "{max_batch: 8, scheduler: vllm, max_tokens_in_batch: 0}"},
     "batching.max_tokens_in_batch", ""),
])
def test_mistakes_are_located_exit_2(tmp_path, kwargs, key, words):
    path = write(tmp_path, **kwargs)
    for command in ("validate", "run"):
        args = [command, path] + (["-o", tmp_path / "r.h5"] if command == "run" else [])
        proc = gpumux(*args)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert str(path) in lines[0] and key in lines[0] and words in lines[0], lines[0]
        assert not (tmp_path / "r.h5").exists()


def test_llm_needs_batching_and_no_request(tmp_path):
    path = tmp_path / "s.yaml"
    text = SCENARIO.format(model="a100-80gb", device="gpu0", batching="{max_batch: 4}",
                           llm="{model: llama-2-7b}")
    path.write_text(text.replace("      batching: {max_batch: 4}\n", ""))
    proc = gpumux("validate", path)
    assert proc.returncode == 2 and "needs batching" in proc.stderr, proc.stderr
    path.write_text(text + "      request: {kernels: [{duration: 1ms}]}\n")
    proc = gpumux("validate", path)
    assert proc.returncode == 2 and "not both" in proc.stderr, proc.stderr


def test_vidur_side_by_side_runs_from_the_repository(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "vidur" / "side_by_side.py"),
                           "--gpumux", GPUMUX, "--out", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()[1:]]
    assert {(r["qps"], r["costs"]) for r in rows} == {
        (q, c) for q in (2, 5, 10) for c in ("tables", "card")}
    for r in rows:
        assert r["gpumux"]["n"] == 500
        if r["costs"] == "tables":
            # On Vidur's own cost tables and scheduler: TTFT, TPOT and end-to-end mean, p50 and
            # p99 within 5 % at every load (issue 22's goal; docs/llm-serving.md gives the
            # measured errors), the decode operators fitted over the batches the run reaches.
            assert all(abs(e) < 5 for e in r["error_pct"].values()), r["error_pct"]
            assert 1 <= r["gpumux"]["decode_fit_max_batch"] <= 128
