"""`gpumux report` and `plot` on a result file the HDF5 library cannot read safely (issue 36
item 6, found by fuzzing the report readers): one flipped byte in a variable-length string's
global heap made H5Dread crash (report: SIGSEGV, exit 139, no message) and another made it loop
forever (report never returned). The file is now decoded in a child process
(models/output/result_read_isolated.hpp): one line naming the file, exit 2. The two inputs are
the fuzz corpus's regression seeds (first byte: the fuzz target). Drives $GPUMUX_BIN."""
from pathlib import Path

import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fuzz" / "corpus"
CASES = {
    "crash-hdf5-vlen-global-heap-segv": "the HDF5 library crashed reading it: Segmentation fault",
    "timeout-hdf5-vlen-global-heap-loop": "the HDF5 library did not finish reading it in 30 s",
}
# A corrupt length of the summary's variable-length string (4 GiB, found by fuzzing at stop 43):
# H5Dread allocated and zeroed that much before reading (the child ran to 2-3 GB and the 30 s
# limit); the child's address-space limit now fails that allocation and the read at once.
OOM_SEED = "oom-hdf5-vlen-string-length-4gib"


# Every reader on the crash; the loop (30 s each) on report alone.
@pytest.mark.parametrize("seed,command", [
    ("crash-hdf5-vlen-global-heap-segv", ["report"]),
    ("crash-hdf5-vlen-global-heap-segv", ["report", "--format", "json"]),
    ("crash-hdf5-vlen-global-heap-segv", ["plot", "-o", "p.png"]),
    ("timeout-hdf5-vlen-global-heap-loop", ["report"]),
])
def test_a_file_that_breaks_the_hdf5_library_is_one_line(tmp_path, seed, command):
    (tmp_path / "bad.h5").write_bytes((CORPUS / seed).read_bytes()[1:])
    out = run_gpumux(command[0], "bad.h5", *command[1:], timeout=120, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr == ("gpumux: error: bad.h5: not a gpumux result file (corrupt: "
                          f"{CASES[seed]})\n")
    assert out.stdout == "" and not (tmp_path / "p.png").exists()


def test_a_corrupt_string_length_is_refused_without_waiting_out_the_limit(tmp_path):
    (tmp_path / "bad.h5").write_bytes((CORPUS / OOM_SEED).read_bytes()[1:])
    out = run_gpumux("report", "bad.h5", timeout=120, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr == ("gpumux: error: bad.h5: not a gpumux result file (reading /summary: "
                          "memory allocation failed for chunk)\n")
    assert out.stdout == ""
