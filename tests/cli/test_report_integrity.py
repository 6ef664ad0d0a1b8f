"""`gpumux report` and `gpumux plot` check every table of a result file (issue 27 item 7).

`report` printed /summary and exited 0 whatever the data tables held; now every dataset is read
through (every chunk decoded) first, and a corrupt one is refused with one line naming the file
and the table, exit 2. A truncated file is refused at open, also in one line, exit 2.
"""
import shutil
from pathlib import Path

import h5py
import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

# About 2,000 requests: /requests has a full chunk of deflated rows to corrupt.
SMALL = """\
name: small
duration: 2s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 1000/s}
      request: {kernels: [{name: k, duration: 100us}]}
"""


@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    directory = tmp_path_factory.mktemp("report")
    scenario = directory / "small.yaml"
    scenario.write_text(SMALL)
    out = directory / "small.h5"
    proc = gpumux("run", str(scenario), "-o", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    return out


def corrupt_first_chunk(path, table):
    """Overwrites the middle of TABLE's first stored chunk (deflated bytes) with 0x55."""
    with h5py.File(path, "r") as f:
        info = f[table].id.get_chunk_info(0)
        offset, size = info.byte_offset, info.size
    assert size >= 16
    with open(path, "r+b") as raw:
        raw.seek(offset + size // 4)
        raw.write(b"\x55" * (size // 2))


def refused_in_one_line(proc, path, table):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert str(path) in lines[0] and table in lines[0], lines[0]
    assert proc.stdout == ""  # nothing printed from /summary before the refusal


def test_intact_file_is_reported(result_file):
    proc = gpumux("report", str(result_file))
    assert proc.returncode == 0, proc.stderr
    assert "t" in proc.stdout


@pytest.mark.parametrize("table", ["/requests", "/tenants", "/devices"])
def test_corrupt_table_is_refused_naming_it(tmp_path, result_file, table):
    copy = tmp_path / "corrupt.h5"
    shutil.copy(result_file, copy)
    with h5py.File(copy, "r") as f:
        if f[table].id.get_num_chunks() == 0:
            pytest.fail(f"{table} has no stored chunk in the fixture")
    corrupt_first_chunk(copy, table)
    for args in (["report", str(copy)], ["report", str(copy), "--json"],
                 ["plot", str(copy), "-o", str(tmp_path / "p.png")]):
        refused_in_one_line(gpumux(*args), copy, f"{table}: corrupt or truncated table")
    assert not (tmp_path / "p.png").exists()


def test_truncated_file_is_refused_in_one_line(tmp_path, result_file):
    copy = tmp_path / "truncated.h5"
    data = result_file.read_bytes()
    copy.write_bytes(data[: len(data) * 2 // 3])
    proc = gpumux("report", str(copy))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(copy) in lines[0] and "Traceback" not in proc.stderr
