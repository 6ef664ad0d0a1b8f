"""validate and run ask every strategy for its limits (Strategy::limits): more clients on one
MPS server than it takes (48 on a whole H100, 6 inside a 1g.10gb instance: MPS documentation,
MIG User Guide) is a warning naming file, line and key, under `mps` and under
`mps-static-partition` alike (which the check used to let through without a word), and the run
turns exactly that many clients away at start, as the server does. At the limit: no warning."""
import json
import re

import pytest

TENANT = """  - name: t{index}
    device: {device}
    memory: 256MiB
    workload:
      arrivals: {{process: closed, concurrency: 1}}
      request: {{kernels: [{{name: k, duration: 20us, sm_fraction: 0.05, memory_bound: 0}}]}}
"""


def write(tmp_path, mode, clients, mig=None):
    gpu = "  - name: gpu0\n    model: h100-sxm-80gb\n"
    if mig:
        gpu += f"    mig: [{mig}]\n"
    gpu += f"    sharing:\n      mode: {mode}\n"
    device = "gpu0/0" if mig else "gpu0"
    text = "name: limits\nduration: 20ms\ngpus:\n" + gpu + "tenants:\n"
    text += "".join(TENANT.format(index=i, device=device) for i in range(clients))
    path = tmp_path / f"{mode}-{clients}.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("mode,mig,limit", [
    ("mps-static-partition", None, 48),
    ("mps", None, 48),
    ("mps-static-partition", "1g.10gb", 6),
    ("mps", "1g.10gb", 6),
])
def test_one_client_over_the_mps_server_limit_is_warned_and_turned_away(gpumux, tmp_path, mode,
                                                                        mig, limit):
    at = gpumux("validate", write(tmp_path, mode, limit, mig))
    assert at.returncode == 0, at.stderr + at.stdout
    assert "clients there" not in at.stderr
    over = write(tmp_path, mode, limit + 1, mig)
    rc, out, err = gpumux("validate", over)
    assert rc == 0, err + out
    warned = [line for line in err.splitlines() if "clients there" in line]
    assert len(warned) == 1, err
    # FILE:LINE:COL: gpus.0.sharing.mode: ... (the `mode:` line of the file: line 7 or 8)
    line_of_mode = 8 if mig else 7
    assert re.match(rf".*{re.escape(over.name)}:{line_of_mode}:\d+: gpus\.0\.sharing\.mode: ",
                    warned[0]), warned[0]
    assert f"{limit + 1} tenants" in warned[0] and f"at most {limit} clients" in warned[0]
    assert mode in warned[0]
    # The run simulates what the MPS server does: exactly one client is turned away at start.
    rc, out, err = gpumux("run", over, "--json")
    assert rc == 0, err
    tenants = json.loads(out)["tenants"]
    refused = [name for name, t in tenants.items() if t["completed"] == 0 and t["failed"] > 0]
    assert len(refused) == 1, refused
