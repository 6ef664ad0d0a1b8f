"""output.percentiles (docs/metrics.md) through the CLI and Python: the summary, the HDF5 file
and Result.percentiles say which method produced the percentiles; a sketch agrees with the exact
values within its stated bound; a bad value is one error line, exit 2."""
import json
from pathlib import Path

import h5py
import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

SCENARIO = """\
name: pct
seed: 3
duration: 4s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: time-slicing}}
tenants:
  - name: a
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 300/s}
      request: {kernels: [{name: k, duration: {lognormal: {median: 1ms, sigma: 0.8}}}]}
  - name: b
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 300us}]}
"""


@pytest.fixture
def scenario(tmp_path):
    path = tmp_path / "pct.yaml"
    path.write_text(SCENARIO)
    return str(path)


def summary(scenario, method, *extra):
    out = gpumux("run", scenario, "--json", "--set", f"output={{percentiles: {method}}}", *extra,
                 check=0).stdout
    return json.loads(out)


def test_default_is_auto_and_exact_below_the_cap(scenario):
    s = json.loads(gpumux("run", scenario, "--json", check=0).stdout)
    assert s["percentiles"] == {"confidence": 0.95, "mode": "auto", "method": "exact"}
    assert not any("sketch" in note for note in s.get("notes", []))
    exact = summary(scenario, "exact")
    assert exact["percentiles"] == {"confidence": 0.95, "mode": "exact", "method": "exact"}
    assert exact["tenants"] == s["tenants"]


def test_sketch_within_its_bound_and_reported(scenario, tmp_path):
    exact = summary(scenario, "exact")
    sketch = summary(scenario, "sketch")
    p = sketch["percentiles"]
    assert p["mode"] == "sketch" and p["method"] == "sketch"
    alpha = p["relative_error"]
    assert alpha == 1 / 256
    assert p["sketched_series"] == p["series"] == 8
    assert any("sketch" in note for note in sketch["notes"])
    for name, t in exact["tenants"].items():
        assert sketch["tenants"][name]["completed"] == t["completed"] > 100
    # Compare every *_ns percentile leaf of the two summaries.
    def leaves(obj, path=""):
        if isinstance(obj, dict):
            for k, v in obj.items():
                yield from leaves(v, f"{path}.{k}")
        else:
            yield path, obj
    exact_leaves = dict(leaves(exact["tenants"]))
    sketch_leaves = dict(leaves(sketch["tenants"]))
    checked = 0
    for path, want in exact_leaves.items():
        got = sketch_leaves[path]
        last = path.rsplit(".", 1)[-1]
        if last.startswith("p") and last[1:].isdigit() and want is not None:
            assert abs(got - want) <= alpha * abs(want), (path, want, got)
            checked += 1
        elif last in ("mean", "max", "count", "completed", "requests"):
            assert got == want, (path, want, got)
    assert checked >= 8
    # The text table carries the note; the HDF5 file the attribute.
    table = gpumux("run", scenario, "--set", "output={percentiles: sketch}", check=0).stdout
    assert "note: percentiles of 8 of 8 series" in table
    h5 = tmp_path / "r.h5"
    gpumux("run", scenario, "--set", "output={percentiles: sketch}", "-o", str(h5), check=0)
    with h5py.File(h5, "r") as f:
        attr = f.attrs["percentiles"]
        attr = attr.decode() if isinstance(attr, bytes) else attr
        assert json.loads(attr)["method"] == "sketch"


def test_bad_value_is_one_line_exit_2(scenario, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(SCENARIO + "output: {percentiles: approximate}\n")
    proc = gpumux("run", str(path), check=2)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{path}:17:23: output.percentiles:" in lines[0]
    assert "output.percentiles: unknown percentile method 'approximate'" in lines[0]
    assert "use one of: auto, exact, sketch" in lines[0]


def test_python_result_carries_the_method(scenario):
    gm = pytest.importorskip("gpumux")
    if not hasattr(gm, "run"):
        pytest.skip("gpumux package: put python/ on PYTHONPATH too")
    r = gm.run(scenario, overrides={"output": "{percentiles: sketch}"})
    assert r.percentiles["method"] == "sketch"
    assert r.percentiles["relative_error"] == 1 / 256
    assert gm.run(scenario).percentiles == {"confidence": 0.95, "mode": "auto", "method": "exact"}
