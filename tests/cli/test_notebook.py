"""The example notebooks run top to bottom (nbclient, the Debian python3 kernel) from their own
folder and from the repository root, without PYTHONPATH, show their figures inline, and their
stated conclusions still hold."""
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "python" / "examples"
NOTEBOOK = EXAMPLES / "sharing-tradeoffs.ipynb"


def _execute(notebook: Path, folder: Path):
    nb = nbformat.read(notebook, as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # The notebook must find the package itself; only say which build holds the extension.
    if os.environ.get("GPUMUX_BIN") and "GPUMUX_BUILD_DIR" not in env:
        env["GPUMUX_BUILD_DIR"] = str(Path(os.environ["GPUMUX_BIN"]).resolve().parent)
    client = NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    client.execute(env=env)
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    errors = [f"{o.ename}: {o.evalue}" for o in outputs if o.output_type == "error"]
    assert not errors, errors
    return nb, outputs


@pytest.mark.parametrize("folder", [EXAMPLES, REPO], ids=["own-folder", "repo-root"])
def test_example_notebook_runs_and_shows_figures(folder):
    nb, outputs = _execute(NOTEBOOK, folder)
    source = "".join(cell.source for cell in nb.cells)
    assert 'matplotlib.use("Agg")' not in source and "matplotlib.use('Agg')" not in source
    # one figure per plot cell, as PNG in the notebook (inline), not only a "<Figure ...>" repr
    plot_cells = [c for c in nb.cells if c.cell_type == "code" and "plt.show()" in c.source]
    assert len(plot_cells) >= 3
    for cell in plot_cells:
        assert any("image/png" in o.get("data", {}) for o in cell.outputs), cell.source[:80]
    text = "".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                   for o in outputs)
    for strategy in ("mig", "time-slicing", "mps", "dedicated"):
        assert strategy in text
    assert "kernel-boundary" in text and "instruction" in text
    # the conclusion is stated (markdown) and re-checked against the runs (its last cell)
    assert any(c.cell_type == "markdown" and c.source.startswith("## Conclusion") for c in nb.cells)
    verdicts = [line for line in text.splitlines() if line.startswith(("holds:", "CHANGED:"))]
    assert len(verdicts) >= 5, text[-2000:]
    assert not [v for v in verdicts if v.startswith("CHANGED")], verdicts
