"""Small matplotlib helpers for notebooks (matplotlib is imported on first use).

    from gpumux import plots
    plots.latency_cdf(result)                   # per-tenant latency CDF (completed requests)
    plots.sm_busy(result)                       # SM-busy timeseries per device
    plots.compare_bars(gpumux.compare(...))     # p99 per tenant and strategy
Each returns the matplotlib Axes it drew on (pass ``ax=`` to draw on your own).
"""
from __future__ import annotations

import numpy as np


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots()
    return ax


def latency_cdf(result, tenants=None, ax=None, unit: str = "ms"):
    """Empirical CDF of the latency of completed requests (warmup included), one line per
    tenant."""
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    ax = _axes(ax)
    requests = result.requests
    requests = requests[requests["status"] == "completed"]
    names = tenants if tenants is not None else result.tenant_names
    for name in names:
        values = np.sort(requests.loc[requests["tenant"] == name, "latency_ns"].to_numpy()) / scale
        if len(values):
            ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post", label=name)
    ax.set_xlabel(f"latency ({unit})")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0, 1.01)
    ax.legend()
    return ax


def sm_busy(result, devices=None, ax=None):
    """SM-busy fraction over simulated time, one line per device."""
    ax = _axes(ax)
    for name, frame in result.timeseries.items():
        if devices is not None and name not in devices:
            continue
        ax.plot(frame["time_ns"] / 1e9, frame["sm_busy"], label=name)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("SM busy")
    ax.set_ylim(0, 1.05)
    ax.legend()
    return ax


def compare_bars(frame, metric: str = "p99_ns", ax=None):
    """Grouped bars of one compare() column: tenants on the x axis, one bar per strategy."""
    ax = _axes(ax)
    table = frame[metric].unstack("strategy")
    strategies = list(dict.fromkeys(frame.index.get_level_values("strategy")))
    table = table[strategies]
    table.plot.bar(ax=ax)
    ax.set_ylabel(metric)
    return ax
