"""The example scenarios shipped with gpumux (the repository's ``scenarios/`` folder).

    import gpumux
    gpumux.scenarios.names()                 # ['antipattern-memory-hog-timesliced', ...]
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


def names() -> list[str]:
    """Names of the shipped scenarios (file names without .yaml), sorted."""
    return sorted(p.stem for p in directory().glob("*.yaml"))


def path(name: str) -> Path:
    """The file of a shipped scenario: path("quickstart") -> .../quickstart.yaml."""
    stem = name[:-5] if name.endswith(".yaml") else name
    file = directory() / f"{stem}.yaml"
    if not file.is_file():
        raise FileNotFoundError(f"gpumux: no shipped scenario '{name}'; known: {', '.join(names())}")
    return file
