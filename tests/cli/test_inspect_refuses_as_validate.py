"""`gpumux inspect` refuses what `gpumux validate` refuses (issue 36 item 5): the same checks in
the same order, one line, exit 2. Before, inspect resolved without validate's capacity check
(a tenant whose memory is over its device: validate exit 2, inspect exit 0 with the table), and
a cluster scenario was refused with no line or column (and a bad cluster file with the wrong
message). Each case's validate line must be inspect's line. Drives $GPUMUX_BIN."""
import random
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

PLAIN = """\
name: t
duration: 1s
gpus:
  - {name: g, model: MODEL}
tenants:
  - name: t
    device: g
    memory: MEMORY
    workload:
      arrivals: {process: poisson, rate: RATE/s}
      request:
        kernels: [{name: k, duration: DURATION}]
"""

CLUSTER = """\
name: c
cluster:
  duration: 1h
  pools:
    - {name: p, gpu: h100-sxm-80gb, gpus_per_node: GPUS, count: COUNT}
  pods:
    - {name: a, gpus: 1, count: 4, arrival: 1s, duration: 10min}
"""


def plain(memory="1GiB", rate="10", duration="1ms", model="a100-80gb"):
    return (PLAIN.replace("MEMORY", memory).replace("RATE", rate)
            .replace("DURATION", duration).replace("MODEL", model))


def random_plain(rng):
    """A scenario whose values are drawn near and beyond the limits validate checks: memory
    over the device (79.25 GiB on an A100 80GB), a rate that overloads it, a kernel duration
    beyond the work budget, an unknown model."""
    def pick(usual, *edges):
        return usual if rng.random() < 0.7 else rng.choice(edges)
    return plain(memory=rng.choice(["1GiB", "79GiB", "80GiB", "200GiB", "1TiB", "-1GiB", "1e30B"]),
                 rate=pick("10", "1e4", "1e9", "nan"),
                 duration=pick("1ms", "1000000h", "0s", "1e400s"),
                 model=pick("a100-80gb", "no-such-gpu"))


@pytest.mark.parametrize("case", range(32))
def test_inspect_refuses_every_scenario_validate_refuses(tmp_path, case):
    text = random_plain(random.Random(3600 + case))
    (tmp_path / "s.yaml").write_text(text)
    validate = gpumux("validate", "s.yaml", cwd=tmp_path)
    inspect = gpumux("inspect", "s.yaml", cwd=tmp_path)
    assert validate.returncode in (0, 2), validate.stderr
    assert inspect.returncode == validate.returncode, (text, validate.stderr, inspect.stderr)
    if validate.returncode == 2:
        assert inspect.stderr == validate.stderr and inspect.stderr.count("\n") == 1
        assert inspect.stdout == ""


def test_memory_over_the_device_is_refused_by_inspect():
    """The reproducer: validate exit 2, inspect printed the table with exit 0."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "s.yaml").write_text(plain(memory="200GiB"))
        out = gpumux("inspect", "s.yaml", cwd=folder)
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.startswith("gpumux: error: s.yaml:8:13: tenants.0.memory: tenant t "
                                     "allocates 200 GiB at start but g (a100-80gb) has")


@pytest.mark.parametrize("gpus,count", [(1, 2), (0, 2), (1, -1), ("x", 1)])
def test_a_cluster_scenario_is_one_located_line(tmp_path, gpus, count):
    """A good cluster file: inspect names its `cluster:` key with line and column (it has no
    kernels to show); a bad one: validate's own line."""
    (tmp_path / "c.yaml").write_text(CLUSTER.replace("GPUS", str(gpus))
                                     .replace("COUNT", str(count)))
    validate = gpumux("validate", "c.yaml", cwd=tmp_path)
    inspect = gpumux("inspect", "c.yaml", cwd=tmp_path)
    assert inspect.returncode == 2 and inspect.stderr.count("\n") == 1, inspect.stderr
    if validate.returncode == 2:
        assert inspect.stderr == validate.stderr
    else:
        assert validate.returncode == 0, validate.stderr
        assert inspect.stderr.startswith("gpumux: error: c.yaml:3:3: cluster: this scenario has "
                                         "a cluster: section"), inspect.stderr
