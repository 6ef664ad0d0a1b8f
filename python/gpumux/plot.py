"""Figures of results: the ``gpumux plot`` command and the notebook helpers, one module.

    gpumux plot OUT.h5 [--kind cdf|timeline|compare] -o FIG.png|svg
    python3 -m gpumux.plot OUT.h5 --kind timeline -o fig.svg

    from gpumux import plot
    plot.latency_cdf(result)                  # per-tenant latency CDF, ms, log x, SLO lines
    plot.sm_busy(result)                      # SM-busy timeseries per device
    plot.compare_bars(gpumux.compare(...), slo=plot.slo_targets_ns(result))

The notebook helpers return the matplotlib Axes they drew on (pass ``ax=`` to draw on your
own); latencies in milliseconds by default (``unit=``), tails on a log scale.

Warm-up: the latency CDFs show the measured requests only (arrival in [warmup, duration), as the
tables); the timelines shade [0, warmup) grey ("warm-up, not in the tables"). SLO verdicts are
the engine's (``result.slos``), never recomputed here.

Kinds:
  cdf       latency CDF per tenant in ms (left: log-scale latency; right: the tail, 1 - CDF on a
            log scale down to p99.9), dotted lines at each tenant's SLO targets (``slo_ns``)
  timeline  per device over simulated time: SM busy, DRAM busy, memory used (GiB)
  compare   a compare file (``gpumux compare -o``): p99 latency per tenant per strategy with
            the SLO targets, and per strategy throughput, mean SM busy and GPU cost (USD)
Default: compare for a compare file, cdf for a single run. For a compare file, cdf and
timeline draw one row per strategy.

The figure functions (:func:`cdf_figure`, :func:`timeline_figure`, :func:`compare_figure`) take
loaded Results and return a matplotlib Figure; ``gpumux report --html`` embeds them.
Exit status of the command: 0 written, 2 bad input (one line on stderr).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

KINDS = ("cdf", "timeline", "compare")
FORMATS = (".png", ".svg")
_MS = 1e6
_GIB = float(1 << 30)
_PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p999", 0.999))


class PlotError(ValueError):
    """Bad input for a plot or report: the message is one line."""


def _pyplot():
    import matplotlib
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _colours(count):
    import matplotlib
    cmap = matplotlib.colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(count)]


def load_results(path) -> list:
    """[Result, ...] of a result file (one for a run file, one per strategy for a compare
    file); PlotError with a one-line message when it is missing or not a gpumux result."""
    import gpumux
    path = os.fspath(path)
    if not os.path.exists(path):
        raise PlotError(f"{path}: no such file")
    if os.path.isdir(path):
        raise PlotError(f"{path}: a directory, not a gpumux result file")
    try:
        loaded = gpumux.load(path)
    except (ValueError, OSError, KeyError) as error:
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise PlotError(text if text.startswith(path) else f"{path}: {text}") from None
    return loaded if isinstance(loaded, list) else [loaded]


#: SLO keys on latency (the CDF's measure); ttft_* and tpot_* are other measures.
_LATENCY_KEYS = ("p50", "p90", "p99", "p999")


def slo_ns(result, keys=_LATENCY_KEYS) -> dict:
    """{tenant: {"p99": ns, ...}} of the SLO targets with a key in KEYS (default: the latency
    ones), from the engine's verdict table ``result.slos``; tenants without one are left out."""
    out: dict = {}
    slos = result.slos
    for tenant, key, target in zip(slos["tenant"], slos["key"], slos["target_ns"]):
        if key in keys:
            out.setdefault(str(tenant), {})[key] = float(target)
    return out


def slo_verdicts(result) -> dict:
    """{tenant: (verdict, checks)} for the tenants with an SLO, as the engine judged them
    (``result.slos``, ``tenants.slo_verdict``: the run table, --json and --fail-on-slo say the
    same): verdict "met", "missed" or "inconclusive"; checks a list of dicts with key,
    target_ns, value_ns, samples, low_ns, high_ns (NaN: none) and verdict, one per target."""
    slos = result.slos
    tenants = result.tenants
    out = {}
    for name in result.tenant_names:
        rows = slos[slos["tenant"] == name]
        if not len(rows):
            continue
        checks = [{"key": k, "target_ns": float(t), "value_ns": float(v), "samples": float(n),
                   "low_ns": float(lo), "high_ns": float(hi), "verdict": str(verdict)}
                  for k, t, v, n, lo, hi, verdict in zip(
                      rows["key"], rows["target_ns"], rows["value_ns"], rows["samples"],
                      rows["low_ns"], rows["high_ns"], rows["verdict"])]
        if "slo_verdict" in tenants.columns and tenants.loc[name, "slo_verdict"]:
            verdict = str(tenants.loc[name, "slo_verdict"])
        else:  # files written before tenant verdicts: the engine's per-target verdicts
            found = {c["verdict"] for c in checks}
            verdict = ("missed" if "missed" in found else
                       "inconclusive" if "inconclusive" in found else "met")
        out[name] = (verdict, checks)
    return out


def measured_window(result) -> tuple:
    """(warmup_ns, duration_ns) of the run: requests arriving in [warmup, duration) are the
    measured ones (docs/metrics.md, "Windows"); (0, None) for files without them."""
    summary = result.summary
    return float(summary.get("warmup_ns") or 0), summary.get("duration_ns")


def _ms_ticks(ax):
    """Log-scale latency axis labelled 1, 2, 5, 10, 20, 50 ... in plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _title(result) -> str:
    label = f"{result.scenario_name}"
    if result.strategy:
        label += f" — {result.strategy}"
    return label


def _latencies(result) -> dict:
    """{tenant: sorted latencies in ms of the completed measured requests} from the request
    records: arrival in [warmup, duration), the requests the tables count."""
    requests = result.requests
    out = {}
    if len(requests):
        warmup, duration = measured_window(result)
        done = requests[(requests["status"] == "completed") & (requests["arrival_ns"] >= warmup)]
        if duration is not None:
            done = done[done["arrival_ns"] < float(duration)]
        for name, values in done.groupby("tenant", observed=False)["latency_ns"]:
            out[str(name)] = np.sort(values.to_numpy(dtype=float)) / _MS
    return out


def _draw_cdf(result, ax_cdf, ax_tail, legend=True):
    names = result.tenant_names
    colours = dict(zip(names, _colours(len(names))))
    latencies = _latencies(result)
    targets = slo_ns(result)
    summary = result.summary.get("tenants") or {}
    drawn = 0
    for name in names:
        colour = colours[name]
        values = latencies.get(name)
        if values is not None and len(values):
            n = len(values)
            frac = np.arange(1, n + 1) / n
            ax_cdf.step(values, frac, where="post", color=colour, label=name, linewidth=1.2)
            # the tail: fraction of requests slower than x (1 - CDF); the last point is 0
            ax_tail.step(values[:-1], 1.0 - frac[:-1], where="post", color=colour,
                         linewidth=1.2)
            drawn += 1
        else:  # no request records in the file: the summary's percentiles as points
            lat = (summary.get(name) or {}).get("latency_ns") or {}
            points = [(lat[k] / _MS, q) for k, q in _PERCENTILES if lat.get(k)]
            if points:
                xs, qs = zip(*points)
                ax_cdf.plot(xs, qs, "o-", color=colour, label=f"{name} (percentiles)",
                            markersize=3)
                ax_tail.plot(xs, [1 - q for q in qs], "o-", color=colour, markersize=3)
                drawn += 1
    # SLO targets: one dotted line per distinct (percentile, target), labelled with the value
    # and the tenants it applies to (many tenants share a target; colours would hide that)
    lines = {}
    for name in names:
        for key, target in (targets.get(name) or {}).items():
            lines.setdefault((key, target), []).append(name)
    for n, ((key, target), owners) in enumerate(sorted(lines.items(), key=lambda kv: kv[0][1])):
        who = owners[0] if len(owners) == 1 else f"{len(owners)} tenants"
        for ax in (ax_cdf, ax_tail):
            ax.axvline(target / _MS, color="black", linestyle=":", linewidth=1.2)
        ax_cdf.annotate(f"{key} SLO {target / _MS:g} ms\n({who})", (target / _MS, 0.03 + 0.1 * n),
                        xytext=(-3, 0), textcoords="offset points", ha="right",
                        fontsize="x-small", color="black",
                        bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.8))
    for ax in (ax_cdf, ax_tail):
        ax.set_xscale("log")
        _ms_ticks(ax)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlabel("latency (ms, log scale)")
    ax_cdf.set_ylim(0, 1.01)
    ax_cdf.set_ylabel("fraction of requests ≤ latency")
    ax_tail.set_yscale("log")
    ax_tail.set_ylim(5e-4, 1.05)
    ax_tail.set_ylabel("fraction slower (1 − CDF, log)")
    for level, label in ((1e-2, "p99"), (1e-3, "p99.9")):
        ax_tail.axhline(level, color="grey", linewidth=0.6, linestyle="--")
        ax_tail.annotate(label, (1.0, level), xycoords=("axes fraction", "data"),
                         xytext=(2, 0), textcoords="offset points", va="center",
                         fontsize="x-small", color="grey")
    if targets:
        from matplotlib.lines import Line2D
        handles, labels = ax_cdf.get_legend_handles_labels()
        handles.append(Line2D([], [], color="black", linestyle=":"))
        labels.append("SLO target")
    else:
        handles, labels = ax_cdf.get_legend_handles_labels()
    if legend and handles:
        ax_tail.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.06, 1),
                       fontsize="small", ncol=1 if len(labels) <= 16 else 2, frameon=False)
    return drawn


def cdf_figure(results):
    """Latency CDF and tail per tenant, one row per Result."""
    plt = _pyplot()
    rows = len(results)
    fig, axes = plt.subplots(rows, 2, figsize=(12, 4.2 * rows), squeeze=False,
                             sharex=True, constrained_layout=True)
    for (ax_cdf, ax_tail), result in zip(axes, results):
        _draw_cdf(result, ax_cdf, ax_tail)
        ax_cdf.set_title(f"{_title(result)}: latency CDF (measured requests, warm-up excluded)",
                         fontsize="medium", loc="left")
        ax_tail.set_title("tail", fontsize="medium", loc="left")
    return fig


def _draw_timeline(result, axes):
    series = result.timeseries
    names = list(series)
    colours = _colours(len(names))
    limits = {}
    try:
        memory = result.devices["memory_bytes"]
        limits = {str(k): float(v) for k, v in memory.items()}
    except (KeyError, AttributeError):
        pass
    for colour, name in zip(colours, names):
        frame = series[name]
        t = frame["time_ns"].to_numpy(dtype=float) / 1e9
        # raw samples faint, a ~1 s moving average on top (samples are often 100 ms apart)
        step = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
        window = max(1, int(round(1.0 / step))) if step > 0 else 1
        for ax, column, label in ((axes[0], "sm_busy", name), (axes[1], "dram_busy", None)):
            if column not in frame:
                continue
            values = frame[column] * 100
            ax.plot(t, values, color=colour, linewidth=0.6, alpha=0.3)
            ax.plot(t, values.rolling(window, min_periods=1, center=True).mean(),
                    color=colour, linewidth=1.6, label=label)
        if "memory_used_bytes" in frame:
            axes[2].plot(t, frame["memory_used_bytes"] / _GIB, color=colour, linewidth=1)
            if name in limits and len(names) <= 8:
                axes[2].axhline(limits[name] / _GIB, color=colour, linestyle=":", linewidth=0.8)
    warmup, _ = measured_window(result)
    if warmup > 0:
        for ax in axes:
            ax.axvspan(0, warmup / 1e9, color="grey", alpha=0.15, linewidth=0,
                       label=None)
        axes[0].annotate("warm-up\n(not in the tables)", (warmup / 2e9, 102), ha="center",
                         va="top", fontsize="x-small", color="dimgrey")
    axes[0].set_ylabel("SM busy (%; bold: 1 s mean)")
    axes[1].set_ylabel("DRAM busy (%; bold: 1 s mean)")
    axes[2].set_ylabel("memory used (GiB)")
    for ax in axes[:2]:
        ax.set_ylim(0, 105)
    axes[2].set_ylim(bottom=0)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("simulated time (s)")
    if names:
        handles, labels = axes[0].get_legend_handles_labels()
        axes[2].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1),
                       fontsize="small", frameon=False,
                       title="device (dotted: capacity)" if limits and len(names) <= 8
                       else "device", title_fontsize="small")
    return len(names)


def timeline_figure(results):
    """SM busy, DRAM busy and memory used per device over time, one row per Result."""
    plt = _pyplot()
    rows = len(results)
    fig, axes = plt.subplots(rows, 3, figsize=(14, 3.6 * rows), squeeze=False,
                             constrained_layout=True)
    for row, result in zip(axes, results):
        drawn = _draw_timeline(result, row)
        row[0].set_title(f"{_title(result)}: utilisation and memory per device"
                         + ("" if drawn else " (no timeseries in this file)"),
                         fontsize="medium", loc="left")
    return fig


def compare_figure(results):
    """A compare file: p99 latency per tenant for each strategy (log scale, SLO targets as
    black dashes), then per strategy total throughput, mean SM busy and GPU cost."""
    if len(results) < 2 and not any(r.strategy for r in results):
        raise PlotError("--kind compare needs a compare file (gpumux compare -o)")
    plt = _pyplot()
    strategies = [r.strategy or "as-is" for r in results]
    tenants = list(dict.fromkeys(n for r in results for n in r.tenant_names))
    colours = _colours(len(strategies))
    fig = plt.figure(figsize=(max(10, 0.55 * len(tenants) * max(1, len(strategies)) / 2 + 4), 8),
                     constrained_layout=True)
    grid = fig.add_gridspec(2, 3, height_ratios=[1.5, 1])
    ax = fig.add_subplot(grid[0, :])
    width = 0.8 / len(strategies)
    x = np.arange(len(tenants))
    for i, (result, colour, label) in enumerate(zip(results, colours, strategies)):
        summary = result.summary.get("tenants") or {}
        values = [((summary.get(t) or {}).get("latency_ns") or {}).get("p99") for t in tenants]
        heights = [np.nan if not v else v / _MS for v in values]
        ax.bar(x - 0.4 + width * (i + 0.5), heights, width, color=colour, label=label)
    targets = slo_ns(results[0])
    marked = False
    for i, tenant in enumerate(tenants):
        target = (targets.get(tenant) or {}).get("p99")
        if target:
            ax.hlines(target / _MS, i - 0.45, i + 0.45, colors="black", linestyles="--",
                      linewidth=1.5, label=None if marked else "p99 SLO target")
            marked = True
    ax.set_yscale("log")
    ax.set_xticks(x, tenants, rotation=0 if len(tenants) <= 6 else 40,
                  ha="center" if len(tenants) <= 6 else "right")
    ax.set_ylabel("p99 latency (ms, log scale)")
    ax.set_xlim(-0.6, len(tenants) - 0.4)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1), fontsize="small", frameon=False,
              title="strategy", title_fontsize="small")
    ax.set_title(f"{results[0].scenario_name}: p99 latency per tenant under each strategy",
                 fontsize="medium", loc="left")

    def total_throughput(r):
        return sum(float(t.get("throughput_per_s") or 0)
                   for t in (r.summary.get("tenants") or {}).values())

    def mean_busy(r):
        devices = list((r.summary.get("devices") or {}).values())
        values = [float(d.get("sm_busy") or 0) for d in devices]
        return 100 * sum(values) / len(values) if values else np.nan

    panels = (("throughput (requests/s, all tenants)", total_throughput, "{:.4g}/s"),
              ("mean SM busy (%)", mean_busy, "{:.1f}%"),
              ("GPU cost (USD)", lambda r: float(r.summary.get("gpu_cost") or 0), "${:.4g}"))
    for col, (label, metric, fmt) in enumerate(panels):
        axis = fig.add_subplot(grid[1, col])
        values = [metric(r) for r in results]
        bars = axis.bar(strategies, values, color=colours)
        axis.bar_label(bars, [fmt.format(v) if np.isfinite(v) else "" for v in values],
                       fontsize="x-small", padding=2)
        axis.set_title(label, fontsize="medium", loc="left")
        axis.margins(y=0.18)
        axis.tick_params(axis="x", labelrotation=20 if len(strategies) > 3 else 0,
                         labelsize="small")
        axis.grid(True, axis="y", alpha=0.3)
    return fig


# -- notebook helpers (formerly gpumux.plots) ---------------------------------------------------
_SCALE = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def _axes(ax):
    if ax is None:
        _, ax = _pyplot().subplots()
    return ax


def _legend(ax, count):
    """A readable legend: outside the axes, in columns, when there are many lines."""
    if count > 8:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small",
                  ncol=max(1, count // 20 + 1))
    elif count:
        ax.legend(fontsize="small")


def slo_targets_ns(result, percentile: str = "p99") -> dict:
    """{tenant: SLO target in ns} for the SLO key ``percentile`` ("p99", "ttft_p99", ...) from the
    engine's verdict table ``result.slos`` (tenants without that target are left out)."""
    return {t: v[percentile] for t, v in slo_ns(result, (percentile,)).items()}


def latency_cdf(result, tenants=None, ax=None, unit: str = "ms", log: bool = True,
                slo: bool = True):
    """Empirical CDF of the latency of the completed measured requests (warm-up excluded, as
    the tables), one line per tenant; dotted vertical lines at each tenant's p99 SLO target
    (same colour)."""
    scale = _SCALE[unit] / _MS
    ax = _axes(ax)
    latencies = _latencies(result)
    names = tenants if tenants is not None else result.tenant_names
    targets = slo_targets_ns(result) if slo else {}
    drawn = 0
    for name in names:
        values = latencies.get(name)
        if values is not None and len(values):
            values = values / scale
            (line,) = ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post",
                              label=name)
            drawn += 1
            if name in targets:
                ax.axvline(targets[name] / _SCALE[unit], color=line.get_color(), linestyle=":",
                           label=f"{name} p99 SLO")
                drawn += 1
    if log:
        ax.set_xscale("log")
    ax.axhline(0.99, color="grey", linewidth=0.5)
    ax.set_xlabel(f"latency ({unit}{', log scale' if log else ''})")
    ax.set_ylabel("fraction of measured requests")
    ax.set_ylim(0, 1.01)
    _legend(ax, drawn)
    return ax


def sm_busy(result, devices=None, ax=None):
    """SM-busy fraction over simulated time, one line per device; the warm-up shaded."""
    ax = _axes(ax)
    drawn = 0
    for name, frame in result.timeseries.items():
        if devices is not None and name not in devices:
            continue
        ax.plot(frame["time_ns"] / 1e9, frame["sm_busy"], label=name)
        drawn += 1
    warmup, _ = measured_window(result)
    if warmup > 0:
        ax.axvspan(0, warmup / 1e9, color="grey", alpha=0.15, linewidth=0)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("SM busy (fraction)")
    ax.set_ylim(0, 1.05)
    _legend(ax, drawn)
    return ax


def compare_bars(frame, metric: str = "latency_p99_ns", ax=None, unit: str = "ms",
                 log: bool = True, slo: dict | None = None):
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
        label = f"{metric[:-3]} ({unit})"
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


FIGURES = {"cdf": cdf_figure, "timeline": timeline_figure, "compare": compare_figure}


def default_kind(results) -> str:
    return "compare" if len(results) > 1 or any(r.strategy for r in results) else "cdf"


def check_output(path) -> str:
    """The output format (png or svg) of PATH; PlotError for another extension."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in FORMATS:
        shown = f", not {extension}" if extension else " (no extension)"
        raise PlotError(f"-o {path}: gpumux plot writes .png or .svg{shown}")
    return extension[1:]


def write_atomically(output, write) -> None:
    """Calls WRITE(FILE) on OUTPUT.tmp.PID (binary) beside OUTPUT (a symlink is followed: the
    file it points to is replaced), fsyncs it and renames it over OUTPUT, so OUTPUT is the old
    file or the complete new one; an I/O error (ENOSPC, a read-only mount, a directory in the
    way) removes the temporary file and is a PlotError: one line, exit 2."""
    target = os.path.realpath(os.fspath(output))
    temp = f"{target}.tmp.{os.getpid()}"
    try:
        with open(temp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    except OSError as e:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise PlotError(f"cannot write {output}: {e.strerror or e}") from None
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def plot(path, output, kind: str | None = None) -> str:
    """Draws KIND of result file PATH into OUTPUT (.png/.svg); returns the kind drawn."""
    fmt = check_output(output)
    if kind is not None and kind not in KINDS:
        raise PlotError(f"--kind {kind}: not one of {', '.join(KINDS)}")
    results = load_results(path)
    kind = kind or default_kind(results)
    if kind == "compare" and len(results) < 2 and not any(r.strategy for r in results):
        raise PlotError(f"{path}: --kind compare needs a compare file (gpumux compare -o), "
                        "this is a single run")
    fig = FIGURES[kind](results)
    try:
        write_atomically(output, lambda f: fig.savefig(f, format=fmt, dpi=110))
    finally:
        _pyplot().close(fig)
    return kind


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="gpumux plot", description="Figures of a gpumux result file (.png or .svg).",
        epilog="examples:\n  gpumux plot out.h5 -o cdf.png\n"
               "  gpumux plot out.h5 --kind timeline -o timeline.svg\n"
               "  gpumux plot cmp.h5 --kind compare -o compare.png",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", metavar="OUT.h5", help="a result file from run -o or compare -o")
    parser.add_argument("--kind", choices=KINDS, default=None,
                        help="cdf (latency per tenant), timeline (per device), compare "
                             "(per strategy); default: compare for a compare file, else cdf")
    parser.add_argument("-o", "--output", required=True, metavar="FIG.png|svg",
                        help="the figure file (.png or .svg)")

    return run_tool(parser, argv, "plot",
                    lambda args: f"wrote {args.output} ({plot(args.file, args.output, args.kind)})")


def run_tool(parser, argv, command, action) -> int:
    """The gpumux CLI's contract for a Python subcommand: a usage mistake or a PlotError is one
    line on stderr and exit 2; otherwise print what `action(args)` returns and exit 0."""

    class _Exit(Exception):
        pass

    def error(message):
        print(f"gpumux: error: {command}: {message} (see: gpumux {command} --help)",
              file=sys.stderr)
        raise _Exit()

    parser.error = error
    try:
        args = parser.parse_args(argv)
    except _Exit:
        return 2
    try:
        done = action(args)
    except PlotError as e:
        print(f"gpumux: error: {e}", file=sys.stderr)
        return 2
    print(done)
    return 0


if __name__ == "__main__":
    sys.exit(main())
