"""Small matplotlib helpers for notebooks (matplotlib is imported on first use).

    from gpumux import plots
    plots.latency_cdf(result)                   # per-tenant latency CDF, ms, log x, SLO lines
    plots.sm_busy(result)                       # SM-busy timeseries per device
    plots.compare_bars(gpumux.compare(...), slo=plots.slo_targets_ns(result))
Each returns the matplotlib Axes it drew on (pass ``ax=`` to draw on your own). Latencies are
shown in milliseconds by default (``unit=``); tails use a log scale (``log=False`` to turn off).
"""
from __future__ import annotations

import re

import numpy as np

_SCALE = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s|m|min|h)\s*$")
_DURATION_NS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "min": 60e9,
                "h": 3600e9}


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots()
    return ax


def _legend(ax, count):
    """A readable legend: outside the axes, in columns, when there are many lines."""
    if count > 8:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small",
                  ncol=max(1, count // 20 + 1))
    elif count:
        ax.legend(fontsize="small")


def slo_targets_ns(result, percentile: str = "p99") -> dict:
    """{tenant: SLO target in ns} for the SLO key `percentile` ("p99", "ttft_p99", ...) from the
    result's SLO verdicts (tenants without one are left out); files written before verdicts
    existed: from the scenario stored in them."""
    slos = result.slos
    if len(slos):
        rows = slos[slos["key"] == percentile]
        return {str(t): float(v) for t, v in zip(rows["tenant"], rows["target_ns"])}
    import yaml
    doc = yaml.safe_load(result.scenario_yaml) or {}
    targets = {}
    for tenant in doc.get("tenants", []) or []:
        value = ((tenant or {}).get("slo") or {}).get(percentile)
        if isinstance(value, str) and (m := _DURATION.match(value)):
            targets[tenant.get("name")] = float(m.group(1)) * _DURATION_NS[m.group(2)]
    return targets


def latency_cdf(result, tenants=None, ax=None, unit: str = "ms", log: bool = True,
                slo: bool = True):
    """Empirical CDF of the latency of completed requests (warmup included), one line per
    tenant; dotted vertical lines at each tenant's p99 SLO target (same colour)."""
    scale = _SCALE[unit]
    ax = _axes(ax)
    requests = result.requests
    requests = requests[requests["status"] == "completed"]
    names = tenants if tenants is not None else result.tenant_names
    targets = slo_targets_ns(result) if slo else {}
    drawn = 0
    for name in names:
        values = np.sort(requests.loc[requests["tenant"] == name, "latency_ns"].to_numpy()) / scale
        if len(values):
            (line,) = ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post",
                              label=name)
            drawn += 1
            if name in targets:
                ax.axvline(targets[name] / scale, color=line.get_color(), linestyle=":",
                           label=f"{name} p99 SLO")
                drawn += 1
    if log:
        ax.set_xscale("log")
    ax.axhline(0.99, color="grey", linewidth=0.5)
    ax.set_xlabel(f"latency ({unit}{', log scale' if log else ''})")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0, 1.01)
    _legend(ax, drawn)
    return ax


def sm_busy(result, devices=None, ax=None):
    """SM-busy fraction over simulated time, one line per device."""
    ax = _axes(ax)
    drawn = 0
    for name, frame in result.timeseries.items():
        if devices is not None and name not in devices:
            continue
        ax.plot(frame["time_ns"] / 1e9, frame["sm_busy"], label=name)
        drawn += 1
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("SM busy (fraction)")
    ax.set_ylim(0, 1.05)
    _legend(ax, drawn)
    return ax


def compare_bars(frame, metric: str = "p99_ns", ax=None, unit: str = "ms", log: bool = True,
                 slo: dict | None = None):
    """Grouped bars of one compare() column: tenants on the x axis, one bar per strategy.
    Columns ending in ``_ns`` are shown in ``unit`` (log scale); ``slo={tenant: ns}`` (e.g.
    :func:`slo_targets_ns`) draws each tenant's target as a short black line over its group."""
    ax = _axes(ax)
    table = frame[metric].unstack("strategy")
    strategies = list(dict.fromkeys(frame.index.get_level_values("strategy")))
    tenants = list(dict.fromkeys(frame.index.get_level_values("tenant")))
    table = table.loc[tenants, strategies]
    label = metric
    if metric.endswith("_ns"):
        table = table / _SCALE[unit]
        label = f"{metric[:-3]} latency ({unit})"
    table.plot.bar(ax=ax, rot=0 if len(tenants) <= 6 else 45)
    if log and metric.endswith("_ns"):
        ax.set_yscale("log")
        label += ", log scale"
    labelled = False
    for i, tenant in enumerate(tenants):
        if slo and tenant in slo:
            value = slo[tenant] / (_SCALE[unit] if metric.endswith("_ns") else 1)
            ax.hlines(value, i - 0.45, i + 0.45, colors="black", linestyles="--",
                      label=None if labelled else "p99 SLO")
            labelled = True
    ax.set_ylabel(label)
    ax.set_xlabel("tenant")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax
