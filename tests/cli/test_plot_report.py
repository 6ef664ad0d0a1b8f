"""gpumux plot and gpumux report --html: figures of run and compare files (PNG/SVG that decode,
with the expected content), one-line errors with exit 2, and an HTML report that is
self-contained and fits a 1400 px window in headless Chromium (Debian's chromium, which
scripts/install-deps.sh installs: its absence fails the test).
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import base64
import html
import json
import os
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt)

REPO = Path(__file__).resolve().parents[2]
HYBRID = str(REPO / "scenarios" / "hybrid-h100.yaml")
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plots")
    run = folder / "run.h5"
    cmp = folder / "cmp.h5"
    r = gpumux("run", HYBRID, "-o", str(run), "--set", "duration=5s", "--quiet")
    assert r.returncode == 0, r.stderr
    r = gpumux("compare", HYBRID, "--strategies", "mig,time-slicing,mps", "-o", str(cmp),
               "--set", "duration=5s")
    assert r.returncode == 0, r.stderr
    return {"run": run, "cmp": cmp, "dir": folder}


def png_pixels(path):
    """(width, height, distinct colours in a sample of rows) of an 8-bit RGB/RGBA PNG."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, colour_type = header[:4]
    assert depth == 8 and colour_type in (2, 6), header
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, colours = 0, bytearray(stride), set()
    for y in range(height):
        filter_type = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if filter_type == 1:
                line[i] = (line[i] + left) & 255
            elif filter_type == 2:
                line[i] = (line[i] + up) & 255
            elif filter_type == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif filter_type == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
                line[i] = (line[i] + pred) & 255
        if y % 7 == 0:
            for x in range(0, width, 3):
                colours.add(bytes(line[x * channels:x * channels + 3]))
        previous = line
        rows += 1
    return width, height, colours


@pytest.mark.parametrize("kind", ["cdf", "timeline"])
def test_plot_run_file(files, kind):
    out = files["dir"] / f"run-{kind}.png"
    r = gpumux("plot", str(files["run"]), "--kind", kind, "-o", str(out))
    assert r.returncode == 0, r.stderr
    width, height, colours = png_pixels(out)
    assert width > 600 and height > 300
    assert len(colours) > 10  # lines in many colours, not a blank canvas


def test_plot_default_kinds_and_svg(files):
    out = files["dir"] / "cmp.svg"
    r = gpumux("plot", str(files["cmp"]), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "(compare)" in r.stdout
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    for label in ("mig", "time-slicing", "mps", "p99 SLO target", "GPU cost (USD)"):
        assert label in text, label
    r = gpumux("plot", str(files["run"]), "-o", str(files["dir"] / "default.svg"))
    assert r.returncode == 0 and "(cdf)" in r.stdout, r.stderr
    svg = (files["dir"] / "default.svg").read_text()
    assert "latency (ms, log scale)" in svg and "p99 SLO 50 ms" in svg


def test_plot_compare_file_per_strategy_rows(files):
    for kind in ("cdf", "timeline"):
        out = files["dir"] / f"cmp-{kind}.png"
        r = gpumux("plot", str(files["cmp"]), "--kind", kind, "-o", str(out))
        assert r.returncode == 0, r.stderr
        _, height, _ = png_pixels(out)
        assert height > 900  # one row per strategy


def test_plot_runs_from_another_directory(files, tmp_path):
    r = gpumux("plot", str(files["run"]), "-o", "fig.png", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fig.png").stat().st_size > 10_000


@pytest.mark.parametrize("args,message", [
    (["missing.h5", "-o", "f.png"], "missing.h5: not a gpumux result file (no such file)"),
    (["notes.h5", "-o", "f.png"], "notes.h5: not a gpumux result file (not an HDF5 file)"),
    (["RUN", "-o", "f.pdf"], "-o f.pdf: gpumux writes .png or .svg, not .pdf"),
    (["RUN", "-o", "figure"], "-o figure: gpumux writes .png or .svg (no extension)"),
    (["RUN", "--kind", "bars", "-o", "f.png"], "--kind bars: not one of cdf, timeline, compare"),
    (["RUN", "--kind", "compare", "-o", "f.png"], "--kind compare needs a compare file"),
    (["RUN"], "'--output' is required"),
])
def test_plot_bad_input_one_line_exit_2(files, tmp_path, args, message):
    (tmp_path / "notes.h5").write_text("not hdf5\n")
    args = [str(files["run"]) if a == "RUN" else a for a in args]
    r = gpumux("plot", *args, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "f.png").exists()


def test_plot_help():
    r = gpumux("plot", "--help")
    assert r.returncode == 0
    assert "--kind" in r.stdout and "FIG.png" in r.stdout and "examples:" in r.stdout


def _report(files, which, tmp_path):
    out = tmp_path / f"{which}.html"
    r = gpumux("report", str(files[which]), "--html", str(out))
    assert r.returncode == 0, r.stderr
    return out, out.read_text(encoding="utf-8")


def test_report_html_is_self_contained(files, tmp_path):
    _, page = _report(files, "run", tmp_path)
    for section in ("SLO verdicts", "Tenants", "Devices", "Latency", "Utilisation and memory",
                    "Notes and assumptions"):
        assert f"<h3>{section}</h3>" in page, section
    # One verdict badge per tenant with an SLO (large-* and small-a/b-*), beside its name.
    section = page.split("<h3>SLO verdicts</h3>")[1].split("<h3>")[0]
    assert len(re.findall(r'<td class="l">[^<]+</td><td class="l"><span class="'
                          r'(?:met|missed|inconclusive)">', section)) == 9
    assert page.count("no SLO</span>") == 6
    assert "context_switch" in page  # the run's assumption note
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2
    for image in images:
        assert base64.b64decode(image)[:8] == b"\x89PNG\r\n\x1a\n"
    # nothing external: no links, scripts or sources other than data: URIs
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "<script" not in page


def test_report_html_compare_file(files, tmp_path):
    _, page = _report(files, "cmp", tmp_path)
    assert "<h2>Strategies</h2>" in page
    for strategy in ("mig", "time-slicing", "mps"):
        assert f"<h2>Strategy {strategy}</h2>" in page
    assert len(re.findall(r"data:image/png;base64,", page)) == 1 + 2 * 3


@pytest.mark.parametrize("args,message", [
    (["missing.h5", "--html", "r.html"], "missing.h5: not a gpumux result file (no such file)"),
    (["RUN", "--html", "r.pdf"], "--html r.pdf: gpumux writes .html, not .pdf"),
])
def test_report_html_bad_input(files, tmp_path, args, message):
    args = [str(files["run"]) if a == "RUN" else a for a in args]
    r = gpumux("report", *args, cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# Appended to a copy of the page (the report itself has no script): every element's box against
# the viewport, and the page's scroll width, written into the DOM that --dump-dom prints.
OVERFLOW_PROBE = """<script>
(function () {
  const view = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width > 0 && (box.right > view + 0.5 || box.left < -0.5)) {
      wide.push(el.tagName.toLowerCase() + " " + Math.round(box.left) + ".." + Math.round(box.right));
    }
  }
  const out = document.createElement("pre");
  out.id = "overflow-probe";
  out.textContent = JSON.stringify({inner: window.innerWidth, client: view,
                                    scroll: document.documentElement.scrollWidth, wide: wide});
  document.body.appendChild(out);
})();
</script>"""
VIEWPORT = 1400  # issue 35: a laptop's browser window


def chromium(tmp_path, page, *args):
    """Headless Chromium (Debian's package, installed by scripts/install-deps.sh) on PAGE."""
    assert os.path.exists(CHROMIUM), (
        f"{CHROMIUM} is missing: run scripts/install-deps.sh (Debian package chromium)")
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-background-networking", "--disable-component-update",
                           "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                           "--virtual-time-budget=5000", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=180)


def overflow(tmp_path, page):
    """What the probe measured on PAGE at VIEWPORT px wide: inner/client/scroll width and the
    elements reaching past the viewport's edges."""
    probed = tmp_path / f"probe-{page.name}"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>",
                                                               OVERFLOW_PROBE + "</body>"),
                      encoding="utf-8")
    r = chromium(tmp_path, probed, f"--window-size={VIEWPORT},1000", "--dump-dom")
    found = re.search(r'<pre id="overflow-probe">([^<]*)</pre>', r.stdout)
    assert found, r.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


def test_overflow_probe_sees_a_wide_element(tmp_path):
    """The probe can fail: a 2000 px table inside a scrolling box is reported."""
    page = tmp_path / "wide.html"
    page.write_text('<html><body><div style="overflow-x:auto"><table style="width:2000px">'
                    '<tr><td>x</td></tr></table></div></body></html>', encoding="utf-8")
    seen = overflow(tmp_path, page)
    assert seen["inner"] == VIEWPORT and seen["client"] <= VIEWPORT
    assert any(w.startswith("table ") for w in seen["wide"]), seen


@pytest.mark.parametrize("which", ["run", "cmp", "quickstart"])
def test_report_html_fits_1400_px_in_chromium(files, tmp_path, which):
    """The page at 1400 px: nothing wider than the viewport (no horizontal scroll bar, no table
    scrolling inside its box), and a screenshot that is not blank."""
    if which == "quickstart":  # `make run`'s result file, as the README has it reported
        files = dict(files, quickstart=tmp_path / "quickstart.h5")
        r = gpumux("run", str(REPO / "scenarios" / "quickstart.yaml"), "-o",
                   str(files["quickstart"]), "--set", "duration=5s", "--set", "warmup=1s",
                   "--quiet")
        assert r.returncode == 0, r.stderr
    out, _ = _report(files, which, tmp_path)
    seen = overflow(tmp_path, out)
    assert seen["inner"] == VIEWPORT, seen
    assert seen["scroll"] <= seen["client"] and seen["wide"] == [], seen
    shot = tmp_path / "shot.png"
    r = chromium(tmp_path, out, f"--window-size={VIEWPORT},2000", f"--screenshot={shot}")
    assert shot.exists(), r.stderr[-2000:]
    width, height, colours = png_pixels(shot)
    assert (width, height) == (VIEWPORT, 2000)
    # text, tables, badges and the CDF figure: many colours, not a blank page
    assert len(colours) > 50, len(colours)
