"""Host prices of machine types are data (issue 35 item 7): the built-in table
calibration/prices/gcp-us-central1.yaml carries its provider, region, pricing, currency and date,
and `gpumux plan --prices FILE` / `plan.prices: FILE` replaces it. Checked: a node's price moves
by exactly the host price's change and the plan's answer does not; the plan names the table it
priced with; a bad table is one line (file, line, key), exit 2, in `plan` and `validate` alike."""
import json
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux
from test_plan import SMALL

# Nodes of one machine type only: every setup then costs nodes x (host + GPU price), so the
# ranking cannot depend on the host price.
ONE_TYPE = SMALL.replace("  max_gpus: 3\n",
                         "  max_gpus: 3\n  platform: gke\n  machines: [a3-highgpu-1g]\n")



def prices(path, host=1.0, currency="USD", date="2026-01-15", machine="a3-highgpu-1g"):
    path.write_text(
        "provider: example\nregion: test-1\npricing: on-demand\n"
        f"currency: {currency}\ndate: {date}\nsource: a test table\nmachines:\n"
        f"  - {{name: {machine}, gpu_model: h100-sxm-80gb, gpus: 1, host_per_hour: {host}}}\n")
    return str(path)


def test_a_price_table_moves_every_node_by_its_host_price_and_not_the_answer(tmp_path):
    scenario = tmp_path / "plan.yaml"
    scenario.write_text(ONE_TYPE)
    builtin = json.loads(gpumux("plan", str(scenario), "--json", check=0).stdout)
    assert builtin["prices"] == "gcp us-central1 on-demand USD, 2026-12-03 (built-in)"
    cheap_file = prices(tmp_path / "cheap.yaml", host=1.0)
    dear_file = prices(tmp_path / "dear.yaml", host=11.0)
    cheap = json.loads(gpumux("plan", str(scenario), "--json", "--prices", cheap_file,
                              check=0).stdout)
    dear = json.loads(gpumux("plan", str(scenario), "--json", "--prices", dear_file,
                             check=0).stdout)
    assert cheap["prices"] == f"example test-1 on-demand USD, 2026-01-15 ({cheap_file})"
    for plan, host in ((builtin, 1.18251), (cheap, 1.0), (dear, 11.0)):
        assert plan["found"]
        for row in plan["ranked"]:
            nodes = row["nodes"]
            assert nodes and all(n["machine"] == "a3-highgpu-1g" for n in nodes)
            # h100-sxm-80gb at 4.0/h (SMALL's plan.gpus) on one-GPU nodes.
            assert row["cost_per_hour"] == pytest.approx(len(nodes) * (host + 4.0), abs=1e-9)
    rows = [[(r["setup"], r["gpus"]) for r in p["ranked"]] for p in (builtin, cheap, dear)]
    assert rows[0] == rows[1] == rows[2]
    text = gpumux("plan", str(scenario), "--prices", dear_file, check=0).stdout
    assert f"host prices: example test-1 on-demand USD, 2026-01-15 ({dear_file})" in text


def test_plan_prices_in_the_scenario_resolves_against_its_directory(tmp_path):
    (tmp_path / "in").mkdir()
    prices(tmp_path / "in" / "mine.yaml", host=2.5)
    scenario = tmp_path / "in" / "plan.yaml"
    scenario.write_text(ONE_TYPE.replace("  platform: gke\n",
                                         "  platform: gke\n  prices: mine.yaml\n"))
    plan = json.loads(gpumux("plan", str(scenario), "--json", check=0, cwd=tmp_path).stdout)
    row = plan["ranked"][0]
    assert row["cost_per_hour"] == pytest.approx(len(row["nodes"]) * 6.5, abs=1e-9)


@pytest.mark.parametrize("command", ["plan", "validate"])
def test_a_bad_price_table_is_one_line_naming_file_line_and_key(tmp_path, command):
    scenario = tmp_path / "plan.yaml"
    scenario.write_text(ONE_TYPE)
    cases = [
        (str(tmp_path / "missing.yaml"), ["plan.prices", "missing.yaml"]),
        (prices(tmp_path / "date.yaml", date="15/01/2026"), ["date.yaml:5", "date", "YYYY-MM-DD"]),
        (prices(tmp_path / "neg.yaml", host=-1), ["neg.yaml:8", "host_per_hour"]),
        (prices(tmp_path / "eur.yaml", currency="EUR"), ["plan.prices", "EUR", "USD"]),
        (prices(tmp_path / "other.yaml", machine="a3-highgpu-2g"),
         ["unknown machine type 'a3-highgpu-1g'", "example test-1"]),
    ]
    for path, words in cases:
        args = ["--set", f"plan.prices={path}"] if command == "validate" else ["--prices", path]
        proc = gpumux(command, str(scenario), *args)
        assert proc.returncode == 2, (path, proc.stderr + proc.stdout)
        assert proc.stderr.count("\n") == 1, proc.stderr
        for word in words:
            assert word in proc.stderr, (word, proc.stderr)


def test_python_plan_takes_prices_like_the_cli(tmp_path):
    import gpumux as gpumux_py
    scenario = tmp_path / "plan.yaml"
    scenario.write_text(ONE_TYPE)
    table = prices(tmp_path / "mine.yaml", host=3.0)
    p = gpumux_py.plan(str(scenario), prices=Path(table), jobs=2)
    cli = json.loads(gpumux("plan", str(scenario), "--json", "--prices", table, check=0).stdout)
    assert p.prices == cli["prices"] == f"example test-1 on-demand USD, 2026-01-15 ({table})"
    assert p.setups.iloc[0]["cost_per_hour"] == cli["ranked"][0]["cost_per_hour"]
