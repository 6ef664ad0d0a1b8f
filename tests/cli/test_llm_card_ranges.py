"""Issue 36's numeric reproducers on the LLM and catalog paths: values that ran to exit 0 with a
meaningless result (an overflowed weight size, a kernel time beyond 64-bit nanoseconds, an
all-reduce rounded to 1 ns, a prompt longer than the model's positions, a request without
tokens) are refused by `validate` and `run` in one line naming the file, line and the key the
user wrote, exit 2. Values at the edge of the ranges still resolve. Drives $GPUMUX_BIN."""
import json
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

LLM = """\
name: llm
seed: 1
duration: 2s
gpus:
  - {{name: gpu0, model: a100-80gb, sharing: {{mode: exclusive}}}}
tenants:
  - name: chat
    device: gpu0
    workload:
      arrivals: {{process: poisson, rate: 4/s}}
      tokens: {tokens}
      batching: {{max_batch: 64, scheduler: vllm}}
      llm: {llm}
"""

INLINE = "{{layers: 32, hidden: {hidden}, heads: 32, kv_heads: 32, ffn: {ffn}, vocabulary: 32000}}"

CATALOG = """\
name: train
seed: 1
duration: 2s
gpus:
  - {{name: gpu0, model: a100-80gb, sharing: {{mode: exclusive}}}}
  - {{name: gpu1, model: a100-80gb, sharing: {{mode: exclusive}}}}
tenants:
  - name: dp
    device: [gpu0, gpu1]
    workload:
      arrivals: {{process: closed, concurrency: 1}}
      model: resnet50
      phase: training
      batch: 32
      bus_bandwidth: {bus}
"""


def llm_yaml(tmp_path, llm="{model: llama-2-7b}", tokens="{input: 512, output: 64}"):
    path = tmp_path / "s.yaml"
    path.write_text(LLM.format(llm=llm, tokens=tokens))
    return path


def refused(path, key, *words):
    for command in ("validate", "run"):
        proc = gpumux(command, path)
        assert proc.returncode == 2, proc.stderr + proc.stdout
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert "s.yaml:" in proc.stderr and key in proc.stderr, proc.stderr
        for word in words:
            assert word in proc.stderr, proc.stderr


@pytest.mark.parametrize("llm, key, word", [
    ("{model: llama-2-7b, host_per_op: 1000000h}", "llm.host_per_op", "host time per launch"),
    ("{model: llama-2-7b, gemm_efficiency: 1e-300}", "llm.gemm_efficiency", "below"),
    ("{model: llama-2-7b, attention_efficiency: 1e-300}", "llm.attention_efficiency", "below"),
    ("{model: llama-2-7b, memory_efficiency: 5e-324}", "llm.memory_efficiency", "below"),
    ("{model: llama-2-7b, interconnect: 1e-9B/s}", "llm.interconnect", "below"),
    (INLINE.format(hidden=2**40, ffn=11008), "llm.hidden", "above"),
    (INLINE.format(hidden=4096, ffn=2**53), "llm.ffn", "above"),
])
def test_card_values_beyond_the_arithmetic_are_refused(tmp_path, llm, key, word):
    """Each ran to exit 0: 0 of 14 requests completed, dram_busy negative or NaN, memory
    -9.2e18 B (UBSan: llm_card.cpp signed overflow)."""
    refused(llm_yaml(tmp_path, llm=llm), key, word)


def test_tokens_beyond_the_positions_or_none_are_refused(tmp_path):
    """Llama-2-7B (4,096 positions) accepted 100,000-token prompts and requests of 0 tokens."""
    refused(llm_yaml(tmp_path, tokens="{input: 100000, output: 64}"), "tokens.input",
            "4096 positions")
    refused(llm_yaml(tmp_path, tokens="{input: 4000, output: 97}"), "tokens.input",
            "4097 input + output tokens")
    refused(llm_yaml(tmp_path, tokens="{input: {uniform: {min: 100, max: 5000}}, output: 64}"),
            "tokens.input", "positions")
    refused(llm_yaml(tmp_path, tokens="{input: 0, output: 0}"), "tokens", "at least one token")
    # Exactly the positions, and an inline card (no positions given), still resolve.
    assert gpumux("validate", llm_yaml(tmp_path, tokens="{input: 4000, output: 96}")).returncode \
        == 0
    inline = INLINE.format(hidden=4096, ffn=11008)
    proc = gpumux("validate", llm_yaml(tmp_path, llm=inline, tokens="{input: 8000, output: 64}"))
    assert proc.returncode == 0, proc.stderr
    # Mistral-7B's 32,768 positions take what Llama-2's refuse.
    proc = gpumux("validate", llm_yaml(tmp_path, llm="{model: mistral-7b}",
                                       tokens="{input: 8000, output: 64}"))
    assert proc.returncode == 0, proc.stderr


def test_a_tiny_bus_bandwidth_is_refused(tmp_path):
    """1e-9 B/s rounded the all-reduce to 1 ns: training predicted faster than at 230 GB/s."""
    path = tmp_path / "s.yaml"
    path.write_text(CATALOG.format(bus="1e-9B/s"))
    refused(path, "bus_bandwidth", "at least 1MB/s")
    path.write_text(CATALOG.format(bus="1MB/s"))
    proc = gpumux("validate", path)
    assert proc.returncode == 0, proc.stderr


# Every numeric key of an `llm:` card (docs/llm-serving.md) and of `tokens:`, at values from
# the smallest to beyond the largest a number can say: each is refused in one line naming a key,
# or runs to a physically bounded result.
EXTREMES = {
    "layers": ["0", "1", "16384", "2147483648"],
    "hidden": ["32", "1048576", "1099511627776", "9223372036854775807"],
    "ffn": ["1", "4194304", "9007199254740992"],
    "vocabulary": ["1", "16777216", "9223372036854775807"],
    "host_per_op": ["0s", "1ns", "1s", "1000000h", "-1s"],
    "gemm_efficiency": ["1e-300", "0.001", "1", "0", "nan"],
    "attention_efficiency": ["5e-324", "0.001", "1"],
    "memory_efficiency": ["5e-324", "0.001", "1"],
    "interconnect": ["1e-9B/s", "1MB/s", "1e30B/s"],
    "activation_reserve": ["0B", "1B", "1PB"],
    "tp": ["0", "1", "2"],
}
CASES = [("llm", key, value) for key, values in EXTREMES.items() for value in values]
CASES += [("tokens", "input", v) for v in ("0", "1", "4095", "100000", "1e300", "-1")]
CASES += [("tokens", "output", v) for v in ("0", "4095", "1e19")]


@pytest.mark.parametrize("block, key, value", CASES)
def test_every_numeric_key_is_refused_or_bounded(tmp_path, block, key, value):
    if block == "tokens":
        tokens = {"input": "512", "output": "64"}
        tokens[key] = value
        path = llm_yaml(tmp_path, tokens=f"{{input: {tokens['input']}, output: {tokens['output']}}}")
    elif key in ("layers", "hidden", "ffn", "vocabulary"):
        card = {"layers": "32", "hidden": "4096", "ffn": "11008", "vocabulary": "32000"}
        card[key] = value
        path = llm_yaml(tmp_path, llm=INLINE.format(hidden=card["hidden"], ffn=card["ffn"])
                        .replace("layers: 32", f"layers: {card['layers']}")
                        .replace("vocabulary: 32000", f"vocabulary: {card['vocabulary']}"))
    else:
        path = llm_yaml(tmp_path, llm=f"{{model: llama-2-7b, {key}: {value}}}")
    proc = gpumux("run", path, "--json", "-q")
    if proc.returncode == 2:
        assert proc.stderr.count("\n") == 1 and "s.yaml:" in proc.stderr, proc.stderr
        assert f"workload.{block}" in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    tenant = summary["tenants"]["chat"]
    assert tenant["requests"] > 0
    assert 0 <= tenant["completed"] + tenant["failed"] <= tenant["requests"]
    assert tenant["completed"] > 0  # 2 s of a 7B model on an A100: some requests finish
    devices = summary["devices"].values() if isinstance(summary["devices"], dict) \
        else summary["devices"]
    for device in devices:
        for busy in ("sm_busy", "dram_busy"):
            assert 0 <= device[busy] <= 1 + 1e-9, (busy, device[busy])


BATCHED = """\
name: b
seed: 1
duration: 2s
gpus:
  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}
tenants:
  - name: chat
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 7/s}
      tokens: {input: 512, output: 64}
      batching: {max_batch: 32}
      request:
        host_gap: HOST_GAP
        kernels:
          - {name: prefill, duration: 10us, per_token: input}
          - {name: decode, duration: 1ms, per_sequence: PER_SEQUENCE, per_context_token: PER_CONTEXT, repeat: output_tokens}
"""


@pytest.mark.parametrize("host_gap, per_sequence, per_context, key", [
    ("0s", "1000000h", "0s", "request.kernels.1.per_sequence"),
    ("0s", "30us", "1s", "request.kernels.1.per_context_token"),
    ("1000000h", "30us", "0s", "request.host_gap"),
])
def test_batched_kernel_times_over_the_budget_name_their_key(tmp_path, host_gap, per_sequence,
                                                             per_context, key):
    """per_sequence: 1000000h ran to `status: complete` with 0 of 17 requests completed and 0
    failed (the work silently dropped beyond 2^63 ns); a host_gap over the budget was reported
    against kernels.0.duration."""
    path = tmp_path / "s.yaml"
    path.write_text(BATCHED.replace("HOST_GAP", host_gap).replace("PER_SEQUENCE", per_sequence)
                    .replace("PER_CONTEXT", per_context))
    refused(path, key, "to drain after duration")
    path.write_text(BATCHED.replace("HOST_GAP", "0s").replace("PER_SEQUENCE", "30us")
                    .replace("PER_CONTEXT", "0s"))
    proc = gpumux("run", path, "--json", "-q")
    assert proc.returncode == 0, proc.stderr
    tenant = json.loads(proc.stdout)["tenants"]["chat"]
    assert tenant["completed"] == tenant["requests"] > 0


def test_an_llm_tenant_over_the_launch_budget_is_told_about_its_tokens(tmp_path):
    """It was told about `request.kernels`, which an `llm:` tenant does not have."""
    path = tmp_path / "s.yaml"
    path.write_text(LLM.format(
        llm="{layers: 1, hidden: 64, heads: 1, kv_heads: 1, ffn: 64, vocabulary: 100}",
        tokens="{input: 16, output: 5000000}").replace("duration: 2s", "duration: 300s")
        .replace("rate: 4/s", "rate: 1/s"))
    refused(path, "tenants.0.workload.tokens:", "kernel launches (budget 1e+09)")
    assert "request.kernels" not in gpumux("validate", path).stderr
