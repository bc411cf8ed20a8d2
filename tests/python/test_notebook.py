"""examples/latency.ipynb runs headless (nbclient, kernel python3)."""

from __future__ import annotations

import subprocess
import sys

import nbformat
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from nbclient import NotebookClient

from conftest import ROOT


def _ensure_kernel() -> None:
    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--user"], check=True,
                       capture_output=True)


def test_latency_notebook_executes_and_plots(tmp_path):
    _ensure_kernel()
    nb = nbformat.read(ROOT / "examples" / "latency.ipynb", as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the plot
    assert any("text/html" in o.get("data", {}) and "mcpping-stats" in o["data"]["text/html"]
               for o in outputs)  # peer.stats rendered as a table
    assert any("closed" in o.get("text", "") for o in outputs if o.output_type == "stream")
