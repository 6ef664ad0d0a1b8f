"""The cluster replay's device simulation on Dask (docs/cluster.md, "Workload pods on Dask").

The replay runs once, in the caller's process; its workload pods' device simulation is split
into node groups balanced by estimated kernel launches (``ClusterReplay.plan``), and each group
is one Dask task: ``shard_task(request, placement, nodes)``, a pure function of the scenario
(text or path, overrides, source name), the placement as bytes and the group's node indices.
No C++ state is pickled. Each task answers its pods' numbers as bytes, gathered as they arrive
into the one result, bit-identical to the single-process run (every pod draws from random
streams named after it). A task that raises, or whose worker is lost, is run again by Dask
(``RETRIES``; a lost worker's tasks are rescheduled by the scheduler), with the same answer.

``run`` serves ``gpumux.run(scenario, client=...)``; ``main`` is the CLI's driver
(``gpumux run SCENARIO --dask ADDRESS``): the C++ CLI replays, writes the request, the groups
and the placement on this process's stdin and reads each group's numbers back from its stdout
(framing below), so the CLI's output is its own, whichever way the groups ran.
"""
from __future__ import annotations

import heapq
import importlib.util
import json
import os
import sys
import time

# Tries of a task that raises beyond the first (a lost worker's task is rescheduled by the
# scheduler itself, up to its `distributed.scheduler.allowed-failures`, default 3).
RETRIES = 2
# Tasks per Dask worker when the caller does not say: a few each, so a slow or lost worker
# leaves little behind and the balance does not rest on one task per worker.
TASKS_PER_WORKER = 4
# Seconds to reach a scheduler before the CLI gives up (one line, exit 2).
CONNECT_TIMEOUT_S = 10


def shard_task(request, placement, nodes):
    """One node group's workload pods simulated (a Dask task; pure). Returns (stats bytes,
    {"wall_s", "cpu_s" (this thread's), "peak_rss_bytes" (the worker process's peak so far),
    "worker" (its address)})."""
    import resource
    from gpumux import _gpumux  # the worker imports the package on first use
    wall = time.perf_counter()
    cpu = time.thread_time()
    stats = _gpumux.simulate_cluster_nodes(*request, placement, list(nodes))
    times = {"wall_s": time.perf_counter() - wall, "cpu_s": time.thread_time() - cpu,
             "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
             "worker": _worker_address()}
    return stats, times


def _worker_address() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return ""


def worker_count(client) -> int:
    """Workers the scheduler knows now (at least 1)."""
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # a client-like object without scheduler_info
        return 1


def plan_shards(replay, shards, workers: int) -> dict:
    """The replay's node groups: SHARDS of them (default TASKS_PER_WORKER per worker)."""
    if shards is None:
        shards = TASKS_PER_WORKER * workers
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= 1 << 20:
        raise ValueError(f"shards must be a whole number in 1..{1 << 20}, not {shards!r}")
    return replay.plan(shards)


def simulate_groups(client, request, placement: bytes, groups, on_result) -> None:
    """Each group of nodes as a Dask task; on_result(index, stats, times) as each task's answer
    arrives (in completion order; the result does not depend on it)."""
    from distributed import as_completed
    if not groups:
        return
    # The placement goes to every worker once, not once per task (a 33,000-pod fleet: ~2 MB).
    # hash=False: a key of its own for each run. With the default content-hash key, a second run
    # of the same placement on the same client reused the key while the first run's future was
    # being released, and the scheduler's broadcast raised KeyError on the forgotten key (seen
    # once in CI, 2026-12-07, test_cluster_dask's retry test right after another run).
    shared = client.scatter(placement, broadcast=True, hash=False)
    task = shard_task  # looked up now: tests substitute a failing wrapper
    futures = {}
    for index, nodes in enumerate(groups):
        future = client.submit(task, request, shared, list(nodes), pure=False, retries=RETRIES)
        futures[future] = index
    for future, answer in as_completed(list(futures), with_results=True):
        stats, times = answer
        on_result(futures[future], stats, times)
        future.release()


def critical_path_s(replay_s: float, task_s, workers: int) -> float:
    """Wall time of the split run on WORKERS workers: the replay, then the tasks dealt Longest
    Processing Time first to the least-loaded worker (Graham 1969), the longest worker's sum.
    With as many workers as tasks it is the replay plus the longest task."""
    loads = [0.0] * max(1, int(workers))
    for seconds in sorted(task_s, reverse=True):
        heapq.heapreplace(loads, loads[0] + seconds)
    return replay_s + max(loads)


def run(client, text, is_path, source, overrides, shards=None):
    """``gpumux.run(cluster_scenario, client=...)``: a ClusterResult with ``tasks`` (one row per
    task) and ``critical_path_s``."""
    import pandas as pd
    from gpumux import _gpumux
    from .cluster import ClusterResult
    if is_path:  # ship the document, not the path; relative files resolve as for the file
        with open(text, encoding="utf-8") as f:
            text, is_path, source = f.read(), False, os.path.abspath(text)
    request = (text, is_path, list(overrides), source)
    replay = _gpumux.cluster_replay(*request)
    workers = worker_count(client)
    plan = plan_shards(replay, shards, workers)
    rows = [None] * len(plan["nodes"])

    def gathered(index, stats, times):
        pods = replay.apply(stats)
        rows[index] = {"task": index, "nodes": len(plan["nodes"][index]), "pods": pods,
                       "estimated_launches": plan["launches"][index], **times}

    simulate_groups(client, request, replay.placement(), plan["nodes"], gathered)
    tasks = pd.DataFrame(rows, columns=["task", "nodes", "pods", "estimated_launches", "wall_s",
                                        "cpu_s", "peak_rss_bytes", "worker"])
    result = ClusterResult(replay.finish())
    result.tasks = tasks
    result.replay_s = replay.replay_s
    result.critical_path_s = critical_path_s(replay.replay_s, list(tasks["wall_s"]),
                                             len(tasks) or 1)
    return result


# ---------------------------------------------------------------------------------------------
# The CLI's driver: python3 -m gpumux._dask_cluster ADDRESS
#   stdout first: {"workers": W} once the scheduler is reached (the CLI then replays and plans
#           4 tasks per worker), or {"error": "one line", "exit": 2}.
#   stdin:  one JSON line {"request": [scenario, is_path, overrides, source_name],
#           "groups": [[node, ...], ...], "placement_bytes": N}, then N bytes of placement.
#   stdout: per task as it arrives, a JSON line {"task": i, "bytes": M, "wall_s", "cpu_s",
#           "peak_rss_bytes", "worker"} then M bytes of stats; at the end {"done": true}; or
#           {"error": "one line", "exit": 2 | 3} (2: bad input, e.g. no scheduler there).
# ---------------------------------------------------------------------------------------------
def _connect(address: str):
    """A Client for ADDRESS: tcp://HOST:PORT (any scheduler address), `local:N` (a LocalCluster
    of N one-thread worker processes here), or `auto` ($DASK_SCHEDULER_ADDRESS). ValueError
    with one line when there is none."""
    import logging
    from distributed import Client, LocalCluster
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    # asyncio logs a future dropped with its exception unread ("Future exception was never
    # retrieved ... TimeoutError") when the client's connection times out while closing on a
    # loaded machine: the answers were already framed, so it is noise that broke `--quiet`'s
    # empty stderr (seen once in tests/cli/test_cluster_dask.py at load 9-15, 2026-12-07).
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    shown = address
    if address == "auto":
        address = os.environ.get("DASK_SCHEDULER_ADDRESS", "")
        if not address:
            raise ValueError("--dask auto: DASK_SCHEDULER_ADDRESS is not set")
        shown = f"auto ({address})"
    if address.startswith("local:"):
        count = address[len("local:"):]
        if not count.isdigit() or not 1 <= int(count) <= 1024:
            raise ValueError(f"--dask {shown}: local:N needs N in 1..1024")
        cluster = LocalCluster(n_workers=int(count), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster)
    # A port no TCP address has (0, 99999) waited out the connect timeout (10 s) before saying
    # so (found fuzzing --dask, 2026-12-07).
    port = address.rsplit(":", 1)[-1] if ":" in address.split("://")[-1] else ""
    if port.isdigit() and not 1 <= int(port) <= 65535:
        raise ValueError(f"--dask {shown}: port {port} is not in 1..65535")
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, ValueError, TypeError) as error:
        text = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ValueError(f"--dask {shown}: cannot reach a Dask scheduler there ({text})") from None


def _read_request(stream):
    header = json.loads(stream.readline())
    size = int(header["placement_bytes"])
    placement = stream.read(size)
    if len(placement) != size:
        raise RuntimeError("dask driver: short placement on stdin")
    return tuple(header["request"]), header["groups"], placement


def _frame(out, header: dict, payload: bytes = b"") -> None:
    out.write(json.dumps(header).encode() + b"\n")
    out.write(payload)
    out.flush()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python3 -m gpumux._dask_cluster ADDRESS < REQUEST (the CLI's --dask "
              "driver)", file=sys.stderr)
        return 2
    # The framing gets a descriptor of its own; fd 1 (inherited by local workers, written by
    # anything that prints) becomes stderr, so no stray print can break a frame.
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        return _drive(argv[0], sys.stdin.buffer, out)
    except KeyboardInterrupt:  # the terminal's Ctrl-C reaches this process too; the CLI reports
        return 130
    except BrokenPipeError:  # the CLI stopped reading (a signal): nothing left to tell it
        return 130


def _drive(address: str, stream, out) -> int:
    if importlib.util.find_spec("distributed") is None:
        _frame(out, {"error": f"--dask: needs dask.distributed, which {sys.executable} does not "
                              "have: install it (Debian: apt-get install python3-distributed, "
                              "or scripts/install-deps.sh), or set GPUMUX_PYTHON", "exit": 2})
        return 2
    try:
        client = _connect(address)
    except ValueError as error:
        _frame(out, {"error": str(error), "exit": 2})
        return 2
    from gpumux import ScenarioError
    try:
        _frame(out, {"workers": worker_count(client)})
        request, groups, placement = _read_request(stream)

        def answered(index, stats, times):
            _frame(out, {"task": index, "bytes": len(stats), **times}, stats)

        try:
            simulate_groups(client, request, placement, groups, answered)
        except ScenarioError as error:
            _frame(out, {"error": str(error), "exit": 2})
            return 2
        _frame(out, {"done": True})
    finally:
        cluster = getattr(client, "cluster", None) if address.startswith("local:") else None
        client.close()
        if cluster is not None:
            cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
