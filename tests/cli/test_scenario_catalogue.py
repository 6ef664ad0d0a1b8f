"""gpumux.scenarios lists and finds every shipped scenario, those in subfolders (plan/, cluster/)
included, and only scenarios (not the trace data under traces/)."""
import subprocess
from pathlib import Path

import pytest

from gpumux import scenarios

REPO = Path(__file__).resolve().parents[2]


def shipped_files():
    """Every tracked scenario file: git's list, so a new subfolder is covered without an edit."""
    listed = subprocess.run(["git", "ls-files", "scenarios/*.yaml", "scenarios/**/*.yaml"],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    files = {REPO / name for name in listed if not name.startswith("scenarios/traces/")}
    assert any(f.parent.name == "plan" for f in files) and any(
        f.parent.name == "cluster" for f in files)
    return files


def test_names_cover_every_shipped_scenario_and_path_finds_each():
    files = shipped_files()
    assert sorted(f.stem for f in files) == scenarios.names()
    for file in files:
        assert scenarios.path(file.stem) == file
        assert scenarios.path(file.stem + ".yaml") == file
        assert scenarios.path(str(file.relative_to(REPO / "scenarios"))) == file


def test_subfolder_scenarios_by_name_and_by_folder():
    assert scenarios.path("plan-h100-node") == REPO / "scenarios" / "plan" / "plan-h100-node.yaml"
    assert scenarios.path("cluster/mig-parted") == REPO / "scenarios" / "cluster" / "mig-parted.yaml"
    assert "v100-sxm2-16gb" not in scenarios.names()  # a kernel-trace profile, not a scenario


@pytest.mark.parametrize("name", ["nonesuch", "plan/quickstart", "traces/kernels/v100-sxm2-16gb"])
def test_unknown_name_lists_the_known_ones_subfolders_included(name):
    with pytest.raises(FileNotFoundError) as error:
        scenarios.path(name)
    message = str(error.value)
    assert f"no shipped scenario '{name}'" in message
    assert "plan-h100-node" in message and "openb-default" in message
