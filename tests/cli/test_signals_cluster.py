"""Issue 36 item 4, signals on every path: `plan -o` and the cluster path's worker processes.

A signal while `plan` writes -o lets the write finish and exits 128+signal (it exited 0, as if
no signal had come); a second signal then removes the temporary folder DIR.tmp.PID (it was left
behind). A signal while a cluster's workload pods are simulated, after the replay, writes the
replay marked status=interrupted (nothing was written). The processes that simulate a cluster's
workload pods (`run --workers N`) never outlive gpumux, even when it is killed with SIGKILL
(they simulated on for minutes). Drives the built
binary ($GPUMUX_BIN, default build/gpumux); GPUMUX_TEST_FAULT=stall:S holds each output file
for S seconds after writing it, so a signal lands mid-write (sim/io/output_target.hpp)."""
import json
import os
import signal
import subprocess
from pathlib import Path

import h5py
import pytest

from cli_support import temps, wait_for

from conftest import GPUMUX, run_gpumux

REPO = Path(__file__).resolve().parents[2]
FLEET = str(REPO / "scenarios" / "cluster" / "fleet-1024.yaml")  # its pods simulate for minutes

SIGNALS = [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)]

# Two tenants on at most two H100s: the search takes well under a second.
PLAN = """\
name: two-tenants
duration: 100ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}]
  max_gpus: 2
tenants:
  - name: t0
    workload:
      arrivals: {process: poisson, rate: 10/s}
      request: {kernels: [{name: k, duration: 1ms}]}
  - name: t1
    workload:
      arrivals: {process: poisson, rate: 20/s}
      request: {kernels: [{name: k, duration: 2ms}]}
"""


def environment(stall=None):
    env = dict(os.environ)
    env.pop("GPUMUX_TEST_FAULT", None)
    if stall is not None:
        env["GPUMUX_TEST_FAULT"] = f"stall:{stall}"
    return env


def folder_contents(folder):
    """{relative path: bytes} of every file under FOLDER."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture()
def plan_yaml(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    path = work / "plan.yaml"
    path.write_text(PLAN)
    return path


def plan_uninterrupted(plan_yaml, out):
    run_gpumux("plan", plan_yaml, "-o", out, "--quiet", timeout=60, env=environment(), check=0)
    return folder_contents(out)


def start_plan_write(plan_yaml, out, stall):
    """plan -o OUT with each file held STALL seconds once written; returns the process once its
    temporary folder OUT.tmp.PID holds a file (the search is over, the write has begun)."""
    proc = subprocess.Popen([GPUMUX, "plan", str(plan_yaml), "-o", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment(stall))
    temp = out.parent / f"{out.name}.tmp.{proc.pid}"

    def writing():
        # A file in it: the folder of that name that -o's check probes before the search
        # (mkdir, rmdir) is empty.
        try:
            return any(temp.iterdir())
        except OSError:
            return False

    assert wait_for(lambda: writing() or proc.poll() is not None, timeout=30)
    assert proc.poll() is None, proc.communicate()
    return proc


@pytest.mark.parametrize("signum,code", SIGNALS)
def test_a_signal_while_plan_writes_lets_the_folder_finish(tmp_path, plan_yaml, signum, code):
    """Was exit 0: the signal was caught and forgotten once the search was over."""
    expected = plan_uninterrupted(plan_yaml, tmp_path / "reference")
    out = plan_yaml.parent / "deploy"
    proc = start_plan_write(plan_yaml, out, stall=3)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    name = signal.Signals(signum).name
    assert err == f"gpumux: plan: {name} after the search finished; {out} is complete\n"
    assert folder_contents(out) == expected  # the whole plan, as an uninterrupted one writes it
    assert temps(plan_yaml.parent) == []


@pytest.mark.parametrize("earlier_plan", [False, True])
@pytest.mark.parametrize("first,second,code", [(signal.SIGTERM, signal.SIGTERM, 143),
                                               (signal.SIGINT, signal.SIGHUP, 129)])
def test_a_second_signal_while_plan_writes_leaves_no_temporary_folder(
        tmp_path, plan_yaml, earlier_plan, first, second, code):
    """Was DIR.tmp.PID left beside DIR: the second signal's handler removed a temporary file
    only. DIR is absent, or the earlier plan's folder unchanged."""
    out = plan_yaml.parent / "deploy"
    before = plan_uninterrupted(plan_yaml, out) if earlier_plan else None
    proc = start_plan_write(plan_yaml, out, stall=5)
    proc.send_signal(first)
    assert wait_for(lambda: proc.poll() is not None, timeout=0.5) is False  # it lets the write go on
    proc.send_signal(second)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert err == "gpumux: second signal: stopped without writing results\n"
    assert temps(plan_yaml.parent) == []
    assert sorted(p.name for p in plan_yaml.parent.iterdir()) == (
        ["deploy", "plan.yaml"] if earlier_plan else ["plan.yaml"])
    if earlier_plan:
        assert folder_contents(out) == before


def parent_of(pid):
    """The parent process id of PID, or None when PID is gone or a zombie (exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
    return None if fields[0] in ("Z", "X") else int(fields[1])


def descendants(root):
    """The live processes under ROOT (children, their children, ...)."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parent = parent_of(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def stop_all(proc, started):
    """After a test, whatever it asserted: kills the processes STARTED that still run (on a
    binary without the fix they would simulate on) and PROC."""
    for pid in started:
        if parent_of(pid) is not None:
            os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


def test_killing_a_split_cluster_run_kills_its_workers(tmp_path):
    """--workers 2, gpumux killed with SIGKILL (no handler runs): its two worker processes used
    to simulate on alone for minutes; now the kernel stops them with it (PR_SET_PDEATHSIG)."""
    out = tmp_path / "out.h5"
    proc = subprocess.Popen([GPUMUX, "run", FLEET, "--workers", "2", "-o", str(out), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment())
    workers = []
    try:
        # The replay ends in about a second, then the two workers simulate the pods' GPUs.
        assert wait_for(lambda: len(descendants(proc.pid)) == 2 or proc.poll() is not None, 60)
        assert proc.poll() is None, proc.communicate()
        workers = descendants(proc.pid)
        proc.kill()
        proc.wait(timeout=30)
        assert wait_for(lambda: all(parent_of(w) is None for w in workers), timeout=5), \
            [(w, parent_of(w)) for w in workers]
        assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file
    finally:
        stop_all(proc, workers)


@pytest.mark.parametrize("signum,code", SIGNALS)
def test_a_signal_while_the_workload_pods_simulate_writes_the_replay_interrupted(
        tmp_path, signum, code):
    """After the replay (a day of 3,296 pods, about a second), while the two worker processes
    simulate the pods' GPUs: the replay is whole, so -o gets it marked status=interrupted, in
    one line on stderr (it was "nothing written")."""
    out = tmp_path / "out.h5"
    proc = subprocess.Popen([GPUMUX, "run", FLEET, "--workers", "2", "-o", str(out), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=environment())
    workers = []
    try:
        assert wait_for(lambda: len(descendants(proc.pid)) == 2 or proc.poll() is not None, 60)
        assert proc.poll() is None, proc.communicate()
        workers = descendants(proc.pid)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        name = signal.Signals(signum).name
        assert err == (f"gpumux: interrupted ({name}) while simulating the workload pods: the "
                       "replay is complete; results marked status=interrupted\n")
        assert all(parent_of(w) is None for w in workers)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out.h5"]  # no temporary file
        with h5py.File(out, "r") as f:
            assert f.attrs["status"] == "interrupted"
            summary = json.loads(f["summary"][()])
            assert summary["status"] == "interrupted"
            assert len(f["cluster/pods"]) == summary["pods"] == 3296  # the replay, whole
        report = run_gpumux("report", out, timeout=60, env=environment())
        assert report.returncode == 0, report.stderr
        assert 'status: "interrupted"' in report.stdout
    finally:
        stop_all(proc, workers)
