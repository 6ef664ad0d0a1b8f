"""--set tenants.<name>.KEY=VALUE (and gpus.<name>.KEY) by name as well as by index, in the CLI
and the Python API; unknown names are one line naming the tenant, exit 2.
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")
HYBRID = str(REPO / "scenarios" / "hybrid-h100.yaml")


def summary(*args):
    r = gpumux("run", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_by_name_equals_by_index():
    by_name = summary(QUICKSTART, "--set", "tenants.chat.workload.arrivals.rate=100/s")
    by_index = summary(QUICKSTART, "--set", "tenants.0.workload.arrivals.rate=100/s")
    default = summary(QUICKSTART)
    assert by_name["tenants"] == by_index["tenants"]
    assert by_name["tenants"]["chat"]["requests"] < 0.7 * default["tenants"]["chat"]["requests"]


def test_by_name_reaches_the_right_tenant_and_all_replicas():
    r = gpumux("validate", HYBRID, "--set", "tenants.small-c.replicas=1",
               "--set", "gpus.gpu0.sharing.mode=time-slicing")
    assert r.returncode == 0, r.stderr
    assert "tenants: small-c\n" in r.stdout and "small-b-0 small-b-1 small-b-2" in r.stdout


@pytest.mark.parametrize("key,message", [
    ("tenants.chta.slo.p99=1ms",
     "--set tenants.chta.slo.p99: tenants has no entry named 'chta' (did you mean 'chat'?); "
     "names: chat"),
    ("tenants.nobody.memory=1Gi", "tenants has no entry named 'nobody'"),
])
def test_unknown_tenant_one_line_exit_2(key, message):
    r = gpumux("run", QUICKSTART, "--set", key)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_replica_name_points_at_its_template():
    r = gpumux("run", HYBRID, "--set", "tenants.small-a-0.memory=1Gi")
    assert r.returncode == 2
    assert "a replica of 'small-a': --set tenants.small-a.KEY sets all its replicas" in r.stderr


def test_python_api_by_name():
    import gpumux
    a = gpumux.run(QUICKSTART, overrides={"tenants.chat.workload.arrivals.rate": "100/s"})
    b = gpumux.run(QUICKSTART, overrides={"tenants.0.workload.arrivals.rate": "100/s"})
    assert a.summary["tenants"] == b.summary["tenants"]
    with pytest.raises(gpumux.ScenarioError, match="no entry named 'ghost'"):
        gpumux.validate(QUICKSTART, overrides={"tenants.ghost.memory": "1Gi"})
