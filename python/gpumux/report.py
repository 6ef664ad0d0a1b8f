"""A self-contained HTML report of a result file, and ``gpumux report OUT.h5 --html R.html``.

    python3 -m gpumux.report OUT.h5 --html report.html
    gpumux.report.html_report(gpumux.load("out.h5"))     # the page as a str

One file, nothing external: inline CSS, figures as base64 PNG. Sections: the run (scenario,
seed, status, simulated time), for a compare file the per-strategy overview and comparison
figure, then per run: SLO verdicts (the engine's: met / missed / inconclusive per tenant, each
target with its samples and confidence interval), the tenant and device tables (the columns of
the CLI's run table, from the metric table), cost per tenant per hour and per month by
allocation and by use, latency CDFs, utilisation and memory timelines, and the run's notes and
assumptions. Tables and CDFs cover the measured requests (warm-up excluded); the timelines
shade the warm-up. Exit status of the command: 0 written, 2 bad input (one line on stderr).
"""
from __future__ import annotations

import argparse
import base64
import html
import io
import math
import os
import sys

from . import plot as _plot

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7f9;line-height:1.4}
main{max-width:1340px;margin:0 auto;padding:24px 28px 48px;background:#fff;min-height:100vh}
h1{font-size:1.6rem;margin:0 0 4px} h2{font-size:1.25rem;margin:32px 0 8px;
border-bottom:2px solid #e3e6eb;padding-bottom:4px} h3{font-size:1.05rem;margin:20px 0 6px}
.meta{color:#5a6270;margin:0 0 16px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:.86rem}
th,td{padding:4px 10px;border-bottom:1px solid #e3e6eb;text-align:right;white-space:nowrap}
th{background:#eef1f5;font-weight:600;white-space:normal} td.l,th.l{text-align:left}
tr:hover td{background:#f8fafc}
.met{color:#11663a;background:#e3f5ea;font-weight:600;border-radius:4px;padding:1px 8px}
.missed{color:#9b1c1c;background:#fde8e8;font-weight:600;border-radius:4px;padding:1px 8px}
.inconclusive{color:#8a5a00;background:#fff4d6;font-weight:600;border-radius:4px;padding:1px 8px}
.none{color:#5a6270}
.verdicts{display:flex;gap:12px;flex-wrap:wrap;margin:6px 0 10px}
.card{border:1px solid #e3e6eb;border-radius:8px;padding:8px 14px;background:#fbfcfd}
.card b{font-size:1.3rem}
figure{margin:10px 0 18px} figure img{max-width:100%;height:auto;border:1px solid #e3e6eb}
figcaption{color:#5a6270;font-size:.85rem}
ul.notes li{margin:4px 0} .scroll{overflow-x:auto}
footer{color:#8a919c;font-size:.8rem;margin-top:32px}
"""


def _e(value) -> str:
    return html.escape(str(value))


def _ms(ns) -> str:
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "–"
    v = float(ns) / 1e6
    return f"{v:.3g} ms" if v < 1000 else f"{v / 1000:.3g} s"


def _num(v, fmt="{:.3g}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return fmt.format(v)


def _figure_html(fig, caption: str) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    _plot._pyplot().close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _table(header, rows, left=(0,)) -> str:
    out = ['<div class="scroll"><table><thead><tr>']
    out += [f'<th class="{"l" if i in left else ""}">{_e(h)}</th>' for i, h in enumerate(header)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(
            f'<td class="{"l" if i in left else ""}">{cell}</td>' for i, cell in enumerate(row))
            + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


_BADGES = {"met": '<span class="met">met</span>',
           "missed": '<span class="missed">missed</span>',
           "inconclusive": '<span class="inconclusive">inconclusive</span>'}
_HOURS_PER_MONTH = 730.0  # 8,760 h / 12, as docs/metrics.md's $/GB-month


def _bound(ns) -> str:
    return _ms(None if ns is None or (isinstance(ns, float) and math.isnan(ns)) else ns)


def _verdict_section(result) -> str:
    """The engine's verdicts (result.slos), as the run table and --fail-on-slo give them."""
    verdicts = _plot.slo_verdicts(result)
    names = result.tenant_names
    counts = {v: sum(1 for verdict, _ in verdicts.values() if verdict == v)
              for v in ("met", "missed", "inconclusive")}
    level = (result.summary.get("percentiles") or {}).get("confidence")
    cards = ('<div class="verdicts">'
             + "".join(f'<div class="card"><b>{counts[v]}</b> {v}</div>' for v in counts)
             + f'<div class="card"><b>{len(names) - len(verdicts)}</b> without an SLO</div>'
             "</div>")
    rows = []
    for name in names:
        if name not in verdicts:
            rows.append([_e(name), '<span class="none">no SLO</span>', "", "", "", "", ""])
            continue
        verdict, checks = verdicts[name]
        for i, c in enumerate(checks):
            samples = c["samples"]
            rows.append([_e(name) if i == 0 else "", _BADGES[verdict] if i == 0 else "",
                         _e(c["key"]), _e(f"≤ {_ms(c['target_ns'])}"), _e(_ms(c["value_ns"])),
                         _e("–" if math.isnan(samples) else f"{int(samples):,}"),
                         _e(f"[{_bound(c['low_ns'])}, {_bound(c['high_ns'])}]"),
                         _BADGES.get(c["verdict"], _e(c["verdict"]))])
    ci = f"{100 * level:g}% CI" if level else "CI"
    return cards + _table(["tenant", "SLO", "target", "bound", "measured", "samples", ci,
                           "verdict"], rows, left=(0, 1, 2)) + (
        '<p class="meta">A target is met when its confidence interval is under it, missed '
        "when the interval is over it, inconclusive when the interval straddles it or the "
        "samples give no upper bound (simulate longer): docs/metrics.md, SLO verdicts.</p>")


def _metric_columns(scope: str, table: str = "main") -> list[dict]:
    """The columns the CLI's run table shows for SCOPE (tenant, device), from the metric
    table, in its order."""
    import gpumux
    return [m for m in gpumux.metric_table() if m["scope"] == scope and m["table"] == table]


def _json_at(obj, path):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def _format(metric: dict, obj) -> str:
    """A summary value as the CLI's table prints it (models/output/text_format.cpp)."""
    kind = metric["format"]
    if kind == "interval":
        return f"[{_bound(_json_at(obj, metric['interval_of'] + '_low'))}, " \
               f"{_bound(_json_at(obj, metric['interval_of'] + '_high'))}]"
    value = _json_at(obj, metric["json"]) if metric["json"] else None
    if value is None:
        return "–"
    if kind == "verdict":
        text = ("met" if value else "missed") if isinstance(value, bool) else str(value)
        return _BADGES.get(text, _e(text or "–"))
    if kind == "duration":
        return _ms(value)
    if kind == "percent":
        return _num(100 * float(value), "{:.1f}%")
    if kind == "bytes":
        return _num(float(value) / float(1 << 30), "{:.1f} GiB")
    if kind == "rate":
        return _num(float(value), "{:.4g}/s")
    if kind == "factor":
        return _num(float(value), "{:.3g}×")
    if kind in ("count", "number") and isinstance(value, (int, float)):
        return _num(value, "{:,}" if isinstance(value, int) else "{:.4g}")
    return _e(value)


def _metric_table(rows: dict, scope: str, name_header: str) -> str:
    """One row per summary object of ROWS (name -> object), the CLI's columns for SCOPE."""
    columns = _metric_columns(scope)
    header = [m["header"] for m in columns]
    body = []
    for name, obj in rows.items():
        body.append([_e(name) if m["column"] == "name" else _format(m, obj) for m in columns])
    left = tuple(i for i, m in enumerate(columns) if m["format"] == "text")
    return _table(header or [name_header], body, left=left or (0,))


def _tenant_table(result) -> str:
    return _metric_table(result.summary.get("tenants") or {}, "tenant", "tenant")


def _device_table(result) -> str:
    return _metric_table(result.summary.get("devices") or {}, "device", "device")


def _gpu_prices(result) -> dict:
    """{physical GPU name: cost_per_hour} from the run's resolved scenario."""
    import yaml
    try:
        doc = yaml.safe_load(result.scenario_yaml) or {}
    except yaml.YAMLError:
        return {}
    return {str(g.get("name")): float(g.get("cost_per_hour") or 0)
            for g in doc.get("gpus") or [] if isinstance(g, dict)}


def _cost_table(result) -> str:
    """Per tenant, per hour and per 730-hour month: by allocation (the tenant's `cost`, its
    device's share of the GPU split among the device's tenants, over the measured window) and by
    use (the GPU's price x the tenant's GPU-seconds per second: what its occupancy costs), plus
    per GPU what nobody used."""
    summary = result.summary
    tenants = summary.get("tenants") or {}
    prices = _gpu_prices(result)
    window_s = (float(result.sim_time_ns) - _plot.measured_window(result)[0]) / 1e9
    if not prices or not any(prices.values()) or window_s <= 0:
        return '<p class="none">No cost_per_hour on the GPUs: no costs.</p>'
    rows = []
    used_by_gpu: dict = {}
    for name, t in tenants.items():
        gpu = str(t.get("device", "")).split("/")[0].split(",")[0]
        price = prices.get(gpu, 0.0)
        allocated_h = float(t.get("cost") or 0) / (window_s / 3600)
        used_h = price * float(t.get("gpu_seconds") or 0) / window_s
        used_by_gpu[gpu] = used_by_gpu.get(gpu, 0.0) + used_h
        rows.append([_e(name), _e(t.get("device", "")), _num(allocated_h, "${:.3f}"),
                     _num(allocated_h * _HOURS_PER_MONTH, "${:,.0f}"), _num(used_h, "${:.3f}"),
                     _num(used_h * _HOURS_PER_MONTH, "${:,.0f}")])
    for gpu, price in prices.items():
        idle_h = max(0.0, price - used_by_gpu.get(gpu, 0.0))
        rows.append([f'<span class="none">idle on {_e(gpu)}</span>', _e(gpu), "", "",
                     _num(idle_h, "${:.3f}"), _num(idle_h * _HOURS_PER_MONTH, "${:,.0f}")])
    return _table(["tenant", "device", "allocated $/h", "allocated $/month", "used $/h",
                   "used $/month"], rows, left=(0, 1)) + (
        '<p class="meta">Allocated: the device\'s share of its GPU\'s cost_per_hour split '
        "evenly among the device's tenants (what the reservation costs). Used: the GPU's "
        "cost_per_hour × the tenant's occupancy-weighted GPU-seconds per second of the measured "
        "window (docs/metrics.md: gpu_seconds); the idle rows are what nobody used. A month is "
        "730 h. USD.</p>")


def _overview_table(results) -> str:
    rows = []
    for r in results:
        verdicts = _plot.slo_verdicts(r)
        tenants = (r.summary.get("tenants") or {}).values()
        devices = list((r.summary.get("devices") or {}).values())
        busy = [float(d.get("sm_busy") or 0) for d in devices]
        p99 = [((t.get("latency_ns") or {}).get("p99")) for t in tenants]
        p99_ns = [float(v) for v in p99 if v]
        missed = sum(1 for v, _ in verdicts.values() if v == "missed")
        unsure = sum(1 for v, _ in verdicts.values() if v == "inconclusive")
        if not verdicts:
            slo = '<span class="none">no SLOs</span>'
        elif missed:
            slo = f'<span class="missed">{missed} missed</span>'
        elif unsure:
            slo = f'<span class="inconclusive">{unsure} inconclusive</span>'
        else:
            slo = '<span class="met">all met</span>'
        rows.append([_e(r.strategy or "as-is"), _num(len(devices), "{:d}"),
                     _num(sum(float(t.get("throughput_per_s") or 0) for t in tenants),
                          "{:.4g}/s"),
                     _ms(max(p99_ns) if p99_ns else None), slo,
                     _num(sum(int(t.get("failed") or 0) for t in tenants), "{:d}"),
                     _num(100 * sum(busy) / len(busy) if busy else None, "{:.1f}%"),
                     _num(r.summary.get("gpu_cost"), "${:.4g}")])
    return _table(["strategy", "devices", "throughput", "worst p99", "SLOs", "failed",
                   "mean SM busy", "GPU cost (USD)"], rows, left=(0, 4))


def _notes(result) -> str:
    notes = list(result.summary.get("notes") or [])
    if result.status != "complete":
        notes.insert(0, f"status: {result.status} — the figures cover a partial run")
    if not notes:
        return "<p class=\"none\">No assumptions flagged for this run.</p>"
    return '<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>"


def _window(result) -> str:
    warmup, duration = _plot.measured_window(result)
    if duration is None:
        return ""
    return (f" · measured window {_num(warmup / 1e9, '{:.4g}')}–"
            f"{_num(float(duration) / 1e9, '{:.4g}')} s (warm-up excluded from every table and "
            "CDF, shaded in the timelines)")


def _run_section(result, heading: str) -> str:
    parts = [f"<h2>{_e(heading)}</h2>",
             f'<p class="meta">simulated {_num(result.sim_time_ns / 1e9, "{:.4g}")} s'
             f'{_e(_window(result))} · '
             f'{_num(result.summary.get("events"), "{:,}")} events · status {_e(result.status)}'
             f' · GPU cost {_num(result.summary.get("gpu_cost"), "${:.4g}")} (USD over the '
             "measured window)</p>",
             "<h3>SLO verdicts</h3>", _verdict_section(result),
             "<h3>Tenants</h3>", _tenant_table(result),
             "<h3>Cost</h3>", _cost_table(result),
             "<h3>Devices</h3>", _device_table(result),
             "<h3>Latency</h3>",
             _figure_html(_plot.cdf_figure([result]),
                          "Latency CDF per tenant of the measured requests (warm-up excluded, "
                          "as the tables; left, log-scale ms) and its tail (right: fraction "
                          "of requests slower, log scale); dotted: latency SLO targets."),
             "<h3>Utilisation and memory</h3>",
             _figure_html(_plot.timeline_figure([result]),
                          "Per device over simulated time: SM busy and DRAM busy (faint: "
                          "samples, bold: 1 s mean), memory used (dotted: capacity); grey: "
                          "the warm-up, not in the tables."),
             "<h3>Notes and assumptions</h3>", _notes(result)]
    return "".join(parts)


def html_report(results, source: str = "") -> str:
    """The HTML page for a list of Results (one run, or the strategies of a compare file)."""
    import gpumux
    if not isinstance(results, list):
        results = [results]
    first = results[0]
    compare = len(results) > 1 or any(r.strategy for r in results)
    title = f"gpumux report: {first.scenario_name}"
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="meta">{_e(source)} · seed {_e(first.seed)}'
            + (f" · strategies: {_e(', '.join(r.strategy or 'as-is' for r in results))}"
               if compare else "") + f" · gpumux {_e(gpumux.__version__)}</p>"]
    if compare:
        body += ["<h2>Strategies</h2>", _overview_table(results),
                 _figure_html(_plot.compare_figure(results),
                              "p99 latency per tenant under each strategy (log scale; dashed: "
                              "p99 SLO targets), and per strategy throughput, mean SM busy and "
                              "GPU cost.")]
    for r in results:
        body.append(_run_section(r, f"Strategy {r.strategy}" if compare else "Run"))
    body.append('<footer>Written by gpumux report --html. Tables and CDFs cover the measured '
                'requests (arrival in [warmup, duration)); SLO verdicts are the engine\'s '
                '(run table, --json, --fail-on-slo).</footer>')
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{_e(title)}</title>"
            f"<style>{_CSS}</style></head><body><main>{''.join(body)}</main></body></html>\n")


def write_report(path, output) -> None:
    extension = os.path.splitext(os.fspath(output))[1].lower()
    if extension not in (".html", ".htm"):
        shown = f", not {extension}" if extension else " (no extension)"
        raise _plot.PlotError(f"--html {output}: gpumux writes .html{shown}")
    results = _plot.load_results(path)
    page = html_report(results, source=os.path.basename(os.fspath(path)))
    _plot.write_atomically(output, lambda f: f.write(page.encode("utf-8")))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="gpumux report",
                                     description="A self-contained HTML report of a result file.")
    parser.add_argument("file", metavar="OUT.h5")
    parser.add_argument("--html", required=True, metavar="REPORT.html")

    def write(args):
        write_report(args.file, args.html)
        return f"wrote {args.html}"

    return _plot.run_tool(parser, argv, "report", write)


if __name__ == "__main__":
    sys.exit(main())
