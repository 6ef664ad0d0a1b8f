"""A self-contained HTML report of a result file, and ``gpumux report OUT.h5 --html R.html``.

    python3 -m gpumux.report OUT.h5 --html report.html
    gpumux.report.html_report(gpumux.load("out.h5"))     # the page as a str

One file, nothing external: inline CSS, figures as base64 PNG. Sections: the run (scenario,
seed, status, simulated time), for a compare file the per-strategy overview and comparison
figure, then per run: SLO verdicts (met / missed per tenant, achieved vs target), the tenant and
device tables, latency CDFs, utilisation and memory timelines, and the run's notes and
assumptions. Exit status of the command: 0 written, 2 bad input (one line on stderr).
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
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px;background:#fff;min-height:100vh}
h1{font-size:1.6rem;margin:0 0 4px} h2{font-size:1.25rem;margin:32px 0 8px;
border-bottom:2px solid #e3e6eb;padding-bottom:4px} h3{font-size:1.05rem;margin:20px 0 6px}
.meta{color:#5a6270;margin:0 0 16px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:.86rem}
th,td{padding:4px 10px;border-bottom:1px solid #e3e6eb;text-align:right;white-space:nowrap}
th{background:#eef1f5;font-weight:600} td.l,th.l{text-align:left}
tr:hover td{background:#f8fafc}
.met{color:#11663a;background:#e3f5ea;font-weight:600;border-radius:4px;padding:1px 8px}
.missed{color:#9b1c1c;background:#fde8e8;font-weight:600;border-radius:4px;padding:1px 8px}
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


def _verdict_section(result) -> str:
    verdicts = _plot.slo_verdicts(result)
    names = result.tenant_names
    met = sum(1 for v in verdicts.values() if v[0])
    missed = len(verdicts) - met
    cards = (f'<div class="verdicts"><div class="card"><b>{met}</b> met</div>'
             f'<div class="card"><b>{missed}</b> missed</div>'
             f'<div class="card"><b>{len(names) - len(verdicts)}</b> without an SLO</div></div>')
    rows = []
    for name in names:
        if name not in verdicts:
            rows.append([_e(name), '<span class="none">no SLO</span>', "", ""])
            continue
        ok, checks = verdicts[name]
        badge = '<span class="met">met</span>' if ok else '<span class="missed">missed</span>'
        achieved = ", ".join(f"{k} {_ms(a)}" for k, a, _ in checks)
        target = ", ".join(f"{k} ≤ {_ms(t)}" for k, _, t in checks)
        rows.append([_e(name), badge, _e(achieved), _e(target)])
    return cards + _table(["tenant", "SLO", "achieved", "target"], rows, left=(0, 1, 2, 3))


def _tenant_table(result) -> str:
    rows = []
    for name, t in (result.summary.get("tenants") or {}).items():
        lat = t.get("latency_ns") or {}
        rows.append([_e(name), _e(t.get("device", "")), _num(t.get("requests"), "{:d}"),
                     _num(t.get("completed"), "{:d}"), _num(t.get("failed"), "{:d}"),
                     _ms(lat.get("p50")), _ms(lat.get("p99")), _ms(lat.get("p999")),
                     _ms(lat.get("mean")), _num(t.get("throughput_per_s"), "{:.4g}/s"),
                     _num(t.get("slowdown_mean"), "{:.3g}×"), _num(t.get("oom_events"), "{:d}"),
                     _num(t.get("cost"), "${:.4g}")])
    return _table(["tenant", "device", "requests", "completed", "failed", "p50", "p99",
                   "p99.9", "mean", "throughput", "slowdown", "OOMs", "cost (USD)"], rows,
                  left=(0, 1))


def _device_table(result) -> str:
    rows = []
    gib = float(1 << 30)
    for name, d in (result.summary.get("devices") or {}).items():
        rows.append([_e(name), _e(d.get("profile", "")), _e(d.get("sharing", "")),
                     _num(d.get("sms"), "{:d}"),
                     _num((d.get("memory_bytes") or 0) / gib, "{:.1f} GiB"),
                     _num((d.get("memory_peak_bytes") or 0) / gib, "{:.1f} GiB"),
                     _num(100 * (d.get("sm_busy") or 0), "{:.1f}%"),
                     _num(100 * (d.get("dram_busy") or 0), "{:.1f}%"),
                     _num(d.get("context_switches"), "{:d}")])
    return _table(["device", "profile", "sharing", "SMs", "memory", "memory peak", "SM busy",
                   "DRAM busy", "context switches"], rows, left=(0, 1, 2))


def _overview_table(results) -> str:
    rows = []
    for r in results:
        verdicts = _plot.slo_verdicts(r)
        tenants = (r.summary.get("tenants") or {}).values()
        devices = list((r.summary.get("devices") or {}).values())
        busy = [float(d.get("sm_busy") or 0) for d in devices]
        p99 = [((t.get("latency_ns") or {}).get("p99")) for t in tenants]
        p99_ns = [float(v) for v in p99 if v]
        missed = sum(1 for v in verdicts.values() if not v[0])
        rows.append([_e(r.strategy or "as-is"), _num(len(devices), "{:d}"),
                     _num(sum(float(t.get("throughput_per_s") or 0) for t in tenants),
                          "{:.4g}/s"),
                     _ms(max(p99_ns) if p99_ns else None),
                     '<span class="met">all met</span>' if verdicts and not missed else
                     (f'<span class="missed">{missed} missed</span>' if missed else
                      '<span class="none">no SLOs</span>'),
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


def _run_section(result, heading: str) -> str:
    parts = [f"<h2>{_e(heading)}</h2>",
             f'<p class="meta">simulated {_num(result.sim_time_ns / 1e9, "{:.4g}")} s · '
             f'{_num(result.summary.get("events"), "{:,}")} events · status {_e(result.status)}'
             f' · GPU cost {_num(result.summary.get("gpu_cost"), "${:.4g}")} (USD)</p>',
             "<h3>SLO verdicts</h3>", _verdict_section(result),
             "<h3>Tenants</h3>", _tenant_table(result),
             "<h3>Devices</h3>", _device_table(result),
             "<h3>Latency</h3>",
             _figure_html(_plot.cdf_figure([result]),
                          "Latency CDF per tenant (left, log-scale ms) and its tail (right: "
                          "fraction of requests slower, log scale); dotted: SLO targets."),
             "<h3>Utilisation and memory</h3>",
             _figure_html(_plot.timeline_figure([result]),
                          "Per device over simulated time: SM busy and DRAM busy (faint: "
                          "samples, bold: 1 s mean), memory used (dotted: capacity)."),
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
    body.append('<footer>Written by gpumux report --html. Latencies from the simulated '
                'request records (warmup included); SLO met when every achieved percentile is at '
                'or under its target (as run --fail-on-slo).</footer>')
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
    temp = f"{output}.tmp"
    with open(temp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(temp, output)


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
