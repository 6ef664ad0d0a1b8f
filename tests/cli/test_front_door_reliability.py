"""Issue 36's front-door reproducers, each as the user or a broken pipeline met it: `inspect
--seed`, `plan -o` (a name too long, all-or-nothing folders, the flag an error names), `report`
and `plot` (FIFO inputs, refused targets, a table declaring more rows than its file holds), the
cluster path's signals and checks before work, an unknown command. Each is one line on stderr
and exit 2 (or 128 + signal), never a traceback, a hang or half-written output. Drives
$GPUMUX_BIN."""
import errno
import os
import signal
import subprocess
import time
from pathlib import Path

import h5py
import pytest

from cli_support import temps, wait_for

from conftest import GPUMUX, run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")
FLEET = str(REPO / "scenarios" / "cluster" / "fleet-1024.yaml")
FLEET_10240 = str(REPO / "scenarios" / "cluster" / "fleet-10240.yaml")
GANG = str(REPO / "scenarios" / "cluster" / "gang-two-nodes.yaml")


def one_line_refusal(proc, *needles):
    """Exit 2 with one line on stderr, no traceback, naming every needle."""
    assert proc.returncode == 2, proc.stderr + proc.stdout
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("gpumux: ") and "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


# --- inspect --seed ----------------------------------------------------------------------------

def test_inspect_takes_seed_as_run_does():
    """Was exit 3 `boost::bad_any_cast` (declared uint64_t, read as a string)."""
    proc = gpumux("inspect", QUICKSTART, "--seed", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("{") or proc.stdout.startswith("[")
    one_line_refusal(gpumux("inspect", QUICKSTART, "--seed", "-1"), "--seed")


# --- unknown command -----------------------------------------------------------------------------

def test_unknown_command_is_one_line_with_a_hint():
    """Was the whole 25-line usage."""
    proc = gpumux("runn", QUICKSTART)
    one_line_refusal(proc)
    assert proc.stderr == ("gpumux: unknown command 'runn' (did you mean 'run'?); "
                           "see gpumux --help\n")
    proc = gpumux("frobnicate")
    one_line_refusal(proc, "unknown command 'frobnicate'", "see gpumux --help")
    assert "did you mean" not in proc.stderr


# --- plan -o and the flags' names ----------------------------------------------------------------

PLAN = """\
name: small-plan
seed: 3
duration: 2s
warmup: 200ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}]
  max_gpus: 2
  machines: [a3-highgpu-1g, a3-highgpu-2g]
tenants:
  - name: embed
    memory: 4GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request:
        kernels:
          - {name: enc, duration: 300us, sm_fraction: 0.5, memory_bound: 0.5}
    slo: {p99: 20ms}
"""


@pytest.fixture
def plan_yaml(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(PLAN)
    return str(path)


def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*"))


def test_plan_output_name_too_long_is_refused_before_planning(tmp_path, plan_yaml):
    """Was exit 3 `filesystem error: File name too long` (a folder name) after the search."""
    deep = tmp_path / ("x" * 200) / ("y" * 200)
    deep.mkdir(parents=True)
    for name in ("d" * 300, "b" * 300 + ".yaml"):
        # Relative and under a long folder: the message shows the path's end, so the reason
        # survives the one-line cut at 400 characters.
        for target, cwd in ((name, tmp_path), (str(deep / name), None)):
            proc = gpumux("plan", plan_yaml, "-o", target, cwd=cwd)
            one_line_refusal(proc, "File name too long")
            assert proc.stdout == ""  # refused before planning: no table
    assert listing(tmp_path) == ["plan.yaml", "x" * 200, "x" * 200 + "/" + "y" * 200]


def test_plan_max_gpus_error_names_the_flag(plan_yaml):
    """Was reported as `--set plan.max_gpus` though no --set was given."""
    proc = gpumux("plan", plan_yaml, "--max-gpus", "0")
    one_line_refusal(proc, "--max-gpus")
    assert "--set" not in proc.stderr and "plan.max_gpus" not in proc.stderr
    # A --set the user wrote is still named as written.
    proc = gpumux("plan", plan_yaml, "--set", "plan.max_gpus=0")
    one_line_refusal(proc, "--set plan.max_gpus")


def test_replan_replaces_the_folder_whole(tmp_path, plan_yaml):
    """A re-plan into the same DIR kept the old plan's node-pools.sh and Pod files."""
    out = tmp_path / "deploy"
    proc = gpumux("plan", plan_yaml, "--platform", "gke", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    first = listing(out)
    assert "node-pools.sh" in first and any(p.startswith("pods/") for p in first)
    bare = tmp_path / "bare.yaml"  # the same tenants, GPUs bought one by one
    bare.write_text(PLAN.replace("  machines: [a3-highgpu-1g, a3-highgpu-2g]\n", ""))
    proc = gpumux("plan", str(bare), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert listing(out) == ["best.yaml"]
    assert "bare.yaml" in (out / "best.yaml").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bare.yaml", "deploy", "plan.yaml"]


def test_plan_folder_with_foreign_entries_is_refused_before_planning(tmp_path, plan_yaml):
    """`DIR/pods` a file (or anything plan does not write) left part of DIR written."""
    out = tmp_path / "deploy"
    out.mkdir()
    (out / "pods").write_text("not a folder\n")
    proc = gpumux("plan", plan_yaml, "--platform", "gke", "-o", str(out))
    one_line_refusal(proc, "holds pods", "did not write")
    assert proc.stdout == ""
    assert listing(out) == ["pods"] and (out / "pods").read_text() == "not a folder\n"
    (out / "pods").unlink()
    (out / "notes.txt").write_text("mine\n")
    one_line_refusal(gpumux("plan", plan_yaml, "-o", str(out)), "holds notes.txt")
    assert listing(out) == ["notes.txt"]
    # A file where the folder should be, and a folder in a missing directory.
    (tmp_path / "file").write_text("x")
    one_line_refusal(gpumux("plan", plan_yaml, "-o", str(tmp_path / "file")), "regular file")
    one_line_refusal(gpumux("plan", plan_yaml, "-o", str(tmp_path / "missing" / "deploy")),
                     "does not exist")


def test_plan_folder_write_failure_leaves_the_old_plan(tmp_path, plan_yaml):
    """ENOSPC while writing: the earlier plan's folder stays as it was, no temporary folder."""
    out = tmp_path / "deploy"
    assert gpumux("plan", plan_yaml, "--platform", "gke", "-o", str(out)).returncode == 0
    before = {p: (out / p).read_bytes() for p in listing(out) if (out / p).is_file()}
    proc = gpumux("plan", plan_yaml, "--platform", "gke", "--quiet", "-o", str(out),
                  extra_env={"GPUMUX_TEST_FAULT": "write:ENOSPC"})
    one_line_refusal(proc, "No space left on device")
    assert {p: (out / p).read_bytes() for p in listing(out) if (out / p).is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deploy", "plan.yaml"]


def test_two_concurrent_plans_into_one_folder_do_not_mix(tmp_path, plan_yaml):
    """Two plans writing the same DIR at once mixed their files. Each now fills its own
    DIR.tmp.PID and renames it into place: DIR is one plan's folder, whole."""
    gke, bare = tmp_path / "gke-ref", tmp_path / "bare-ref"
    assert gpumux("plan", plan_yaml, "--platform", "gke", "-o", str(gke)).returncode == 0
    bare_yaml = tmp_path / "bare.yaml"  # the same tenants, GPUs bought one by one
    bare_yaml.write_text(PLAN.replace("  machines: [a3-highgpu-1g, a3-highgpu-2g]\n", ""))
    assert gpumux("plan", str(bare_yaml), "-o", str(bare)).returncode == 0
    whole = [{p: (ref / p).read_bytes() for p in listing(ref) if (ref / p).is_file()}
             for ref in (gke, bare)]
    out = tmp_path / "deploy"
    env = dict(os.environ, GPUMUX_TEST_FAULT="stall:0.4")  # each file held 0.4 s once written
    first = subprocess.Popen([GPUMUX, "plan", plan_yaml, "--platform", "gke", "--quiet", "-o",
                              str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    # The second starts once the first is writing (a file in its DIR.tmp.PID: the folder of that
    # name that the check probes before the search is empty), so their writes overlap.
    def writing():
        try:
            return any(any((tmp_path / name).iterdir()) for name in temps(tmp_path))
        except OSError:
            return False

    assert wait_for(lambda: writing() or first.poll() is not None)
    assert first.poll() is None
    second = gpumux("plan", bare_yaml, "--quiet", "-o", out, env=env, timeout=120)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, err + second.stderr
    written = {p: (out / p).read_bytes() for p in listing(out) if (out / p).is_file()}
    assert written in whole, sorted(written)
    assert temps(tmp_path) == []


# --- report and plot: inputs and targets --------------------------------------------------------

@pytest.fixture(scope="module")
def result_h5(tmp_path_factory):
    folder = tmp_path_factory.mktemp("result")
    out = folder / "out.h5"
    proc = gpumux("run", QUICKSTART, "-o", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    return out


def test_report_and_plot_refuse_a_fifo_input(tmp_path):
    """They blocked forever in open()."""
    fifo = tmp_path / "in.h5"
    os.mkfifo(fifo)
    for args in (["report", str(fifo)], ["report", str(fifo), "--html", str(tmp_path / "r.html")],
                 ["plot", str(fifo), "-o", str(tmp_path / "p.png")]):
        one_line_refusal(gpumux(*args, timeout=20), "FIFO")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.h5"]


def test_report_and_plot_check_their_target_before_python(tmp_path, result_h5):
    """A directory, a FIFO, a missing folder, a long name or a read-only mount was a Python
    traceback, exit 1."""
    folder = tmp_path / "folder"
    (folder / "d.html").mkdir(parents=True)
    (folder / "d.png").mkdir()
    os.mkfifo(folder / "f.html")
    os.mkfifo(folder / "f.png")
    cases = [("d", "a directory"), ("f", "FIFO"), ("missing/x", "does not exist"),
             ("n" * 300, "File name too long")]
    for stem, why in cases:  # (relative names: the message keeps its reason within 400 chars)
        proc = gpumux("report", str(result_h5), "--html", f"{stem}.html", timeout=60, cwd=folder)
        one_line_refusal(proc, "--html", why)
        proc = gpumux("plot", str(result_h5), "-o", f"{stem}.png", timeout=60, cwd=folder)
        one_line_refusal(proc, "-o", why)
    # A read-only mount (the probe's errno injected: root writes anywhere else here).
    readonly = {"GPUMUX_TEST_FAULT": "probe:EROFS"}
    one_line_refusal(gpumux("report", str(result_h5), "--html", "r.html", extra_env=readonly,
                            timeout=60, cwd=folder), "--html r.html", "Read-only file system")
    one_line_refusal(gpumux("plot", str(result_h5), "-o", "p.png", extra_env=readonly, timeout=60,
                            cwd=folder), "-o p.png", "Read-only file system")
    assert (folder / "d.html").is_dir() and (folder / "f.png").is_fifo()
    assert sorted(p.name for p in folder.iterdir()) == ["d.html", "d.png", "f.html", "f.png"]


def test_figures_and_pages_are_written_atomically(tmp_path):
    """Python wrote r.html.tmp beside the page and the PNG in place: ENOSPC left a temporary
    file or a 0-byte figure, and the error was a traceback."""
    from gpumux import plot

    target = tmp_path / "fig.png"
    target.write_bytes(b"old figure")

    def fails(f):
        f.write(b"half a fig")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(plot.PlotError, match="cannot write .*fig.png: No space left on device"):
        plot.write_atomically(target, fails)
    assert target.read_bytes() == b"old figure" and temps(tmp_path) == []
    plot.write_atomically(target, lambda f: f.write(b"new figure"))
    assert target.read_bytes() == b"new figure" and temps(tmp_path) == []
    # A symlink is followed: the file it points to is replaced, the link stays.
    link = tmp_path / "link.png"
    link.symlink_to(target)
    plot.write_atomically(link, lambda f: f.write(b"via link"))
    assert link.is_symlink() and target.read_bytes() == b"via link"


def test_a_table_declaring_more_rows_than_the_file_holds_is_refused(tmp_path, result_h5):
    """2^40 declared rows in a small file: report and plot read fill values for minutes."""
    bogus = tmp_path / "bogus.h5"
    bogus.write_bytes(result_h5.read_bytes())
    with h5py.File(bogus, "a") as f:
        f.create_dataset("huge", shape=(2**40,), maxshape=(None,), dtype="i8", chunks=(4096,))
    assert bogus.stat().st_size < 10 << 20
    started = time.monotonic()
    one_line_refusal(gpumux("report", str(bogus), timeout=60), "/huge", "more than")
    one_line_refusal(gpumux("plot", str(bogus), "-o", str(tmp_path / "p.png"), timeout=60),
                     "/huge", "more than")
    assert time.monotonic() - started < 60
    assert not (tmp_path / "p.png").exists()
    # The result file itself still reports.
    assert gpumux("report", str(result_h5)).returncode == 0


def test_an_emptied_tenant_names_table_is_refused(tmp_path, result_h5):
    """report printed a full table (exit 0) and plot raised a pandas ValueError."""
    emptied = tmp_path / "emptied.h5"
    emptied.write_bytes(result_h5.read_bytes())
    with h5py.File(emptied, "a") as f:
        del f["tenant_names"]
        f.create_dataset("tenant_names", shape=(0,), maxshape=(None,),
                         dtype=h5py.string_dtype())
    for args in (["report", str(emptied)], ["plot", str(emptied), "-o", str(tmp_path / "p.png")]):
        one_line_refusal(gpumux(*args, timeout=60), "inconsistent tables",
                         "/tenant_names 0 names")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emptied.h5"]


# --- the cluster path ----------------------------------------------------------------------------

def test_cluster_csv_is_refused_before_the_replay(tmp_path):
    """The replay ran and x.h5 was written before --format csv was refused."""
    out = tmp_path / "x.h5"
    proc = gpumux("run", GANG, "--format", "csv", "-o", str(out))
    one_line_refusal(proc, "--format csv")
    assert not out.exists() and temps(tmp_path) == []


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130),
                                         (signal.SIGHUP, 129)])
def test_signal_during_a_cluster_run(tmp_path, signum, code):
    """The cluster path ran before the handlers were installed: the signal killed it silently.
    Stopped while loading or replaying, it writes nothing (a replay stopped midway has no
    result); once the replay is over (how far 0.5 s gets depends on the machine's load), it
    writes the replay marked interrupted (test_signals_cluster.py stops it there for sure)."""
    out = tmp_path / "out.h5"
    env = dict(os.environ)
    env.pop("GPUMUX_TEST_FAULT", None)
    proc = subprocess.Popen([GPUMUX, "run", FLEET_10240, "-o", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(0.5)
    assert proc.poll() is None  # 10,240 GPUs: still loading, replaying or simulating the pods
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    name = signal.Signals(signum).name
    if "nothing written" in err:
        assert err.startswith(f"gpumux: interrupted ({name}): the cluster replay stopped")
        assert not out.exists()
    else:
        assert err == (f"gpumux: interrupted ({name}) while simulating the workload pods: the "
                       "replay is complete; results marked status=interrupted\n")
        with h5py.File(out, "r") as f:
            assert f.attrs["status"] == "interrupted"
    assert err.count("\n") == 1 and temps(tmp_path) == []


def test_sigterm_to_a_split_cluster_run_stops_its_workers(tmp_path):
    """--workers 2: SIGTERM to gpumux alone (not its process group) is passed on to the worker
    processes simulating the workload pods, so the run stops instead of simulating the day."""
    out = tmp_path / "out.h5"
    env = dict(os.environ)
    env.pop("GPUMUX_TEST_FAULT", None)
    proc = subprocess.Popen([GPUMUX, "run", FLEET, "--workers", "2", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(4.0)  # past the replay: the workers are simulating
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    # The replay was whole: written, marked interrupted (test_signals_cluster.py).
    assert "interrupted (SIGTERM) while simulating the workload pods" in err
    assert out.exists() and temps(tmp_path) == []


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130),
                                         (signal.SIGHUP, 129)])
def test_signal_during_plan_writes_nothing(tmp_path, signum, code):
    """plan keeps its handlers: the search stops, -o DIR is neither created nor half-written."""
    out = tmp_path / "deploy"
    node = str(REPO / "scenarios" / "plan" / "plan-h100-node.yaml")
    env = dict(os.environ)
    env.pop("GPUMUX_TEST_FAULT", None)
    proc = subprocess.Popen([GPUMUX, "plan", node, "-o", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1.5)  # the shipped node's search takes minutes
    assert proc.poll() is None
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    assert f"interrupted ({signal.Signals(signum).name})" in err and "nothing written" in err
    assert list(tmp_path.iterdir()) == []
