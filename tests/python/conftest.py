"""Shared fixtures: paths to the peers, free ports, process checks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
import importlib.util
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "peers"
HERE = Path(__file__).resolve().parent
PY = sys.executable
#: The event loops a test runs its host under: asyncio, and uvloop
#: (requirements-dev.txt installs it; skipped only where it is missing).
LOOPS = ["asyncio", pytest.param("uvloop", marks=pytest.mark.skipif(
    importlib.util.find_spec("uvloop") is None, reason="uvloop is in requirements-dev.txt"))]


def peer(name: str, *args: str) -> list[str]:
    """The command line of a fault peer from tests/peers."""
    return [PY, str(PEERS / f"{name}.py"), *args]


@contextmanager
def fault_server(mode: str, *options: str) -> Iterator[str]:
    """tests/peers/http_fault.py in one --mode (and options: --tls); yields
    its URL and kills it after."""
    proc = subprocess.Popen(peer("http_fault", "--mode", mode, *options), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def sdk_server(*args: str) -> list[str]:
    """The command line of the MCPServer-based test server."""
    return [PY, str(HERE / "servers" / "sdk_server.py"), *args]


DEMO = [PY, "-m", "mcpping.demo"]

# Each framework suite runs in the environment of its mcp major: mcp 2.x
# here, mcp 1.x in build/venv-mcp1 (`make test-python` runs both).
collect_ignore = (["test_frameworks_mcp1.py"] if int(metadata.version("mcp").split(".")[0]) >= 2
                  else ["test_frameworks.py"])


def field(model: object, name: str) -> object:
    """A result's field by its mcp 2.x name (snake_case) or, on mcp 1.x, camelCase."""
    if hasattr(model, name):
        return getattr(model, name)
    head, *rest = name.split("_")
    return getattr(model, head + "".join(p.title() for p in rest))


def expected_mode() -> str:
    """The runtime's mode while one asyncio loop has connections: host,
    unless the suite runs in thread mode (MCPPING_HOST_MODE=0, make test)."""
    return "thread" if os.environ.get("MCPPING_HOST_MODE") == "0" else "host"


def process_alive(pid: int) -> bool:
    """True if pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    """Polls until something accepts on port (or the process died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)  # readiness polling of a foreign process, not test sync
    raise TimeoutError(f"nothing listening on {port}")


def serve_sdk_http(*args: str):
    """Runs the SDK test server over Streamable HTTP on a free port (extra
    args after the port) and yields its URL; the server ends with the generator."""
    port = free_port()
    proc = subprocess.Popen(sdk_server("http", str(port), *args), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def http_server():
    """A real MCPServer over Streamable HTTP on a free port; yields its URL."""
    yield from serve_sdk_http()
