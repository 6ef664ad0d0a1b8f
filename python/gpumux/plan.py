"""``gpumux.plan``: the cheapest GPU setup that meets every SLO, as DataFrames.

    p = gpumux.plan("scenarios/plan/plan-h100-node.yaml")
    p.setups          # one row per ranked setup: cost_per_hour, gpus, worst_slo_ratio (ranked;
                      # the winner also verified_worst_slo_ratio, its whole-setup run),
                      # duration_s (the window its verdicts needed), ...
    p.gpus            # one row per GPU of each feasible setup: model, family, MIG layout, tenants
    p.nodes           # node platforms (platform="gke", ...): one row per node of each setup
    p.tenants         # the best setup, one row per tenant: device, met, inconclusive,
                      # worst_slo_ratio, samples (behind that ratio), closest (with its interval)
    p.search          # dict: setups, setups_after_bounds, pruned_fraction, simulations,
                      # batches (run one after the other), wall_s
    p.save("best.yaml")   # the winning setup as a scenario; gpumux.run("best.yaml") reproduces it
    print(p)          # the table `gpumux plan` prints

With ``client=`` (a ``dask.distributed.Client``) every batch of simulations the search asks for
runs as ``client.map`` tasks (the scenarios travel as YAML text), like :func:`gpumux.sweep`.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from . import Overrides, ScenarioLike


def _run_text(text: str) -> str:
    """Worker: one unit scenario (YAML text) -> its summary JSON text. Top-level so it pickles
    into dask workers."""
    import gpumux
    return gpumux._gpumux.run(text, False, [], None, "<plan>", None).summary_json()


class PlanResult:
    """What :func:`plan` returns (see the module docstring)."""

    def __init__(self, summary: dict, table: str):
        self.summary = summary
        self.table = table
        self.found: bool = bool(summary["found"])
        self.currency: str = summary["currency"]
        self.search: dict = dict(summary["search"])
        self.best_yaml: str | None = summary.get("best_yaml")
        self.platform: str = summary.get("platform", "bare")
        #: node platforms: the host price table priced with ("gcp us-central1 on-demand USD,
        #: 2026-12-03 (built-in)"); "" on bare.
        self.prices: str = summary.get("prices", "")
        self.ranking: str = summary.get("ranking", "")
        rows, gpu_rows, node_rows = [], [], []
        rank = 0
        for entry in summary["ranked"]:
            feasible = bool(entry["feasible"])
            if feasible:
                rank += 1
            rows.append({
                "rank": rank if feasible else None,
                "setup": entry["setup"],
                "feasible": feasible,
                "cost_per_hour": entry.get("cost_per_hour"),
                "currency": self.currency,
                "gpus": entry.get("gpus"),
                "worst_slo_ratio": entry.get("worst_slo_ratio"),
                "verified_worst_slo_ratio": entry.get("verified_worst_slo_ratio"),
                "duration_s": entry.get("duration_s"),
                "memory_isolated": entry.get("memory_isolated"),
                "fault_isolated": entry.get("fault_isolated"),
                "configuration": "; ".join(g["describe"] for g in entry.get("configuration", [])),
                "reason": entry.get("reason", ""),
            })
            for g in entry.get("configuration", []):
                gpu_rows.append({
                    "setup": entry["setup"], "gpu": g["name"], "model": g["model"],
                    "family": g["family"], "cost_per_hour": g["cost_per_hour"],
                    "replicas": g["replicas"], "mig": ",".join(g["mig"]),
                    "tenants": ";".join(",".join(block) for block in g["tenants"]),
                })
            for n in entry.get("nodes", []):
                node_rows.append({
                    "setup": entry["setup"], "node": n["name"], "machine": n["machine"],
                    "model": n["model"], "cost_per_hour": n["cost_per_hour"],
                    "family": n["family"], "partition": n["partition"],
                    "clients": n["clients"], "gpus": n["gpus"],
                    "pod_order": ",".join(n["pod_order"]),
                })
        self.setups = pd.DataFrame(rows, columns=[
            "rank", "setup", "feasible", "cost_per_hour", "currency", "gpus", "worst_slo_ratio",
            "verified_worst_slo_ratio", "duration_s", "memory_isolated", "fault_isolated", "configuration", "reason"])
        self.setups["rank"] = self.setups["rank"].astype("Int64")
        self.gpus = pd.DataFrame(gpu_rows, columns=[
            "setup", "gpu", "model", "family", "cost_per_hour", "replicas", "mig", "tenants"])
        self.nodes = pd.DataFrame(node_rows, columns=[
            "setup", "node", "machine", "model", "cost_per_hour", "family", "partition",
            "clients", "gpus", "pod_order"])
        best = summary["ranked"][0] if summary["ranked"] else {}
        self.tenants = pd.DataFrame(
            best.get("tenants", []),
            columns=["tenant", "device", "met", "inconclusive", "worst_slo_ratio", "samples",
                     "closest", "reason"],
        ).set_index("tenant")

    def save(self, path) -> None:
        """Writes the winning setup as a scenario file (``gpumux plan -o PATH``)."""
        if not self.best_yaml:
            raise ValueError("no feasible setup to save")
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self.best_yaml)

    def __str__(self) -> str:
        return self.table

    def __repr__(self) -> str:
        if not self.found:
            return "<gpumux.PlanResult: no feasible setup>"
        best = self.setups.iloc[0]
        return (f"<gpumux.PlanResult: {best['cost_per_hour']:.2f} {self.currency}/h on "
                f"{best['gpus']} GPU(s), {self.search['simulations']} simulations>")


def plan(scenario: ScenarioLike, overrides: Overrides = None, seed: int | None = None, *,
         gpus: Mapping[str, float] | None = None, max_gpus: int | None = None,
         strategies: str | Iterable[str] | None = None, headroom: float | None = None,
         platform: str | None = None, prices: str | os.PathLike[str] | None = None,
         jobs: int = 0, client: Any = None) -> PlanResult:
    """Finds the cheapest setup in which every tenant meets its SLO (``gpumux plan``).

    scenario:   a planning scenario (path, dict or YAML text) with a ``plan:`` block, or any
                scenario plus ``gpus=``.
    gpus:       {model: price per hour} replacing plan.gpus; max_gpus, strategies (list or
                comma-separated), headroom (fraction), platform (bare, gke, device-plugin,
                mig-parted), prices (a price table file, docs/plan.md "Machine types and
                prices"): replace the plan's values.
    jobs:       simulation threads (default: the cores); client: a dask Client (see above).
    Raises ScenarioError for bad input.
    """
    import gpumux
    jobs = gpumux._plain(jobs)
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f"jobs must be a whole number of threads, not {type(jobs).__name__}")
    # 0: the cores; at most 4096 threads (a larger int was pybind11's raw TypeError).
    jobs = gpumux._count(jobs, "jobs (0: the cores)", 0, 1024)
    client = gpumux._dask_client(client)
    text, is_path, source = gpumux._scenario_args(scenario)
    extra = []
    plan_keys: dict[str, Any] = {}
    if gpus is not None:
        if not isinstance(gpus, Mapping):
            raise TypeError("gpus must be a dict {model: price per hour}, not "
                            f"{type(gpus).__name__}")
        plan_keys["gpus"] = [{"model": m, "cost_per_hour": gpumux._real(p, f"gpus[{m!r}]", 0, 1e12)}
                             for m, p in dict(gpus).items()]
    if max_gpus is not None:
        plan_keys["max_gpus"] = gpumux._count(max_gpus, "max_gpus", 1, 2**31 - 1)
    if strategies is not None:
        plan_keys["strategies"] = gpumux._strategy_list(strategies)
    if headroom is not None:
        plan_keys["headroom"] = gpumux._real(headroom, "headroom", -1e9, 1e9)
    if platform is not None:
        plan_keys["platform"] = str(platform)
    if prices is not None:
        if not isinstance(prices, (str, os.PathLike)):
            raise TypeError(f"prices must be the path of a price table, not "
                            f"{type(prices).__name__}")
        plan_keys["prices"] = os.path.abspath(os.fspath(prices))
    if plan_keys:
        import yaml
        if is_path:
            with open(text, encoding="utf-8") as f:
                document = yaml.safe_load(f)
        else:
            document = yaml.safe_load(text)
        if isinstance(document, dict) and "plan" in document:
            extra = [f"plan.{k}={gpumux._override_value(v)}" for k, v in plan_keys.items()]
        else:
            if "gpus" not in plan_keys:
                raise gpumux.ScenarioError(f"{source}: no `plan:` block: give gpus={{model: price}}")
            extra = [f"plan={gpumux._override_value(plan_keys)}"]
    runner = None
    if client is not None:
        def runner(texts):
            return client.gather(client.map(_run_text, list(texts), pure=False))
    summary, table = gpumux._gpumux.plan(text, is_path, extra + gpumux._override_list(overrides),
                                         gpumux._seed(seed), source, int(jobs), runner)
    return PlanResult(json.loads(summary), table)
