"""The ``gpumux`` console command of an installed package: runs the bundled C++ binary
(``gpumux/bin/gpumux``, built by ``pip install .``) with the same arguments and exit code."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def binary() -> str:
    """Path of the gpumux executable: the bundled one, else $GPUMUX_BIN, else one on PATH that
    is not this wrapper."""
    bundled = Path(__file__).resolve().parent / "bin" / "gpumux"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    env = os.environ.get("GPUMUX_BIN")
    if env:
        return env
    # `cmake --install` puts the binary itself into PREFIX/bin (no wrapper there).
    found = shutil.which("gpumux")
    if found and Path(found).resolve() != Path(sys.argv[0]).resolve():
        with open(found, "rb") as f:
            if f.read(4) == b"\x7fELF":
                return found
    raise FileNotFoundError("gpumux: the bundled binary gpumux/bin/gpumux is missing; "
                            "reinstall with `pip install --no-build-isolation --no-deps .`")


def main() -> int:
    try:
        exe = binary()
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 3
    os.execv(exe, [exe, *sys.argv[1:]])
    return 3  # not reached


if __name__ == "__main__":
    sys.exit(main())
