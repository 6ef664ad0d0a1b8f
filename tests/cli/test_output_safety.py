"""Output safety and fault injection for `-o` (issue 13, items 1 and 6).

-o is checked before simulating: a regular file (replaced atomically) or a new name in a
directory where files can be created; symlinks are followed; directories, devices, FIFOs and
sockets are refused with one line and exit 2. The temporary file (TARGET.tmp.PID, beside the
target) never remains; a failed write leaves the previous file intact; SIGTERM/SIGHUP act as
SIGINT (partial results marked interrupted, exit 128+signal).

Faults are injected with GPUMUX_TEST_FAULT (a test hook: "write:ENOSPC", "fsync:EIO",
"rename:EXDEV", "probe:EACCES", "stall:SECONDS"), and for real with a 128 KiB tmpfs and a
read-only bind mount where this process may mount (root in a container that allows it).
"""
import os
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import h5py
import pytest

from cli_support import temps, wait_for

from conftest import GPUMUX, run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")
IS_ROOT = os.geteuid() == 0

# Runs for hours unless stopped: a refusal that came after simulating would time out.
LONG = """\
name: long
duration: 100000s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 900/s}
      request: {kernels: [{name: k, duration: 1ms}]}
"""

# A result file of a few tens of KiB (fits a 128 KiB tmpfs; quickstart's does not).
TINY = """\
name: tiny
duration: 10ms
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 1ms}]}
"""


def status_of(path):
    with h5py.File(path, "r") as f:
        status = f.attrs["status"]
        return status.decode() if isinstance(status, bytes) else status


@pytest.fixture
def long_yaml(tmp_path):
    path = tmp_path / "long.yaml"
    path.write_text(LONG)
    return str(path)


def refuse_fast(scenario, out, *reason):
    """-o OUT is refused before simulating: exit 2, one line naming OUT and the reason."""
    start = time.monotonic()
    proc = gpumux("run", scenario, "-o", str(out), "--quiet", timeout=30)
    elapsed = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    assert elapsed < 10, f"refused after {elapsed:.1f} s: the scenario was simulated first"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(out) in lines[0], lines[0]
    for text in reason:
        assert text in lines[0], lines[0]
    assert proc.stdout == ""
    return lines[0]


# --- refused targets -------------------------------------------------------------------------

def test_fifo_is_refused_and_kept(tmp_path, long_yaml):
    fifo = tmp_path / "out.h5"
    os.mkfifo(fifo)
    refuse_fast(long_yaml, fifo, "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert temps(tmp_path) == []


def test_directory_is_refused(tmp_path, long_yaml):
    directory = tmp_path / "out.h5"
    directory.mkdir()
    refuse_fast(long_yaml, directory, "is a directory")
    assert directory.is_dir() and list(directory.iterdir()) == []


def test_socket_is_refused(tmp_path, long_yaml):
    path = tmp_path / "out.h5"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        refuse_fast(long_yaml, path, "socket")
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        server.close()


def test_dev_null_and_dev_full_are_refused(long_yaml):
    # Without the .h5 extension: refused by name before anything else.
    for device in ("/dev/null", "/dev/full"):
        before = os.stat(device)
        refuse_fast(long_yaml, device)
        after = os.stat(device)
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_symlink_to_dev_null_is_refused(tmp_path, long_yaml):
    link = tmp_path / "null.h5"
    link.symlink_to("/dev/null")
    refuse_fast(long_yaml, link, "symlink to /dev/null", "character device")
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_device_node_named_h5_is_refused(tmp_path, long_yaml):
    if not IS_ROOT:
        pytest.skip("creating a device node (mknod) needs root; the symlink to /dev/null test "
                    "covers the device check")
    node = tmp_path / "null.h5"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError as error:
        pytest.skip(f"mknod refused here (no CAP_MKNOD): {error}")
    refuse_fast(long_yaml, node, "character device")
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_symlink_to_directory_is_refused(tmp_path, long_yaml):
    target = tmp_path / "results"
    target.mkdir()
    link = tmp_path / "out.h5"
    link.symlink_to(target)
    refuse_fast(long_yaml, link, "symlink to", "directory")
    assert link.is_symlink() and list(target.iterdir()) == []


def test_symlink_to_fifo_is_refused(tmp_path, long_yaml):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "out.h5"
    link.symlink_to(fifo)
    refuse_fast(long_yaml, link, "FIFO")
    assert link.is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_symlink_loop_is_refused(tmp_path, long_yaml):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    a.symlink_to(b)
    b.symlink_to(a)
    refuse_fast(long_yaml, a, "symbolic links")


def test_missing_directory_is_refused_before_simulating(tmp_path, long_yaml):
    out = tmp_path / "no" / "such" / "out.h5"
    refuse_fast(long_yaml, out, "does not exist")
    assert not (tmp_path / "no").exists()


def test_dangling_symlink_into_missing_directory_is_refused(tmp_path, long_yaml):
    link = tmp_path / "out.h5"
    link.symlink_to(tmp_path / "gone" / "out.h5")
    refuse_fast(long_yaml, link, "does not exist")


def test_proc_is_refused_before_simulating(long_yaml):
    refuse_fast(long_yaml, "/proc/gpumux-out.h5", "cannot create a file in /proc")


def test_file_as_directory_is_refused(tmp_path, long_yaml):
    (tmp_path / "plain").write_text("x")
    refuse_fast(long_yaml, tmp_path / "plain" / "out.h5", "not a directory")


def test_compare_refuses_too(tmp_path):
    directory = tmp_path / "cmp.h5"
    directory.mkdir()
    proc = gpumux("compare", QUICKSTART, "--strategies", "mps,time-slicing", "-o", str(directory))
    assert proc.returncode == 2 and "is a directory" in proc.stderr, proc.stderr


# --- accepted targets ------------------------------------------------------------------------

def test_symlink_to_file_is_followed(tmp_path):
    real = tmp_path / "real.h5"
    real.write_bytes(b"old contents")
    link = tmp_path / "out.h5"
    link.symlink_to("real.h5")
    proc = gpumux("run", QUICKSTART, "-o", str(link), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == "real.h5"  # the link stays
    assert status_of(real) == "complete"  # the file it points to was replaced
    assert temps(tmp_path) == []


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "out.h5"
    link.symlink_to("made.h5")
    proc = gpumux("run", QUICKSTART, "-o", str(link), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and status_of(tmp_path / "made.h5") == "complete"


def test_new_name_and_regular_file(tmp_path):
    out = tmp_path / "out.h5"
    assert gpumux("run", QUICKSTART, "-o", str(out), "--quiet").returncode == 0
    first_inode = os.stat(out).st_ino
    assert gpumux("run", QUICKSTART, "-o", str(out), "--quiet", "--seed", "3").returncode == 0
    assert os.stat(out).st_ino != first_inode  # replaced by rename, not rewritten in place
    assert temps(tmp_path) == [] and status_of(out) == "complete"


# --- unwritable directory ----------------------------------------------------------------------

def test_unwritable_directory_injected(tmp_path, long_yaml):
    out = tmp_path / "out.h5"
    proc = gpumux("run", long_yaml, "-o", str(out), extra_env={"GPUMUX_TEST_FAULT": "probe:EACCES"},
                  timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot create a file in {tmp_path}: Permission denied" in proc.stderr
    assert not out.exists() and temps(tmp_path) == []


def test_unwritable_directory_for_real(tmp_path, long_yaml):
    locked = tmp_path / "locked"
    locked.mkdir()
    previous = locked / "out.h5"
    previous.write_bytes(b"previous result")
    if not IS_ROOT:
        locked.chmod(0o555)
        try:
            line = refuse_fast(long_yaml, previous, "Permission denied")
        finally:
            locked.chmod(0o755)
    else:
        # Root bypasses permission bits; a read-only bind mount is refused for root too.
        bound = subprocess.run(["mount", "--bind", str(locked), str(locked)], capture_output=True)
        if bound.returncode != 0:
            pytest.skip("running as root (chmod 0o555 is bypassed) and a read-only bind mount "
                        f"is not allowed here: {bound.stderr.decode().strip()}; "
                        "test_unwritable_directory_injected covers the path")
        try:
            ro = subprocess.run(["mount", "-o", "remount,ro,bind", str(locked)],
                                capture_output=True)
            if ro.returncode != 0:
                pytest.skip("cannot remount the bind read-only here: "
                            f"{ro.stderr.decode().strip()}")
            line = refuse_fast(long_yaml, previous, "Read-only file system")
        finally:
            subprocess.run(["umount", str(locked)], check=True)
    assert "cannot create a file in" in line
    assert previous.read_bytes() == b"previous result" and temps(locked) == []


# --- write failures ----------------------------------------------------------------------------

@pytest.mark.parametrize("fault,message", [
    ("write:ENOSPC", "No space left on device"),
    ("fsync:EIO", "fsync failed: Input/output error"),
    ("rename:EXDEV", "Invalid cross-device link"),
])
def test_injected_write_failure_keeps_previous_file(tmp_path, fault, message):
    out = tmp_path / "out.h5"
    assert gpumux("run", QUICKSTART, "-o", str(out), "--quiet").returncode == 0
    before = out.read_bytes()
    proc = gpumux("run", QUICKSTART, "-o", str(out), "--seed", "5",
                  extra_env={"GPUMUX_TEST_FAULT": fault})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpumux: error: cannot write {out}: ")
    assert message in lines[0]
    assert "tenant" in proc.stdout  # the summary is still printed
    assert out.read_bytes() == before  # the previous file is intact
    assert temps(tmp_path) == []


def test_injected_write_failure_compare(tmp_path):
    out = tmp_path / "cmp.h5"
    proc = gpumux("compare", QUICKSTART, "--strategies", "mps,time-slicing", "-o", str(out),
                  extra_env={"GPUMUX_TEST_FAULT": "write:ENOSPC"})
    assert proc.returncode == 2 and "No space left on device" in proc.stderr, proc.stderr
    assert not out.exists() and temps(tmp_path) == []


def test_disk_full_on_a_tiny_tmpfs(tmp_path):
    mountpoint = tmp_path / "tiny"
    mountpoint.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs",
                              str(mountpoint)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a 128 KiB tmpfs here (needs root and a container that allows "
                    f"mount): {mounted.stderr.decode().strip()}; the injected ENOSPC test covers "
                    "the path")
    try:
        tiny = tmp_path / "tiny.yaml"
        tiny.write_text(TINY)
        out = mountpoint / "out.h5"
        proc = gpumux("run", str(tiny), "-o", str(out), "--quiet")
        assert proc.returncode == 0, proc.stderr
        before = out.read_bytes()
        # (40 KiB since every percentile has its confidence bounds: the tmpfs is 128 KiB)
        assert len(before) < 64 * 1024, "the tiny result must leave room for a second try"
        proc = gpumux("run", QUICKSTART, "-o", str(out))  # ~160 KiB: does not fit
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == f"gpumux: error: cannot write {out}: No space left on device"
        assert out.read_bytes() == before and status_of(out) == "complete"
        assert temps(mountpoint) == []
        # compare -o: the disk fills while the first strategy's records stream; both strategies
        # still run and print, the error is reported once at the end.
        proc = gpumux("compare", QUICKSTART, "--strategies", "mps,time-slicing", "-o", str(out))
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == f"gpumux: error: cannot write {out}: No space left on device"
        assert "mps" in proc.stdout and "time-slicing" in proc.stdout
        assert out.read_bytes() == before and temps(mountpoint) == []
    finally:
        subprocess.run(["umount", str(mountpoint)], check=True)


# --- signals -----------------------------------------------------------------------------------

def start(args, env=None):
    full_env = dict(os.environ)
    full_env.pop("GPUMUX_TEST_FAULT", None)
    full_env.update(env or {})
    return subprocess.Popen([GPUMUX, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=full_env)


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129),
                                         (signal.SIGINT, 130)])
def test_signal_during_simulation_writes_partial_results(tmp_path, long_yaml, signum, code):
    out = tmp_path / "partial.h5"
    proc = start(["run", long_yaml, "-o", str(out), "--quiet"])
    time.sleep(1.5)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "status=interrupted" in err
    assert status_of(out) == "interrupted"
    with h5py.File(out, "r") as f:
        assert 0 < f.attrs["sim_time_ns"] < 100000 * 10**9
        assert len(f["requests"]) > 0
    assert temps(tmp_path) == []


def test_sigterm_during_compare_writes_what_ran(tmp_path, long_yaml):
    out = tmp_path / "cmp.h5"
    proc = start(["compare", long_yaml, "--strategies", "mps,time-slicing", "-o", str(out)])
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    with h5py.File(out, "r") as f:
        assert f["strategies/mps"].attrs["status"] in ("interrupted", b"interrupted")
        # The file as a whole too (issue 27: it was the first result's, complete when the
        # signal came during a later strategy): interrupted when any strategy is.
        assert f.attrs["status"] in ("interrupted", b"interrupted")
    assert temps(tmp_path) == []


# Fast under mps, slow under time-slicing: the fatal fault at 1 s kills every MPS client of the
# device (both tenants) for the rest of the run, so mps only fails arrivals (3.6e5 events,
# 0.1 s here); under time-slicing it kills only `a`, and `b` launches 1,000 kernels per request
# for 20,000 s (2e8 events, ~28 s here). A signal 1.5 s in lands in the second run.
FAST_THEN_SLOW = """\
name: fast-then-slow
duration: 20000s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: a
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 5/s}
      request: {kernels: [{name: k, duration: 10us, repeat: 1000}]}
  - name: b
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 5/s}
      request: {kernels: [{name: k, duration: 10us, repeat: 1000}]}
faults:
  - {tenant: a, at: 1s, kind: fatal, recovery: 100000s}
"""


def test_sigterm_during_second_strategy_keeps_the_first(tmp_path):
    scenario = tmp_path / "fast-then-slow.yaml"
    scenario.write_text(FAST_THEN_SLOW)
    out = tmp_path / "cmp.h5"
    proc = start(["compare", str(scenario), "--strategies", "mps,time-slicing", "-o", str(out)])
    time.sleep(1.5)
    assert proc.poll() is None, "the comparison ended before the signal"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "status=interrupted" in err
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] in ("interrupted", b"interrupted")
        first, second = f["strategies/mps"], f["strategies/time-slicing"]
        # The first strategy ran to its end: complete, its whole horizon, every request kept.
        assert first.attrs["status"] in ("complete", b"complete")
        assert first.attrs["sim_time_ns"] >= 20000 * 10**9
        assert len(first["requests"]) > 150000
        # The second stopped part-way and says so; what it simulated is kept.
        assert second.attrs["status"] in ("interrupted", b"interrupted")
        assert 0 < second.attrs["sim_time_ns"] < 20000 * 10**9
        assert len(second["requests"]) > 0
    assert temps(tmp_path) == []


def test_sigterm_during_write_finishes_the_file(tmp_path):
    out = tmp_path / "out.h5"
    proc = start(["run", QUICKSTART, "-o", str(out), "--quiet"],
                 env={"GPUMUX_TEST_FAULT": "stall:3"})
    # The temporary file exists from the start of the run (the records are streamed into it);
    # the quickstart's simulation takes ~20 ms, so 1 s later the process is in the write stall.
    assert wait_for(lambda: temps(tmp_path)), "the temporary file never appeared"
    assert temps(tmp_path) == [f"out.h5.tmp.{proc.pid}"]  # beside the target
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "after the simulation finished" in err
    assert status_of(out) == "complete" and temps(tmp_path) == []


@pytest.mark.parametrize("first,second,code", [(signal.SIGTERM, signal.SIGTERM, 143),
                                               (signal.SIGINT, signal.SIGINT, 130),
                                               (signal.SIGTERM, signal.SIGHUP, 129)])
def test_second_signal_during_write_removes_the_temporary_file(tmp_path, first, second, code):
    out = tmp_path / "out.h5"
    out.write_bytes(b"previous result")
    proc = start(["run", QUICKSTART, "-o", str(out), "--quiet"],
                 env={"GPUMUX_TEST_FAULT": "stall:60"})
    assert wait_for(lambda: temps(tmp_path)), "the temporary file never appeared"
    proc.send_signal(first)
    time.sleep(0.2)
    proc.send_signal(second)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "second signal" in err
    assert out.read_bytes() == b"previous result"
    assert temps(tmp_path) == []


def test_help_documents_output_and_signals():
    proc = gpumux("run", "--help")
    assert proc.returncode == 0
    for text in ("symlink is followed", "FIFOs", "SIGTERM", "143", "tmp.PID", "fsynced"):
        assert text in proc.stdout, text
