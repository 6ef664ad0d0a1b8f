"""Locates and imports the compiled module ``_gpumux``.

The pure-Python package lives in ``python/gpumux/`` while CMake builds the extension into
``BUILD/python/gpumux/_gpumux*.so``. The extension is looked for, in order:

1. next to this file (an installed package, or a build tree where the two were merged);
2. ``$GPUMUX_BUILD_DIR`` — a build directory (``$GPUMUX_BUILD_DIR/python/gpumux``), or the
   folder holding the ``.so`` itself;
3. ``gpumux/`` under every ``sys.path`` entry (``PYTHONPATH=build/python:python`` works);
4. the repository's own build directories (``build/``, then the most recently built ``build*/``).

The folder found is appended to the package ``__path__`` so ``gpumux._gpumux`` imports normally
(and pickles by that name).
"""
from __future__ import annotations

import glob
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

_HERE = Path(__file__).resolve().parent
_PATTERN = "_gpumux*.so"


def _has_extension(folder: Path) -> bool:
    try:
        return folder.is_dir() and any(folder.glob(_PATTERN))
    except OSError:
        return False


def _candidates():
    yield _HERE
    env = os.environ.get("GPUMUX_BUILD_DIR")
    if env:
        base = Path(env).expanduser()
        yield base / "python" / "gpumux"
        yield base / "gpumux"
        yield base
    for entry in sys.path:
        if entry:
            yield Path(entry) / "gpumux"
    repo = _HERE.parent.parent
    yield repo / "build" / "python" / "gpumux"
    others = [Path(p).parent for p in glob.glob(str(repo / "build*" / "python" / "gpumux" / _PATTERN))]
    others.sort(key=lambda p: max((f.stat().st_mtime for f in p.glob(_PATTERN)), default=0),
                reverse=True)
    yield from others


def find_extension_dir() -> Path | None:
    """The first folder holding the compiled extension (see the module docstring), or None."""
    seen = set()
    for folder in _candidates():
        try:
            key = folder.resolve()
        except OSError:
            continue
        if key in seen:
            continue
        seen.add(key)
        if _has_extension(folder):
            return key
    return None


def load(package_path: list) -> ModuleType:
    """Imports gpumux._gpumux, first extending the package's __path__ when needed."""
    folder = find_extension_dir()
    if folder is None:
        raise ImportError(
            "gpumux: the compiled module _gpumux was not found: build it in the source tree "
            "(make build, or cmake --build build --target _gpumux) and put build/python on "
            "PYTHONPATH, or set GPUMUX_BUILD_DIR to the build directory, or reinstall the "
            "package (pip install .)")
    if str(folder) not in package_path and folder != _HERE:
        package_path.append(str(folder))
    return importlib.import_module("gpumux._gpumux")
