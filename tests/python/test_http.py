"""The Streamable HTTP pinger against a fault server on loopback
(tests/peers/http_fault.py): issue 8 item 11, a 404 is not always
"unsupported"."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
import urllib.error
from collections.abc import Iterator
from typing import Any

import pytest

import mcpping
from mcpping import _http_io
from conftest import fault_server
from mcpping import _native
from mcpping.http import HttpPeer
from mcpping.errors import PeerClosed
from mcpping.peer import HandshakeError


@pytest.fixture
def http_fault(request: pytest.FixtureRequest) -> Iterator[str]:
    with fault_server(request.param) as url:
        yield url


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


def _opened(headers: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    """A session machine whose handshake's POST was answered with session
    s1, and that POST's START."""
    m = _native.HttpSession("http://127.0.0.1:9/mcp", headers, 0, False)
    init = b'{"jsonrpc":"2.0","id":1,"method":"initialize"}'
    start, *rest = m.post(init, 1, True)
    assert rest == []
    assert m.response(start["exchange"], 200, "application/json", "s1", None) == [{"do": "session", "id": "s1"}]
    assert m.body(start["exchange"], b' {"jsonrpc":"2.0","id":1,"result":{}}') == []
    assert m.end(start["exchange"], False) == [{"do": "receive", "data": b'{"jsonrpc":"2.0","id":1,"result":{}}'}]
    return m, start


def test_the_session_machine_is_cs_its_headers_a_404_renews_what_waits_goes_in_order():
    """C's sequencing (mcpp_http_session), as Node's binding drives it
    (tests/node/http_session.test.js): its requests carry C's headers (the
    caller's first, never replacing mcpping's), a 404 on the session renews
    it, and what is posted meanwhile waits and then goes in order."""
    m, start = _opened({"Authorization": "Bearer t", "ACCEPT": "text/html"})
    assert (start["do"], start["method"], start["target"], start["port"]) == ("start", "POST", "/mcp", 9)
    assert start["body"] == b'{"jsonrpc":"2.0","id":1,"method":"initialize"}'
    assert start["connect_timeout_ms"] == 60000
    assert start["headers"] == [("Authorization", "Bearer t"), ("Content-Type", "application/json"),
                                ("Accept", "application/json, text/event-stream")]
    assert m.session_id == "s1"
    assert m.set_version("2025-11-25") == []
    ping = b'{"jsonrpc":"2.0","id":"mcpping-ka-1","method":"ping"}'
    call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call"}'
    [p] = m.post(ping, 2, False)
    assert p["headers"][-2:] == [("Mcp-Session-Id", "s1"), ("MCP-Protocol-Version", "2025-11-25")]
    assert m.response(p["exchange"], 202, None, None, None) == []  # a 202: nothing to read
    assert m.end(p["exchange"], False) == []
    [p] = m.post(ping, 2, False)
    assert m.response(p["exchange"], 404, "text/plain", None, None) == []
    assert m.end(p["exchange"], False) == [{"do": "session", "id": None}, {"do": "renew"}]
    assert m.post(call, 3, False) == []  # waits for the new session
    again = m.renewed(True, None)
    assert [(a["do"], a["tag"], a["body"]) for a in again] == [("start", 2, ping), ("start", 3, call)]
    assert m.session_id is None
    with pytest.raises(TypeError, match="bytes-like object is required, not 'int'"):
        m.post(1, 0, False)
    with pytest.raises(TypeError, match="an integer is required"):
        m.settled("mcpping-3")
    with pytest.raises(OverflowError, match="negative"):
        m.settled(-1)
    with pytest.raises(ValueError, match="^is not an http:// or https:// URL$"):
        _native.HttpSession("ftp://x/", {}, 0, False)
    with pytest.raises(TypeError, match="^headers must map str to str$"):
        _native.HttpSession("http://127.0.0.1:9/mcp", {"A": 1}, 0, False)
    for not_a_mapping in ([("A", "b")], None):
        with pytest.raises(TypeError, match="^headers must be a mapping of str to str$"):
            _native.HttpSession("http://127.0.0.1:9/mcp", not_a_mapping, 0, False)
    with pytest.raises(ValueError, match="^headers: 'A' has a NUL character$"):
        _native.HttpSession("http://127.0.0.1:9/mcp", {"A": "a\0b"}, 0, False)
    with pytest.raises(ValueError, match="^max_body must be >= 0$"):
        _native.HttpSession("http://127.0.0.1:9/mcp", {}, -1, False)


async def test_a_header_that_would_break_the_request_is_refused_at_once():
    """C's rule (mcpp_http_header_problem), at construction, not in a POST's
    thread later: a name that is no HTTP token, a CR/LF that would inject."""
    with pytest.raises(ValueError, match=r"^headers: 'Bad Name' is not an HTTP header name"):
        HttpPeer("http://127.0.0.1:9/mcp", headers={"Bad Name": "x"})
    with pytest.raises(ValueError, match=r"^headers: 'X' has a control character in its value"):
        HttpPeer("http://127.0.0.1:9/mcp", headers={"X": "a\r\nInjected: 1"})
    # Past Latin-1: the session went, and sent it as UTF-8 (node:http throws at the request).
    with pytest.raises(ValueError, match=r"^headers: 'X' has a character past Latin-1 in its value"):
        HttpPeer("http://127.0.0.1:9/mcp", headers={"X": "5 €"})
    assert _native.http_header_problem("X", "café") is None
    assert _native.http_header_problem("Authorization", "Bearer t\tx") is None


@pytest.mark.parametrize("http_fault", ["strict"], indirect=True)
async def test_callers_headers_are_sent_but_never_replace_the_protocols(http_fault):
    """A config's headers go with every request; ones named like mcpping's
    own (any case) do not replace them, so the server still offers SSE and
    sees the session mcpping holds."""
    forged = {"Authorization": "Bearer t", "accept": "text/html", "MCP-SESSION-ID": "forged",
              "content-type": "text/plain"}
    async with mcpping.http.connect(http_fault, headers=forged, keepalive=None, listen=False) as p:
        assert p.session_id == "session-1"
        assert await p.ping(5) > 0
        reply = await p.request("tools/list", timeout=5)
        assert reply["error"]["code"] == -32601, reply  # not -32600 "bad header"


@pytest.mark.parametrize("http_fault", ["strict"], indirect=True)
async def test_a_urls_user_and_password_go_as_basic_credentials(http_fault):
    """C's rule (mcpp_http_url_credentials): http://u:p%40@host/ sends
    Authorization: Basic of "u:p@" and never the credentials in the URL
    (urllib took "u:p%40@127.0.0.1" for the host and failed to resolve it);
    the caller's own Authorization wins over them."""
    with_credentials = http_fault.replace("http://", "http://u:p%40@")
    async with mcpping.http.connect(with_credentials, keepalive=None, listen=False) as p:
        assert p.session_id == "session-1"  # the strict server took the handshake's POST
        assert await p.ping(5) > 0
        assert p.url == with_credentials
    # x:y would be refused by the strict server: the caller's Bearer t went instead.
    other = http_fault.replace("http://", "http://x:y@")
    async with mcpping.http.connect(other, headers={"authorization": "Bearer t"}, keepalive=None,
                                    listen=False) as p:
        assert await p.ping(5) > 0
    with pytest.raises(HandshakeError, match="bad header Authorization"):
        await mcpping.http.connect(other, keepalive=None, listen=False)


def test_a_long_password_in_the_url_still_goes_as_basic_credentials():
    """The session sized the URL's Authorization in a 1 KiB buffer: a longer
    one (a token as the password) was refused as "out of memory"."""
    url = "http://u:" + "p" * 2000 + "@127.0.0.1:9/mcp"
    start = _native.HttpSession(url, {}, 0, False).post(b'{"jsonrpc":"2.0","method":"x"}', 0, False)[0]
    assert ("Authorization", _native.http_url(url, {})["authorization"]) in start["headers"]


def _serve(handler: type) -> tuple[Any, str]:
    """A loopback HTTP server for handler in a thread of its own: (server,
    its /mcp URL); the caller shuts it down."""
    import http.server

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/mcp"


async def test_a_url_that_is_a_web_page_fails_the_handshake_at_once_with_why(tmp_path):
    """A 200 text/html answer to a POST (the URL is no MCP endpoint): each
    request is told so by C (mcpp_http_unreadable_answer), where it waited
    out its timeout and the handshake said only "no initialize result"."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = b"<html><body>Welcome</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server, url = _serve(Page)
    try:
        with pytest.raises(HandshakeError) as e:
            await mcpping.http.connect(url, keepalive=None, listen=False, init_timeout=60)
        assert str(e.value) == ("initialize failed: -32000 the server answered HTTP 200 with text/html, "
                                "not JSON; server/discover failed: -32000 the server answered HTTP 200 "
                                "with text/html, not JSON")
    finally:
        server.shutdown()
        server.server_close()


def _slow_tool_server(delay: float):
    """A Streamable HTTP server whose tools/call answers after delay seconds
    (plain JSON, nothing sent meanwhile); everything else at once."""
    import http.server

    class Slow(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802
            msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if "id" not in msg:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if msg["method"] == "tools/call":
                time.sleep(delay)
            result = {"protocolVersion": "2025-11-25", "capabilities": {},
                      "serverInfo": {"name": "slow", "version": "1"}} \
                if msg["method"] == "initialize" else {"content": []}
            body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    return _serve(Slow)


async def test_a_long_call_is_answered_whatever_the_posts_send_bound(monkeypatch):
    """A POST's answer has no bound of its own (the engine's deadline
    decides): urllib's 60 s read timeout ended the whole session, "cannot
    reach URL: timed out", under a tool call that took longer. Here the
    session's connect bound on each START is cut to 0.3 s and the call
    takes 1 s."""
    start = mcpping.http.HttpPeer._start

    def short_bound(self, a):
        start(self, {**a, "connect_timeout_ms": 300})

    monkeypatch.setattr(mcpping.http.HttpPeer, "_start", short_bound)
    server, url = _slow_tool_server(1.0)
    try:
        async with mcpping.http.connect(url, keepalive=None, listen=False) as p:
            reply = await p.request("tools/call", {"name": "slow"}, timeout=30)
            assert reply["result"] == {"content": []}
            assert not p.closed and p.fatal is None
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("http_fault", ["freeze"], indirect=True)
async def test_close_cuts_the_posts_still_waiting_for_answers(http_fault):
    """A frozen server never answers: close() ends the POSTs waiting on it
    (nothing else bounds an answer) and closes their connections."""
    p = await mcpping.http.connect(http_fault, keepalive=None, listen=False)
    waiting = asyncio.ensure_future(p.request("tools/list", timeout=60))
    while not p._pool._open:  # the POST is on the wire once its connection is open
        await asyncio.sleep(0)
    await p.close()
    with pytest.raises(PeerClosed):
        await waiting
    assert not p._posts and not p._pool._open


async def test_a_post_still_connecting_at_close_is_not_left_waiting(monkeypatch):
    """close() cuts the POSTs in flight; one still connecting had nothing to
    cut, then sent its request and waited on the frozen server for good. Its
    connect is held here until close() is over; the server is a socket that
    never accepts (the kernel completes the connect)."""
    frozen = socket.create_server(("127.0.0.1", 0))
    url = "http://127.0.0.1:%d/mcp" % frozen.getsockname()[1]
    p = await mcpping.http.connect(url, keepalive=None, initialize=False, listen=False)
    connecting, release = asyncio.Event(), asyncio.Event()
    real_socket = _http_io.Pool._socket
    held = []

    async def held_socket(self, host, port):
        if not connecting.is_set():  # the POST's; close()'s DELETE goes at once
            held.append(asyncio.current_task())
            connecting.set()
            await release.wait()
        return await real_socket(self, host, port)

    monkeypatch.setattr(_http_io.Pool, "_socket", held_socket)
    waiting = asyncio.ensure_future(p.request("tools/list", timeout=60))
    await connecting.wait()
    [post] = held
    await p.close()
    assert post.done()  # its connect was called off before it opened anything
    release.set()
    with pytest.raises(PeerClosed):
        await waiting
    frozen.close()
    assert not p._posts and not p._pool._open


def test_a_name_that_does_not_resolve_is_enotfound_in_both_hosts():
    """Node's error code for a host that does not resolve; Python said
    "[Errno -2] Name or service not known" (C: mcpp_http_resolve_error_name)."""
    import socket
    assert mcpping.http.connect_reason(socket.gaierror(socket.EAI_NONAME, "x")) == "ENOTFOUND"
    assert mcpping.http.connect_reason(socket.gaierror(socket.EAI_AGAIN, "x")) == "EAI_AGAIN"
    wrapped = urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, "x"))
    assert mcpping.http.connect_reason(wrapped) == "ENOTFOUND"


def test_tls_and_non_http_failures_are_named_as_node_names_them():
    """An ssl.SSLError's errno is OpenSSL's (1 read as EPERM before); a
    connection closed before its answer, or an answer that is no HTTP, has
    none. tests/node/cli_parity.test.js runs both commands on each."""
    import ssl
    reason = mcpping.http.connect_reason
    assert reason(urllib.error.URLError(ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER]"))) == "EPROTO"
    verify = ssl.SSLCertVerificationError(1, "self-signed certificate")
    verify.verify_code = 18
    assert reason(urllib.error.URLError(verify)) == "DEPTH_ZERO_SELF_SIGNED_CERT"
    assert reason(ConnectionResetError("closed before any answer")) == "ECONNRESET"
    assert reason(_http_io.NotHttp("hello there")) == "the answer is not HTTP/1.1"
    assert reason(ConnectionRefusedError(111, "refused")) == "ECONNREFUSED"


@pytest.mark.parametrize("http_fault", ["deaf"], indirect=True)
async def test_a_ping_deaf_http_server_is_found_deaf_not_stale(http_fault):
    """Issue 25 over Streamable HTTP: pings time out, the side-effect-free
    probe is answered, so the server is ping-deaf (watched by probe from
    then on), never convicted."""
    ka = mcpping.KeepAlive(interval=0.3, timeout=0.3, failures=2, jitter_pct=0, min_interval=0.1)
    p = HttpPeer(http_fault, keepalive=ka, ping_timeout=5, listen=False)
    seen = p.events("ping_deaf", "stale")
    try:
        await p.initialize(5)
        ev = await asyncio.wait_for(seen.__anext__(), 20)
        assert ev.name == "ping_deaf"
        # Then a good while of probes, all answered: still no verdict.
        for _ in range(6):
            probe_ok = p.events("probe_ok")
            await asyncio.wait_for(probe_ok.__anext__(), 20)
        assert p.state != "stale" and not p.closed
    finally:
        await p.close()


@pytest.mark.parametrize("http_fault", ["deaf"], indirect=True)
async def test_a_post_whose_answer_the_engine_no_longer_awaits_is_cut(http_fault):
    """A server that takes a request and never answers it held the POST's
    thread and socket for good once the ping or call had timed out, one per
    keepalive ping on a frozen server. Each is cut when the engine no
    longer awaits its answer (C's mcpp_engine_awaits)."""
    p = HttpPeer(http_fault, ping_timeout=5, listen=False)
    try:
        await p.initialize(5)
        for _ in range(5):
            with pytest.raises(mcpping.PingTimeout):
                await p.ping(0.1)
        for _ in range(3):
            with pytest.raises(asyncio.TimeoutError):
                await p.request("tools/call", {"name": "x", "arguments": {"hang": True}}, timeout=0.1)
        answer = await p.request("tools/call", {"name": "hung"}, timeout=30)
        assert answer["result"] == {"hung": 0}
    finally:
        await p.close()


@pytest.mark.parametrize("http_fault", ["freeze"], indirect=True)
async def test_a_frozen_http_server_is_convicted_after_the_probe_too_times_out(http_fault):
    """The dead are still convicted: pings and the corroborating probe time
    out, and the stale event's proof names the probe tried."""
    ka = mcpping.KeepAlive(interval=0.3, timeout=0.3, failures=2, jitter_pct=0, min_interval=0.1, on_stale="report")
    p = HttpPeer(http_fault, keepalive=ka, ping_timeout=5, listen=False)
    seen = p.events("stale", "ping_deaf")
    bound = 0.3 + 0.3 * 2 + 0.3  # interval + timeout * failures + one probe
    try:
        await p.initialize(5)
        t0 = time.monotonic()
        ev = await asyncio.wait_for(seen.__anext__(), 20)
        elapsed = time.monotonic() - t0
        assert ev.name == "stale"
        assert elapsed <= bound + 1.0, f"stale after {elapsed:.2f} s, bound {bound:.2f} s"
        assert "probe:tools/list timed out" in (ev.proof or "")
    finally:
        await p.close()


@pytest.mark.parametrize("http_fault", ["freeze"], indirect=True)
async def test_a_stale_http_server_is_closed_with_the_engines_reason(http_fault):
    """on_stale="close": the session ends with C's sentence (the same as a
    stdio server's and Node's), and a request still waiting is told so."""
    ka = mcpping.KeepAlive(interval=0.3, timeout=0.3, failures=2, jitter_pct=0, min_interval=0.1)
    p = HttpPeer(http_fault, keepalive=ka, ping_timeout=5, listen=False)
    closed = p.events("closed")
    try:
        await p.initialize(5)
        waiting = asyncio.ensure_future(p.request("tools/list", timeout=60))
        ev = await asyncio.wait_for(closed.__anext__(), 30)
        assert ev.message == "the server went stale: 2 keepalive pings failed"
        assert ev.code == _native.MCPP_ERR_STALE
        with pytest.raises(mcpping.PeerClosed, match="^the server went stale: 2 keepalive pings failed$"):
            await waiting
        assert p.closed
    finally:
        await p.close()


async def test_a_server_gone_mid_session_ends_it_with_the_reason_node_gives_too():
    """A POST that cannot reach the server ends an open session: C's
    sentence with the cause as errno names it (tests/node/http_session.test.js
    asserts the same words)."""
    with fault_server("expire") as url:
        # Credentials and a query (where secrets go) are never quoted: the
        # reason reaches the closed event and the governance records.
        p = HttpPeer(url.replace("http://", "http://u:sekrit@") + "?token=sekrit", ping_timeout=5,
                     listen=False)
        closed = p.events("closed")
        await p.initialize(5)
    try:
        # The ping in flight says so as on stdio; the session's close says why.
        with pytest.raises(mcpping.PeerClosed, match=f"^{_native.PING_CLOSED_MESSAGE}$"):
            await p.ping(5)
        ev = await asyncio.wait_for(closed.__anext__(), 5)
        # The cause as errno names it: refused, or reset if the socket was open.
        shown = re.escape(url.replace("http://", "http://***@") + "?***")
        assert re.fullmatch(f"cannot reach {shown}: (ECONNREFUSED|ECONNRESET)", ev.message or ""), ev
        assert "sekrit" not in repr(p)
        assert p.closed
    finally:
        await p.close()


# A refused POST answers its request with the JSON-RPC error C makes of it
# (mcpp_http_error_answer): the server's own, or the status in words. Node
# says the same sentences (tests/node/http_session.test.js).
@pytest.mark.parametrize("http_fault, why", [
    ("unauthorized", "-32000 HTTP 401 Unauthorized"),
    ("refuse", "-32000 Bad Request: Server not initialized"),
], indirect=["http_fault"])
async def test_a_handshake_refused_by_http_says_why_in_the_servers_or_https_words(http_fault, why):
    p = HttpPeer(http_fault)
    try:
        with pytest.raises(mcpping.HandshakeError) as e:
            await p.initialize(5)
        assert str(e.value) == f"initialize failed: {why}; server/discover failed: {why}"
    finally:
        await p.close()


def test_a_refused_post_gets_the_servers_error_or_the_status_in_words():
    """What C's session (mcpp_http_post_answer) hands the engine for a POST
    answered with an error: the status in words, the server's own JSON-RPC
    error under the request's id, nothing for a notification."""
    m, _ = _opened({})

    def answer(frame: bytes, tag: int, status: int, content_type: str | None, body: bytes) -> list[Any]:
        [p] = m.post(frame, tag, False)
        assert m.response(p["exchange"], status, content_type, None, None) == []
        assert m.body(p["exchange"], body) == []
        return m.end(p["exchange"], False)

    req = b'{"jsonrpc":"2.0","id":"mcpping-3","method":"tools/list"}'
    [got] = answer(req, 3, 503, "text/html", b"<html>busy</html>")
    assert got == {"do": "receive", "data": b'{"jsonrpc":"2.0","id":"mcpping-3","error":'
                                              b'{"code":-32000,"message":"HTTP 503 Service Unavailable"}}'}
    long_error = b'{"jsonrpc":"2.0","id":null,"error":{"code":7,"message":"' + b"x" * 2000 + b'"}}'
    [got] = answer(req, 4, 400, "application/json", long_error)
    assert got["do"] == "receive"
    assert json.loads(got["data"]) == {"jsonrpc": "2.0", "id": "mcpping-3",
                                       "error": {"code": 7, "message": "x" * 2000}}
    assert answer(b'{"jsonrpc":"2.0","method":"notifications/x"}', 0, 500, "text/plain", b"oops") == []
    assert m.session_id == "s1"  # none of these ended the session


async def test_a_message_json_cannot_carry_is_refused_before_any_post():
    """HttpPeer checks a request as Peer does (one rpc_frame): NaN went out
    as NaN and a list of params raised dict()'s own error."""
    frozen = socket.create_server(("127.0.0.1", 0))
    url = "http://127.0.0.1:%d/mcp" % frozen.getsockname()[1]
    async with await mcpping.http.connect(url, keepalive=None, initialize=False, listen=False) as p:
        with pytest.raises(ValueError, match="^message is not JSON: Out of range float"):
            await p.request("tools/call", {"x": float("nan")})
        with pytest.raises(TypeError, match="^method must be a non-empty str"):
            p.notify(None)
        assert not p._requests.pending and not p._posts
    frozen.close()


@pytest.mark.parametrize("http_fault", ["endless"], indirect=True)
async def test_an_answer_without_end_is_cut_at_the_line_bound_and_the_request_told(http_fault):
    """A JSON answer that never ends was read whole (resp.read()) until the
    memory ran out; it is read to max_line_bytes, as a line or an SSE event,
    and the request told why at once. The session goes on."""
    async with mcpping.http.connect(http_fault, keepalive=None, listen=False) as p:
        resp = await p.request("tools/call", {"name": "x"}, timeout=60)
        assert resp["error"] == {"code": -32000, "message": "the server's answer is longer than "
                                 "67108864 bytes (max_line_bytes)"}
        assert await p.ping(5) > 0
