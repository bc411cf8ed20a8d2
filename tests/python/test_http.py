"""The Streamable HTTP pinger against a fault server on loopback
(tests/peers/http_fault.py): issue 8 item 11, a 404 is not always
"unsupported"."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

import mcpping
from conftest import PEERS, PY
from mcpping import _native
from mcpping.http import HttpPeer


@pytest.fixture
def http_fault(request: pytest.FixtureRequest) -> Iterator[str]:
    proc = subprocess.Popen([PY, str(PEERS / "http_fault.py"), "--mode", request.param],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("http_fault", ["expire"], indirect=True)
async def test_expired_session_is_initialized_again_and_the_ping_answered(http_fault, tmp_path):
    log = tmp_path / "records.jsonl"
    p = HttpPeer(http_fault, ping_timeout=5, record=str(log))
    try:
        await p.initialize(5)
        assert p.session_id == "session-1"
        rtt = await p.ping(5)  # meets the 404, re-initializes, is answered
        assert rtt > 0
        assert p.session_id == "session-2"
        assert await p.ping(5) > 0
        assert p.driver.stats.lost == 0
    finally:
        await p.close()
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert "reconnect" in events and "ping_unsupported" not in events
    assert events.count("ping_ok") == 2


@pytest.mark.parametrize("http_fault", ["unsupported"], indirect=True)
async def test_404_with_method_not_found_is_unsupported(http_fault):
    p = HttpPeer(http_fault, ping_timeout=5)
    try:
        await p.initialize(5)
        with pytest.raises(mcpping.PingUnsupported):
            await p.ping(5)
        assert p.session_id == "session-1"  # not re-initialized
    finally:
        await p.close()


def test_classification_is_the_c_cores():
    assert _native.http_classify(200, b"", True) == "answer"
    assert _native.http_classify(404, b'{"error":{"code":-32601,"message":"x"}}', True) == "unsupported"
    assert _native.http_classify(404, b"Not Found", True) == "session_expired"
    assert _native.http_classify(404, b"Not Found", False) == "failed"
    assert _native.http_classify(500, b"", True) == "failed"
