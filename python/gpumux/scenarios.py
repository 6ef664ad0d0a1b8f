"""The example scenarios shipped with gpumux (the repository's ``scenarios/`` folder).

    import gpumux
    gpumux.scenarios.names()                 # ['antipattern-memory-hog-timesliced', ...]
    gpumux.scenarios.path("plan-h100-node")  # subfolders (plan/, cluster/) included
    gpumux.run(gpumux.scenarios.path("quickstart"))

An installed package carries them in ``gpumux/data/scenarios/`` (with the trace files they
use); in a source checkout they are read from ``scenarios/`` at the repository root.
"""
from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def directory() -> Path:
    """The folder holding the shipped scenario files."""
    for folder in (_HERE / "data" / "scenarios", _HERE.parent.parent / "scenarios"):
        if folder.is_dir() and any(folder.glob("*.yaml")):
            return folder
    raise FileNotFoundError("gpumux: the shipped scenarios were not found (looked in "
                            f"{_HERE / 'data' / 'scenarios'} and {_HERE.parent.parent / 'scenarios'})")


def _files() -> dict[str, Path]:
    """Every shipped scenario by name: the top folder and its subfolders (plan/, cluster/), not
    traces/ (the data files the scenarios read)."""
    root = directory()
    found: dict[str, Path] = {}
    for file in sorted(root.rglob("*.yaml")):
        relative = file.relative_to(root)
        if relative.parts[0] == "traces":
            continue
        if file.stem in found:
            raise RuntimeError(f"gpumux: two shipped scenarios are named '{file.stem}': "
                               f"{found[file.stem]} and {file}")
        found[file.stem] = file
    return found


def names() -> list[str]:
    """Names of the shipped scenarios (file names without .yaml, subfolders included), sorted."""
    return sorted(_files())


def path(name: str) -> Path:
    """The file of a shipped scenario: path("quickstart") -> .../quickstart.yaml,
    path("plan-h100-node") or path("plan/plan-h100-node") -> .../plan/plan-h100-node.yaml."""
    stem = name[:-5] if name.endswith(".yaml") else name
    files = _files()
    file = files.get(stem.rsplit("/", 1)[-1])
    if file is None or ("/" in stem and file != directory() / f"{stem}.yaml"):
        raise FileNotFoundError(f"gpumux: no shipped scenario '{name}'; known: {', '.join(names())}")
    return file
