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
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("mcpping-stats" in h for h in html)  # peer.stats rendered as a table
    # The peer's card: before any ping no sparkline, after 50 pings one with 50 points.
    cards = [h for h in html if "mcpping-peer" in h]
    assert len(cards) == 2 and "<svg" not in cards[0]
    assert "mcpping-demo" in cards[1] and "2025-11-25" in cards[1]
    points = cards[1].split("points='", 1)[1].split("'", 1)[0].split()
    assert len(points) == 50
    assert any("closed" in o.get("text", "") for o in outputs if o.output_type == "stream")
