"""A catalog tenant's `host:` block through the CLI (docs/reference/scenarios.md): a bad block is
one line naming file, line and key with exit 2; `gpumux inspect --json` says which host terms are
the user's and adds the block's per-request time once. Drives the built binary ($GPUMUX_BIN,
default build/gpumux)."""
import json

from conftest import run_gpumux as gpumux

SCENARIO = """name: t
duration: 50ms
gpus:
  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}
tenants:
  - name: w
    device: gpu0
    workload:
      arrivals: {process: closed, concurrency: 1}
      model: resnet50
      batch: 1
"""


def test_a_bad_host_block_is_one_line_with_file_line_and_key(tmp_path):
    for block, key in (("host: {per_request: -1ms}", "host.per_request"),
                       ("host: {link_bandwidth: fast}", "host.link_bandwidth"),
                       ("host: {per_requst: 1ms}", "per_requst"),
                       ("host: {}", "host")):
        path = tmp_path / "bad.yaml"
        path.write_text(SCENARIO + "      " + block + "\n")
        for command in ("validate", "run"):
            proc = gpumux(command, str(path))
            assert proc.returncode == 2, (block, command, proc.stdout, proc.stderr)
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1, proc.stderr
            assert f"{path}:12:" in lines[0] and key in lines[0], lines[0]


def test_inspect_shows_the_users_host_terms(tmp_path):
    def time_alone(extra):
        path = tmp_path / "s.yaml"
        path.write_text(SCENARIO + extra)
        proc = gpumux("inspect", str(path), "--json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["tenants"][0]["time_alone"]

    model = time_alone("")
    mine = time_alone("      host: {per_request: 1500us, input_bytes: 0B, output_bytes: 0B}\n")
    assert model["host_origin"].startswith("per_request profile, bytes catalog")
    assert mine["host_origin"].startswith("per_request user, bytes user, link profile")
    assert mine["host_per_request_ns"] == 1_500_000
    assert mine["copy_ns"] == 0  # no bytes over the link
    assert model["copy_ns"] > 0  # the catalog's input image and scores
