"""The cluster replay's device simulation on Dask (issue 37; docs/cluster.md, "Workload pods on
Dask"): gpumux.run(cluster, client=) and `gpumux run --dask ADDRESS` run the replay once and its
workload pods' node groups as Dask tasks, and give the single-process run's numbers pod for pod;
a task that fails once, or whose worker is killed, is run again with the same answer; a scenario
without a cluster, or no scheduler at the address, is one line."""
import json
import os
from pathlib import Path

import pytest

import gpumux
from gpumux import _dask_cluster

from conftest import run_gpumux

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt): Dask clusters

distributed = pytest.importorskip("distributed")  # python3-distributed (scripts/install-deps.sh)

REPO = Path(__file__).resolve().parents[2]
FLEET = str(REPO / "scenarios" / "cluster" / "fleet-16.yaml")  # 16 GPUs, four pools, 24 pods
# Two time-sliced pods, one with a p99 SLO: left inconclusive by a short window.
TIME_SLICED = str(REPO / "scenarios" / "cluster" / "inference-pods-time-sliced.yaml")


@pytest.fixture(scope="module")
def alone():
    return gpumux.run(FLEET)


@pytest.fixture(scope="module")
def threads():
    """One in-process worker with two threads, reachable over TCP (the CLI connects to it)."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  protocol="tcp", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def assert_same(a, b):
    assert a.summary == b.summary
    assert a.pods.equals(b.pods)
    assert a.timeseries.equals(b.timeseries)
    assert a._latency_series == b._latency_series  # every pod's series, byte for byte


# Percentiles no column holds: any q comes from the pods' latency series (sketches here).
OTHER_QS = [0.1, 0.75, 0.95, 0.995, 0.9999]


def assert_same_percentiles(split, alone):
    """Every pod's percentiles at the reported and at other q, and merged over each class and
    the fleet, equal the single-process run's; a pod's series gives its columns."""
    simulated = alone.pods.index[alone.pods["workload_device"] != ""]
    for pod in simulated:
        mine = split.latency_quantiles([0.5, 0.9, 0.99, 0.999, 1.0] + OTHER_QS, pods=pod)
        assert mine == alone.latency_quantiles([0.5, 0.9, 0.99, 0.999, 1.0] + OTHER_QS, pods=pod)
        row = split.pods.loc[pod]
        assert mine["count"] == row["workload_completed"] > 0 and not mine["exact"]
        assert [mine[q] for q in (0.5, 0.9, 0.99, 0.999, 1.0)] == [
            row["latency_p50_ns"], row["latency_p90_ns"], row["latency_p99_ns"],
            row["latency_p999_ns"], row["latency_max_ns"]]
    for name in sorted(set(alone.pods["class"])) + [None]:
        chosen = None if name is None else (alone.pods["class"] == name)
        merged = split.latency_quantiles(OTHER_QS, pods=chosen)
        assert merged == alone.latency_quantiles(OTHER_QS, pods=chosen)
        values = [merged[q] for q in OTHER_QS]
        assert values == sorted(values)
    fleet = split.latency_quantiles(0.5)
    assert fleet["count"] == alone.pods["workload_completed"].sum()


def test_a_local_cluster_gives_the_single_process_numbers_pod_for_pod(alone, threads):
    simulated = alone.pods[alone.pods["workload_device"] != ""]
    assert len(simulated) == 24 and (simulated["workload_completed"] > 100).all()
    for shards in (3, 8, 50):  # fewer groups than nodes, one per node, more asked than nodes
        split = gpumux.run(FLEET, client=threads, shards=shards)
        assert_same(split, alone)
        assert_same_percentiles(split, alone)
        tasks = split.tasks
        assert len(tasks) == min(shards, 8)
        assert tasks["nodes"].sum() == 8 and tasks["pods"].sum() == 24
        assert (tasks["cpu_s"] > 0).all() and (tasks["wall_s"] > 0).all()
        # The critical path: the replay, then the longest task.
        assert split.critical_path_s == pytest.approx(split.replay_s + tasks["wall_s"].max())
    assert alone.tasks is None


def test_seed_and_overrides_reach_the_tasks(threads):
    args = dict(overrides={"cluster.pods.1.workload.workload.arrivals.rate": "150/s"}, seed=9)
    split = gpumux.run(FLEET, client=threads, **args)
    assert_same(split, gpumux.run(FLEET, **args))
    assert not split.pods.equals(gpumux.run(FLEET, client=threads).pods)


def test_a_task_that_raises_once_is_run_again_with_the_same_result(alone, threads, tmp_path,
                                                                    monkeypatch):
    def flaky(request, placement, nodes):
        # Every task fails on its first try (a marker file per task: the function travels
        # pickled, so it keeps no state of its own).
        try:
            os.close(os.open(str(tmp_path / "-".join(map(str, nodes))),
                             os.O_CREAT | os.O_EXCL))
            raise RuntimeError("injected failure")
        except FileExistsError:
            return real(request, placement, nodes)

    real = _dask_cluster.shard_task
    monkeypatch.setattr(_dask_cluster, "shard_task", flaky)
    split = gpumux.run(FLEET, client=threads, shards=4)
    assert len(os.listdir(tmp_path)) == 4
    assert_same(split, alone)


def test_a_killed_worker_is_retried_with_the_same_result(alone, tmp_path):
    marker = str(tmp_path / "killed")

    def killer(request, placement, nodes):
        # The first task to start kills its worker process (its nanny starts a new one); the
        # scheduler gives the task to a live worker.
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            os._exit(1)
        except FileExistsError:
            pass
        from gpumux import _dask_cluster as module
        return module.shard_task(request, placement, nodes)

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        real = _dask_cluster.shard_task
        _dask_cluster.shard_task = killer
        try:
            split = gpumux.run(FLEET, client=client, shards=4)
        finally:
            _dask_cluster.shard_task = real
    assert os.path.exists(marker)  # a worker was killed
    assert_same(split, alone)


def test_client_refuses_a_scenario_without_a_cluster(threads):
    quickstart = str(REPO / "scenarios" / "quickstart.yaml")
    with pytest.raises(gpumux.ScenarioError) as error:
        gpumux.run(quickstart, client=threads)
    assert str(error.value) == ("client=: only for a scenario with a `cluster:` section (its "
                                "workload pods run as Dask tasks)")
    with pytest.raises(TypeError):
        gpumux.run(FLEET, client="tcp://nowhere:1")


def cli(*args, env=None):
    return run_gpumux("run", *args, env=env)


def test_the_cli_on_a_scheduler_gives_the_same_output_as_one_process(threads):
    one = cli(FLEET, "--json")
    assert one.returncode == 0, one.stderr
    address = threads.scheduler.address
    split = cli(FLEET, "--json", "--dask", address)
    assert split.returncode == 0, split.stderr
    assert json.loads(split.stdout) == json.loads(one.stdout)
    assert split.stdout == one.stdout
    report = split.stderr.strip().splitlines()
    assert len(report) == 1 and report[0].startswith("gpumux: dask: 4 tasks on 1 workers;")
    assert "critical path (replay + longest task)" in report[0]
    # $DASK_SCHEDULER_ADDRESS with `--dask auto`, and --quiet keeps stderr empty.
    env = dict(os.environ, DASK_SCHEDULER_ADDRESS=address)
    auto = cli(FLEET, "--json", "--quiet", "--dask", "auto", env=env)
    assert auto.returncode == 0 and auto.stdout == one.stdout and auto.stderr == ""


def test_the_output_file_of_a_dask_run_equals_the_single_process_one(threads, tmp_path):
    """`-o` from `--dask`: every dataset and attribute of the file `--workers 1` writes (the file is
    written once the tasks are gathered, from the same result; it is not streamed as they
    arrive)."""
    one, split = tmp_path / "one.h5", tmp_path / "split.h5"
    assert cli(FLEET, "--quiet", "--workers", "1", "-o", str(one)).returncode == 0
    done = cli(FLEET, "--quiet", "--dask", threads.scheduler.address, "--shards", "5",
               "-o", str(split))
    assert done.returncode == 0, done.stderr
    simulated = json.loads(assert_same_file(one, split)["summary"])["workload_pods"]
    assert len(simulated) == 24 and all(p["completed"] > 100 for p in simulated)
    # The percentiles beyond p50 / p99 travel too (from each pod's sketch, in its task).
    for p in simulated:
        assert (p["latency_p50_ns"] <= p["latency_p90_ns"] <= p["latency_p99_ns"]
                <= p["latency_p999_ns"] <= p["latency_max_ns"])
        assert p["latency_mean_ns"] > 0


def assert_same_file(one, other) -> dict:
    """Every dataset (dtype and values) and attribute of the two HDF5 files equal; returns the
    first file's datasets by name."""
    h5py = pytest.importorskip("h5py")
    import numpy as np
    datasets = {}
    with h5py.File(one, "r") as a, h5py.File(other, "r") as b:
        names, others = [], []
        a.visit(names.append)
        b.visit(others.append)
        assert names == others and len(names) >= 3
        assert dict(a.attrs) == dict(b.attrs)
        for name in names:
            assert dict(a[name].attrs) == dict(b[name].attrs), name
            if isinstance(a[name], h5py.Dataset):
                assert a[name].dtype == b[name].dtype, name
                assert np.array_equal(a[name][()], b[name][()]), name
                datasets[name] = a[name][()]
    return datasets


def test_an_inconclusive_slo_asks_for_the_same_longer_run_on_dask(threads, tmp_path):
    """A pod SLO that a short window leaves inconclusive: the tally's "run longer" hint is
    computed from the simulated window, which a run gathering its groups from Dask takes from
    the plan (it once read 0 ns there: `--set cluster.duration=0ns`). The CLI's --json and -o
    file, and client='s summary, equal one process's."""
    short = ("--set", "cluster.duration=1s")
    one_h5, split_h5 = tmp_path / "one.h5", tmp_path / "split.h5"
    one = cli(TIME_SLICED, "--json", "--quiet", *short, "-o", str(one_h5))
    assert one.returncode == 0, one.stderr
    tally = json.loads(one.stdout)["workload_slos"]
    assert tally["inconclusive"] == 1
    hint = "1 inconclusive (run longer: --set cluster.duration="
    assert hint in tally["summary"]
    longer = tally["summary"].split(hint)[1].rstrip(")")
    assert longer.endswith("s") and float(longer[:-1]) > 1  # longer than the 1 s window
    split = cli(TIME_SLICED, "--json", "--quiet", *short, "--dask", threads.scheduler.address,
                "-o", str(split_h5))
    assert split.returncode == 0, split.stderr
    assert split.stdout == one.stdout
    assert_same_file(one_h5, split_h5)
    overrides = {"cluster.duration": "1s"}
    assert (gpumux.run(TIME_SLICED, overrides=overrides, client=threads).summary ==
            gpumux.run(TIME_SLICED, overrides=overrides).summary)


@pytest.mark.parametrize("args, line", [
    (["--dask", "tcp://127.0.0.1:1"], "gpumux: error: --dask tcp://127.0.0.1:1: cannot reach "
     "a Dask scheduler there (Timed out trying to connect to tcp://127.0.0.1:1 after 10 s)"),
    (["--dask", "local:0"], "gpumux: error: --dask local:0: local:N needs N in 1..1024"),
    # No TCP port: refused at once, not after the 10 s connect timeout.
    (["--dask", "tcp://127.0.0.1:99999"],
     "gpumux: error: --dask tcp://127.0.0.1:99999: port 99999 is not in 1..65535"),
    (["--dask", "localhost:0"], "gpumux: error: --dask localhost:0: port 0 is not in 1..65535"),
    (["--dask", "auto"], "gpumux: error: --dask auto: DASK_SCHEDULER_ADDRESS is not set"),
    (["--dask", "local:1", "--workers", "2"],
     "gpumux: error: --dask, --workers: one or the other (Dask workers, or local processes)"),
])
def test_a_bad_dask_address_is_one_line_exit_2(args, line):
    env = {k: v for k, v in os.environ.items() if k != "DASK_SCHEDULER_ADDRESS"}
    out = cli(FLEET, *args, env=env)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [line]
    assert out.stdout == ""


def test_dask_on_a_scenario_without_a_cluster_is_one_line_exit_2():
    out = cli(str(REPO / "scenarios" / "quickstart.yaml"), "--dask", "local:1")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "gpumux: error: --dask: only for a scenario with a `cluster:` section"]


def test_shards_sets_the_cli_s_task_count_and_no_number_moves(threads):
    one = cli(FLEET, "--json", "--workers", "1")
    assert one.returncode == 0, one.stderr
    address = threads.scheduler.address
    # One group, fewer groups than nodes, one per node, more asked than the fleet's 8 nodes.
    for shards in (1, 3, 8, 50):
        split = cli(FLEET, "--json", "--dask", address, "--shards", str(shards))
        assert split.returncode == 0, split.stderr
        assert split.stdout == one.stdout
        # (distributed may log an asyncio timeout of its own on a loaded machine: not ours)
        report = [x for x in split.stderr.splitlines() if x.startswith("gpumux:")]
        assert len(report) == 1
        assert report[0].startswith(f"gpumux: dask: {min(shards, 8)} tasks on 1 workers;")


@pytest.mark.parametrize("value", ["0", "-1", "abc", "2.5", "1e3", "+4", "1048577",
                                   "99999999999"])
def test_a_bad_shard_count_is_one_line_exit_2(value):
    out = cli(FLEET, "--dask", "local:1", f"--shards={value}")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"gpumux: error: --shards: expected a whole number from 1 to 1048576, got '{value}'"]
    assert out.stdout == ""


@pytest.mark.parametrize("scenario, args, line", [
    (FLEET, ["--shards", "4"], "--shards: only with --dask (--workers N splits into N groups)"),
    (FLEET, ["--shards", "4", "--workers", "2"],
     "--shards: only with --dask (--workers N splits into N groups)"),
    (str(REPO / "scenarios" / "quickstart.yaml"), ["--shards", "4"],
     "--shards: only for a scenario with a `cluster:` section"),
    (str(REPO / "scenarios" / "quickstart.yaml"), ["--shards", "0"],
     "--shards: expected a whole number from 1 to 1048576, got '0'"),
])
def test_shards_where_it_means_nothing_is_one_line_exit_2(scenario, args, line):
    out = cli(scenario, *args)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == ["gpumux: error: " + line]
    assert out.stdout == ""
