"""Docs, profiles, code and tests cite their sources by name, never by files a clone does not have.

The calibration numbers were first collected in a document outside the repository
(CALIBRATION.md, next to raw files in a shared/ folder). A fresh clone has neither, so a
reference such as "(CALIBRATION.md §5.1)" or a path under ../shared or /work/shared sends a
reader nowhere. Every tracked text file must name the primary source instead (the NVIDIA MIG
User Guide, real nvidia-smi output, open-gpu-kernel-modules, te42kyfo/gpu-benches, ...).

Allowed (ALLOWED below): files that mention these names only to check they are absent, and
provenance notes of copied data under tests/data/ (SOURCE.md, LICENSE.txt), which may quote where
a copy was taken from.
"""
import fnmatch
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FORBIDDEN = ("CALIBRATION.md", "../shared", "/work/shared", "calibration-data/")

ALLOWED = {
    # fresh-clone CI: `test ! -e ../shared` proves there is no shared/ folder beside the clone
    ".ci/run": "asserts ../shared is absent",
    # asserts that the validation scripts do not read /work/shared
    "tests/cli/test_validation.py": "asserts /work/shared is absent",
    # this file: the list of forbidden names
    "tests/cli/test_no_outside_refs.py": "defines the forbidden names",
}
ALLOWED_GLOBS = {
    "tests/data/*/SOURCE.md": "provenance of copied test data",
    "tests/data/*/*/SOURCE.md": "provenance of copied test data",
    "tests/data/*/LICENSE.txt": "provenance of copied test data",
    "tests/data/*/*/LICENSE.txt": "provenance of copied test data",
}


def tracked_files():
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True)
    if proc.returncode != 0:
        pytest.skip("not a git checkout: " + proc.stderr.decode(errors="replace").strip())
    return [p for p in proc.stdout.decode().split("\0") if p]


def allowed(path):
    return path in ALLOWED or any(fnmatch.fnmatchcase(path, g) for g in ALLOWED_GLOBS)


def read_text(path):
    """The file's text, or None for a binary file (NUL byte or not UTF-8) or a missing one."""
    try:
        data = (REPO / path).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None  # deleted in the work tree, or a submodule
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_tracked_file_cites_files_outside_the_repo():
    files = tracked_files()
    assert len(files) > 50, "git ls-files listed almost nothing"
    hits = []
    for path in files:
        if allowed(path):
            continue
        text = read_text(path)
        if text is None:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for name in FORBIDDEN:
                if name in line:
                    hits.append(f"{path}:{lineno}: {name}: {line.strip()[:160]}")
    assert not hits, ("cite the primary source by name (and URL) instead of a file outside the "
                      "repository:\n" + "\n".join(hits))


def test_allowed_files_exist_and_still_need_the_exception():
    """An exception that no longer applies is removed, so the list stays the real one."""
    for path, why in ALLOWED.items():
        assert (REPO / path).is_file(), f"{path} ({why}) does not exist: drop it from ALLOWED"
        text = read_text(path)
        assert text is not None and any(n in text for n in FORBIDDEN), \
            f"{path} ({why}) no longer mentions a forbidden name: drop it from ALLOWED"


def test_the_check_catches_a_reference():
    text = 'sms: {value: 132, source: "H100 datasheet (CALIBRATION.md §5.1)"}'
    assert any(n in text for n in FORBIDDEN)
    assert not allowed("calibration/profiles/h100-sxm-80gb.yaml")
    assert allowed("tests/data/traces/SOURCE.md")
    assert allowed("tests/data/traces/azure-llm-inference-2023/SOURCE.md")
