"""Every bad argument of the Python API is refused by the package itself, before any work, with
one line (issue 36 item 5): ScenarioError (a ValueError) for a value out of range or not a
number, TypeError for a value of the wrong type, never pybind11's "incompatible function
arguments" TypeError, a bare OverflowError (run(seed=inf), plan(jobs=2**40)) or a hang.
Property test: each argument drawn from values at and beyond its range."""
import random
from pathlib import Path

import pytest

gpumux = pytest.importorskip("gpumux")
if not hasattr(gpumux, "run"):
    pytest.skip("gpumux package: put python/ on PYTHONPATH too", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")
PLAN = str(REPO / "scenarios" / "plan" / "plan-h100-node.yaml")
CALIBRATION = str(REPO / "calibration" / "fit" / "solo-latency.csv")
SHORT = {"duration": "200ms", "warmup": "0s"}

# Values at and beyond the edges of a whole-number or real argument.
EXTREMES = [2**31, 2**40, 2**63, 2**64, 2**200, -1, -2**63, float("inf"), float("-inf"),
            float("nan"), 1e300, -1e300, 0.5, 5e-324, "x", "", "1e400", True, [], {}, object()]


def refused_cleanly(call):
    """CALL raises ScenarioError or the package's own TypeError, one line; False if it ran."""
    try:
        call()
    except gpumux.ScenarioError as e:
        message = str(e)
    except TypeError as e:
        message = str(e)
        assert "incompatible function arguments" not in message, message
    else:
        return False
    assert message and "\n" not in message, message
    return True


ARGUMENTS = {
    # (function, a valid value check: None when every EXTREMES value must be refused)
    "run.seed": lambda v: gpumux.run(QUICKSTART, overrides=SHORT, seed=v),
    "compare.seed": lambda v: gpumux.compare(QUICKSTART, ["mps"], overrides=SHORT, seed=v),
    "sweep.seed": lambda v: gpumux.sweep(QUICKSTART, {"warmup": ["0s"]}, overrides=SHORT,
                                         seed=v, processes=1),
    "sweep.processes": lambda v: gpumux.sweep(QUICKSTART, {"warmup": ["0s"]}, overrides=SHORT,
                                              processes=v),
    "plan.jobs": lambda v: gpumux.plan(PLAN, jobs=v),
    "plan.max_gpus": lambda v: gpumux.plan(PLAN, max_gpus=v),
    "plan.gpus": lambda v: gpumux.plan(PLAN, gpus={"h100-sxm-80gb": v}),
    "calibrate.iterations": lambda v: gpumux.calibrate(CALIBRATION, iterations=v),
    "run.progress": lambda v: gpumux.run(QUICKSTART, overrides=SHORT, progress=v),
    "run.overrides.duration": lambda v: gpumux.run(QUICKSTART, overrides={"duration": v}),
    "run.overrides.rate": lambda v: gpumux.run(
        QUICKSTART, overrides={**SHORT, "tenants.0.workload.arrivals.rate": v}),
}

# Which extremes a run may accept (it then runs, briefly): a seed of 0.5 is refused, 2**40 is a
# valid seed; a duration or a rate without a unit is refused by the loader.
VALID = {
    "run.seed": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64,
    "compare.seed": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64,
    "sweep.seed": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64,
    # A price per hour: any finite number from 0 to 1e12 (a plan search would run).
    "plan.gpus": lambda v: (isinstance(v, (int, float)) and not isinstance(v, bool)
                            and 0 <= v <= 1e12),
}


@pytest.mark.parametrize("argument", sorted(ARGUMENTS))
def test_every_extreme_is_refused_or_valid(argument):
    rng = random.Random(argument)
    values = rng.sample(EXTREMES, len(EXTREMES))
    valid = VALID.get(argument, lambda v: False)
    for value in values:
        if valid(value):
            continue  # a valid value would run (covered by the API's own tests)
        assert refused_cleanly(lambda: ARGUMENTS[argument](value)), (argument, value)


def test_the_reproducers():
    """plan(jobs=2**40) raised pybind11's raw TypeError, run(seed=inf) a bare OverflowError."""
    with pytest.raises(gpumux.ScenarioError, match=r"^jobs \(0: the cores\) must be from 0 to "
                                                   r"1024, not 1099511627776$"):
        gpumux.plan(PLAN, jobs=2**40)
    with pytest.raises(gpumux.ScenarioError, match=r"^seed must be a whole number, not inf$"):
        gpumux.run(QUICKSTART, seed=float("inf"))
    with pytest.raises(gpumux.ScenarioError, match=r"^seed must be in 0\.\.2\*\*64 - 1"):
        gpumux.run(QUICKSTART, seed=-1)


def test_validate_takes_a_cluster_scenario_as_the_cli_does():
    """validate() refused a cluster scenario that `gpumux validate` accepts."""
    out = gpumux.validate(str(REPO / "scenarios" / "cluster" / "gang-two-nodes.yaml"))
    assert out["status"] == "ok" and out["kind"] == "cluster"
    assert out["pools"] == 1 and out["pods"] == 2 and out["advertised"]
