"""The error contract under bad input (issue 13, items 3 and 4).

Every user mistake is exit 2 with one line on stderr naming the file (and line, and the key
where the mistake is a scenario key), for `validate` and `run` alike; Python raises
gpumux.ScenarioError. Each case writes its bad input into tmp_path. The cases are the ones an
operator's fuzz campaign found ending in exit 3 "internal error", in an overflow, or passing
`validate` and then failing the run.
"""
import functools
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import GPUMUX, run_gpumux

REPO = Path(__file__).resolve().parents[2]
gpumux = functools.partial(run_gpumux, errors="replace")

SCENARIO = """\
name: bad
duration: 1s
warmup: 100ms
gpus: [{{name: gpu0, model: h100-sxm-80gb}}]
tenants:
  - name: {tenant}
    device: gpu0
    workload:
      arrivals: {arrivals}
      request: {{kernels: [{{name: k, duration: {duration}}}]}}
"""


def scenario(tenant="t", arrivals="{process: poisson, rate: 10/s}", duration="1ms"):
    return SCENARIO.format(tenant=tenant, arrivals=arrivals, duration=duration)


def write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def trace_scenario(tmp_path, trace_name, trace, fmt, extra=""):
    write(tmp_path, trace_name, trace)
    return write(tmp_path, "scenario.yaml",
                 scenario(arrivals=f"{{process: trace, file: {trace_name}, format: {fmt}{extra}}}"))


AZURE_HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
MOONCAKE_LINE = '{{"timestamp": {t}, "input_length": {i}, "output_length": 5}}\n'


def case_rate_per_hour(tmp_path):
    return write(tmp_path, "scenario.yaml", scenario(arrivals="{process: poisson, rate: 1e-9/h}"))


def case_rate_subnormal(tmp_path):
    return write(tmp_path, "scenario.yaml",
                 scenario(arrivals="{process: constant, rate: 5e-324/s}"))


def case_time_scale(tmp_path):
    return trace_scenario(tmp_path, "t.csv", AZURE_HEADER + "2023-11-16 18:15:46.68,10,5\n"
                          "2023-11-16 18:15:50.99,10,5\n", "azure-llm", ", time_scale: 1e10")


def case_date_out_of_range(tmp_path):
    return trace_scenario(tmp_path, "t.csv", AZURE_HEADER + "9999-11-16 18:15:46.68,10,5\n",
                          "azure-llm")


def case_trace_tokens(tmp_path):
    return trace_scenario(tmp_path, "t.csv", AZURE_HEADER + "2023-11-16 18:15:46.68,10,5\n"
                          "2023-11-16 18:15:47.00,4000000000,5\n", "azure-llm")


def case_mooncake_1e400(tmp_path):
    return trace_scenario(tmp_path, "t.jsonl", MOONCAKE_LINE.format(t=0, i=10)
                          + MOONCAKE_LINE.format(t="1e400", i=10), "mooncake")


def case_mooncake_tokens(tmp_path):
    return trace_scenario(tmp_path, "t.jsonl", MOONCAKE_LINE.format(t=0, i=10**12), "mooncake")


def case_two_documents(tmp_path):
    return write(tmp_path, "scenario.yaml", scenario() + "---\nname: second\n")


def case_too_deep(tmp_path):
    return write(tmp_path, "scenario.yaml", "name: " + "[" * 3000 + "]" * 3000 + "\n")


def case_latin1(tmp_path):
    return write(tmp_path, "scenario.yaml", scenario().replace("name: bad", "name: café")
                 .encode("latin-1"))


def case_utf16(tmp_path):
    return write(tmp_path, "scenario.yaml", scenario().encode("utf-16"))


def case_invalid_utf8_name(tmp_path):
    # Accepted by `validate` and simulated before: the result's JSON then failed (exit 3).
    return write(tmp_path, "scenario.yaml", scenario().replace("name: bad", "name: b\xc3(")
                 .encode("utf-8", "surrogateescape").replace(b"\xc3\x83(", b"\xc3("))


def case_lognormal_sigma(tmp_path):
    return write(tmp_path, "scenario.yaml",
                 scenario(duration="{lognormal: {median: 1ms, sigma: 8}}"))


def case_repeat(tmp_path):
    return write(tmp_path, "scenario.yaml",
                 scenario(duration="1ms, repeat: 1000000000"))


def case_gpu_count(tmp_path):
    return write(tmp_path, "scenario.yaml", scenario().replace(
        "{name: gpu0, model: h100-sxm-80gb}", "{name: gpu, model: h100-sxm-80gb, count: 1000000000}")
        .replace("device: gpu0", "device: gpu-0"))


def case_replicas(tmp_path):
    return write(tmp_path, "scenario.yaml",
                 scenario().replace("    device: gpu0\n", "    device: gpu0\n    replicas: 100000000\n"))


def case_work_rate(tmp_path):
    # rate 1e9/s over a minute: 6e10 requests (budget 1e9); used to run for hours.
    return write(tmp_path, "scenario.yaml", scenario(arrivals="{process: poisson, rate: 1e9/s}")
                 .replace("duration: 1s", "duration: 60s"))


def case_work_kernel_duration(tmp_path):
    # 100000h (a typo for 100000us): the drain records billions of timeseries samples.
    return write(tmp_path, "scenario.yaml", scenario(duration="100000h"))


def case_work_sample(tmp_path):
    return write(tmp_path, "scenario.yaml", scenario() + "output: {sample: 1ns}\n")


def sparse(path, size):
    """A file of SIZE bytes that takes no disk space (a hole): the size check alone refuses it."""
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def case_scenario_too_large(tmp_path):
    path = write(tmp_path, "scenario.yaml", scenario())
    with open(path, "r+b") as f:
        f.truncate(17 << 20)
    return path


def case_trace_huge_and_binary(tmp_path):
    # 3 GiB of zero bytes: a streamed trace has no size limit (it used to be refused as over
    # 2 GiB), but its first line is longer than any trace's, so it fails there at once instead
    # of being gathered into one 3 GiB line.
    path = trace_scenario(tmp_path, "t.csv", AZURE_HEADER, "azure-llm")
    sparse(tmp_path / "t.csv", 3 << 30)
    return path


def case_profile_device(tmp_path):
    # `model: /dev/zero` used to be read without bound.
    return write(tmp_path, "scenario.yaml", scenario().replace("model: h100-sxm-80gb",
                                                               "model: /dev/zero"))


def case_kernel_trace_device(tmp_path):
    return write(tmp_path, "scenario.yaml", scenario().replace(
        "request: {kernels: [{name: k, duration: 1ms}]}",
        "request: {kernel_trace: /dev/zero, format: torch}"))


# case -> (file the message names, line, text in the message)
CASES = {
    case_rate_per_hour: ("scenario.yaml", 9, "tenants.0.workload.arrivals.rate: rate too small"),
    case_rate_subnormal: ("scenario.yaml", 9, "tenants.0.workload.arrivals.rate: rate too small"),
    case_time_scale: ("t.csv", 3, "arrivals.time_scale 1e+10 puts this arrival out of range"),
    case_date_out_of_range: ("t.csv", 2, "TIMESTAMP: date out of range"),
    case_trace_tokens: ("t.csv", 3, "ContextTokens: 4000000000 is more than the most tokens"),
    case_mooncake_1e400: ("t.jsonl", 2, "a number out of range (beyond a double)"),
    case_mooncake_tokens: ("t.jsonl", 1, "input_length: 1000000000000 is more than the most"),
    case_two_documents: ("scenario.yaml", 12, "several YAML documents"),
    case_too_deep: ("scenario.yaml", 1, "nested too deeply"),
    case_latin1: ("scenario.yaml", 1, "not UTF-8 text (byte 0xE9"),
    case_utf16: ("scenario.yaml", None, "the file is UTF-16 text"),
    case_invalid_utf8_name: ("scenario.yaml", 1, "not UTF-8 text (byte 0xC3"),
    case_lognormal_sigma: ("scenario.yaml", 10, "lognormal.sigma: at most 3 (the mean would be"),
    case_repeat: ("scenario.yaml", 10, "repeat: at most 1000000 launches per request"),
    case_gpu_count: ("scenario.yaml", 4, "gpus.0.count: at most 4096 GPUs per entry"),
    case_replicas: ("scenario.yaml", 8, "tenants.0.replicas: at most 100000 replicas"),
    case_work_rate: ("scenario.yaml", 9,
                     "tenants.0.workload.arrivals.rate: the scenario asks for about 6e+10 requests"),
    case_work_kernel_duration: ("scenario.yaml", 10,
                                "tenants.0.workload.request.kernels.0.duration: the run would "
                                "record about"),
    case_work_sample: ("scenario.yaml", 11, "output.sample: the run would record about 2e+09"),
    case_scenario_too_large: ("scenario.yaml", None,
                              "scenario.yaml: 17 MiB: over the 16 MiB limit for a scenario file"),
    case_trace_huge_and_binary: ("t.csv", 1, "a line longer than 1 MiB: not a trace (a binary "
                                 "or corrupt file?)"),
    case_profile_device: ("scenario.yaml", 4, "gpus.0.model: /dev/zero: is a device, not a "
                          "device profile file (gpumux reads regular files and pipes)"),
    case_kernel_trace_device: ("scenario.yaml", 10,
                               "kernel_trace: kernel trace is not a regular file: /dev/zero"),
}


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("case", list(CASES), ids=lambda c: c.__name__[5:])
def test_bad_input_is_exit_2_with_one_line_naming_the_file(tmp_path, case, command):
    path = case(tmp_path)
    file, line, text = CASES[case]
    out = gpumux(command, str(path), cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("gpumux: error: "), lines[0]
    assert "internal error" not in lines[0]
    location = re.escape(file) + (f":{line}:" if line is not None else ":")
    assert re.search(location, lines[0]), lines[0]
    assert text in lines[0], lines[0]


def python_api():
    gpumux_py = pytest.importorskip("gpumux")
    if not hasattr(gpumux_py, "run"):
        pytest.skip("gpumux package: put python/ on PYTHONPATH too")
    return gpumux_py


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: c.__name__[5:])
def test_python_raises_scenario_error(tmp_path, case, monkeypatch):
    api = python_api()
    path = case(tmp_path)
    file, _, text = CASES[case]
    monkeypatch.chdir(tmp_path)
    for call in (api.validate, api.run):
        with pytest.raises(api.ScenarioError) as error:
            call(str(path))
        assert file in str(error.value) and text in str(error.value)


def test_allow_large_lifts_the_work_budget(tmp_path):
    """`allow_large: true` (or --set allow_large=true) accepts what the budget refuses."""
    path = case_work_kernel_duration(tmp_path)
    refused = gpumux("validate", str(path), cwd=tmp_path)
    assert refused.returncode == 2 and "set allow_large: true to run it anyway" in refused.stderr
    allowed = gpumux("validate", str(path), "--set", "allow_large=true", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    path.write_text("allow_large: true\n" + path.read_text())
    assert gpumux("validate", str(path), cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("command", ["validate", "run"])
def test_set_values_are_checked_like_the_file(tmp_path, command):
    """--set values go through the scenario's reader: invalid UTF-8 is refused before running
    (it used to reach the result's JSON after simulating), and so is a second document."""
    path = write(tmp_path, "scenario.yaml", scenario())
    cases = [
        (b"name=b\xc3(", "--set name: bad YAML value 'b\\xC3(' (line 1, column 2 of the value): "
                         "not UTF-8 text (byte 0xC3"),
        (b"name=caf\xe9", "not UTF-8 text (byte 0xE9"),
        (b"name=a\n---\nb", "several YAML documents"),
    ]
    for setting, text in cases:
        out = subprocess.run([GPUMUX.encode(), command.encode(), str(path).encode(), b"--set",
                              setting], capture_output=True, timeout=120, cwd=tmp_path)
        stderr = out.stderr.decode("utf-8", "replace")
        assert out.returncode == 2, stderr
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and "internal error" not in lines[0], stderr
        assert text in lines[0], lines[0]


def test_a_scenario_pipe_is_read_up_to_the_limit(tmp_path):
    """A pipe that never ends (here fed from /dev/zero) stops at the 16 MiB scenario limit."""
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)
    feeder = subprocess.Popen(["sh", "-c", f"cat /dev/zero > '{fifo}'"],
                              stderr=subprocess.DEVNULL)
    try:
        out = gpumux("validate", str(fifo), cwd=tmp_path)
    finally:
        feeder.kill()
        feeder.wait()
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0] == (f"gpumux: error: {fifo}: more than 16 MiB from a pipe: over the limit for "
                        "a scenario file"), lines[0]


def test_python_bad_arguments_raise_scenario_error(tmp_path):
    """Overrides YAML cannot represent, text that is not UTF-8, seeds outside 64 bits and
    result files that cannot be written raise gpumux.ScenarioError (they raised yaml's
    RepresenterError, pybind11's TypeError and RuntimeError/OSError)."""
    api = python_api()
    path = write(tmp_path, "scenario.yaml", scenario())
    bad = [
        ({"overrides": {"name": object()}}, "--set name: a object value cannot be written"),
        ({"overrides": {"duration": complex(1, 2)}}, "--set duration: a complex value"),
        ({"overrides": {"name": "b\udcc3("}}, "--set name: not UTF-8 text"),
        ({"overrides": ["name=b\udcc3("]}, "--set name: not UTF-8 text"),
        ({"seed": 2**64}, "seed must be in 0..2**64 - 1"),
        ({"seed": -1}, "seed must be in 0..2**64 - 1"),
        ({"seed": 1.5}, "seed must be a whole number"),
        ({"seed": "x"}, "seed must be a whole number"),
    ]
    for call in (api.validate, api.run):
        for kwargs, text in bad:
            if call is api.validate and "seed" in kwargs:
                continue  # validate takes no seed
            with pytest.raises(api.ScenarioError, match=re.escape(text)):
                call(str(path), **kwargs)
    with pytest.raises(api.ScenarioError, match="YAML cannot represent"):
        api.validate({"name": object()})
    assert api.run(str(path), seed=2**64 - 1).seed == 2**64 - 1
    result = api.run(str(path))
    missing = tmp_path / "missing" / "out.h5"
    with pytest.raises(api.ScenarioError, match="out.h5"):
        result.save(missing)
    saved = tmp_path / "out.h5"
    result.save(saved)
    with pytest.raises(api.ScenarioError, match="cannot write the result file"):
        api.load(saved).save(missing)
    assert not missing.parent.exists()
