"""The example notebook runs top to bottom (nbclient, the Debian python3 kernel)."""
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "python" / "examples" / "sharing-tradeoffs.ipynb"


def test_example_notebook_executes():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(REPO)}})
    client.execute(env=dict(os.environ))
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(str(o.get("data", {}).get("text/plain", "")) + o.get("text", "") for o in outputs)
    for strategy in ("mig", "time-slicing", "mps", "dedicated"):
        assert strategy in text
    assert "kernel-boundary" in text and "instruction" in text
