"""The server's process as the Python host starts and ends it: inherited
stderr in a host whose fd 2 is close-on-exec, and kill_grace=0 (issue 23)."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

import mcpping
from conftest import PY, peer

pytestmark = pytest.mark.timeout(60)

# A host whose stderr is close-on-exec (as Node's is): the server is spawned
# with stderr inherited, logs to it at start and on every request, and
# keeps working. The host then prints what the server wrote, read back
# from the file its stderr is.
HOST = r"""
import asyncio, os, sys
import mcpping
os.set_inheritable(2, False)
async def main():
    async with mcpping.connect(sys.argv[1:], keepalive=None) as p:
        for i in range(3):
            reply = await p.request("test/stderr", {"text": f"log {i}\n"}, timeout=10)
            assert reply.get("result") == {}, reply
        await p.ping()
    print("host done", flush=True)
if os.environ.get("HOST_LOOP") == "uvloop":
    import uvloop
    uvloop.run(main())
else:
    asyncio.run(main())
"""


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_inherited_stderr_reaches_the_server_in_a_host_whose_fd_2_is_cloexec(tmp_path, loop):
    log = tmp_path / "stderr.txt"
    with open(log, "wb") as err:
        done = subprocess.run([PY, "-c", HOST, *peer("echo", "--stderr", "started")],
                              env={**os.environ, "HOST_LOOP": loop},
                              stdout=subprocess.PIPE, stderr=err, timeout=50)
    written = log.read_text()
    assert done.returncode == 0, written
    assert done.stdout.decode() == "host done\n"
    assert written.splitlines()[:4] == ["started", "log 0", "log 1", "log 2"], written


# A server that notes a SIGTERM in a file, so the test sees whether one came.
NOTES_TERM = ("import signal, sys, time\n"
              "def noted(*_):\n"
              "    open(sys.argv[1], 'w').close()\n"
              "signal.signal(signal.SIGTERM, noted)\n"
              "print('{\"jsonrpc\":\"2.0\",\"method\":\"ready\"}', flush=True)\n"
              "while True:\n"
              "    time.sleep(0.01)\n")


async def test_kill_grace_zero_sigkills_without_a_sigterm(tmp_path):
    noted = tmp_path / "term"
    p = await mcpping.connect([PY, "-c", NOTES_TERM, str(noted)], initialize=False,
                              keepalive=None, kill_grace=0)
    assert (await anext(aiter(p.messages())))["method"] == "ready"
    info = await p.close()
    assert info.term_signal == signal.SIGKILL, info
    assert not noted.exists()
    # With a grace the same server gets its SIGTERM first: how this can fail.
    p = await mcpping.connect([PY, "-c", NOTES_TERM, str(noted)], initialize=False,
                              keepalive=None, kill_grace=0.3)
    assert (await anext(aiter(p.messages())))["method"] == "ready"
    info = await p.close()
    assert info.term_signal == signal.SIGKILL, info
    assert noted.exists()
