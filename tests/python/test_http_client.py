"""mcpping.http against the official Python SDK's Streamable HTTP server
(tests/python/servers/sdk_server.py, a real MCPServer under uvicorn): the
GET listening stream answers the server's pings, close sends DELETE, an
expired session is initialized again, the session id reaches the records,
and each request has the engine's own deadline (issue 10 part 2, issue 8)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

import mcpping
from conftest import LOOPS, ROOT, fault_server, free_port, serve_sdk_http, wait_port


EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


@pytest.fixture
def short_idle_server() -> Iterator[str]:
    """The SDK server whose sessions expire after 1 s without a request."""
    yield from serve_sdk_http("1")


def _post_raw(url: str, session: str, version: str) -> int:
    """POSTs a ping on ``session`` by hand; returns the HTTP status."""
    req = urllib.request.Request(url, method="POST", data=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                                 headers={"Content-Type": "application/json",
                                          "Accept": "application/json, text/event-stream",
                                          "Mcp-Session-Id": session, "MCP-Protocol-Version": version})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            resp.read()
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def _call(peer: mcpping.http.HttpPeer, tool: str, **arguments) -> dict:
    resp = await peer.request("tools/call", {"name": tool, "arguments": arguments}, timeout=20)
    assert "result" in resp, resp
    return resp["result"]


async def test_server_pings_on_the_listening_stream_are_answered(http_server, tmp_path):
    log = tmp_path / "records.jsonl"
    async with mcpping.http.connect(http_server, keepalive=None, record=str(log)) as peer:
        answered = []
        peer.on("ping_answered", answered.append)
        assert peer.listening  # connect() returns once the GET stream is open
        result = await _call(peer, "ping_listener", count=3)
        assert result["content"][0]["text"] == "3", result
        assert len(answered) == 3
        sid = peer.session_id
    answered_records = [r for r in _records(log) if r["event"] == "ping_answered"]
    assert len(answered_records) == 3
    # The session id comes from the Mcp-Session-Id header, no set_session_id().
    assert {r["session_id"] for r in answered_records} == {sid}
    assert all(r["direction"] == "inbound" and r["sender"] == "server" for r in answered_records)


async def test_a_servers_request_is_refused_at_once_not_left_waiting(http_server):
    # The tool asks roots/list on its request's stream and waits 5 s at most:
    # an HTTP client that serves no requests says so (-32601) at once.
    async with mcpping.http.connect(http_server, keepalive=None) as peer:
        result = await _call(peer, "ask_roots")
    assert result["content"][0]["text"] == "refused: -32601 Method not found", result


async def test_close_deletes_the_session(http_server):
    peer = await mcpping.http.connect(http_server, keepalive=None)
    sid, version = peer.session_id, peer.protocol_version
    assert sid is not None
    assert await asyncio.to_thread(_post_raw, http_server, sid, version) == 200
    listening = peer._listening.conn if peer._listening is not None else None
    assert listening is not None and listening.reusable()
    await peer.close()
    assert peer.closed and peer.state == "closed"
    # The listening stream's connection is gone with it, and every other
    # (nothing keeps running unseen).
    assert listening.lost and not peer._pool._open
    # The server forgot the session: its id answers 404 now.
    assert await asyncio.to_thread(_post_raw, http_server, sid, version) == 404


async def test_close_tolerates_a_server_without_delete_or_get(tmp_path):
    """tests/peers/http_fault.py answers GET with 501 and DELETE with 200;
    close() must neither hang nor raise, and no GET is retried."""
    with fault_server("expire") as url:
        peer = await mcpping.http.connect(url, keepalive=None)
        assert await peer.ping(5) > 0  # meets the expiry, re-initializes, answered
        assert not peer.listening
        await asyncio.wait_for(peer.close(), 10)
        assert peer.closed


async def test_an_expired_sdk_session_is_initialized_again(short_idle_server, tmp_path):
    log = tmp_path / "records.jsonl"
    async with mcpping.http.connect(short_idle_server, keepalive=None, listen=False,
                                    record=str(log)) as peer:
        first = peer.session_id
        assert await peer.ping(5) > 0
        # Nothing in flight and no GET stream: the SDK ends the session
        # after its 1 s idle timeout, and the next ping meets a 404.
        await asyncio.sleep(1.5)
        assert await peer.ping(5) > 0
        assert peer.session_id not in (None, first)
        assert peer.stats.lost == 0
        second = peer.session_id
    recs = _records(log)
    events = [r["event"] for r in recs]
    assert events.count("reconnect") == 1 and events.count("ping_ok") == 2
    oks = [r for r in recs if r["event"] == "ping_ok"]
    assert [r["session_id"] for r in oks] == [first, second]


def _delete_raw(url: str, session: str, version: str) -> int:
    """DELETEs ``session`` by hand, as if the server ended it; returns the HTTP status."""
    req = urllib.request.Request(url, method="DELETE",
                                 headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": version})
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.status


async def test_a_request_that_meets_its_ended_session_is_answered_and_the_next_waits_for_a_new_one(
        http_server, tmp_path):
    """The server ended the session (here a DELETE by hand; an idle timeout
    or a restart does the same). A request that meets the 404 did not run:
    it gets the server's answer now (it waited out its deadline), and the
    handshake runs again; what the application sends meanwhile waits for
    the new session (it went without one, and met a 400). No listening
    stream: the server ends it at the DELETE, and its reopening meets the
    404 about 250 ms later and renews the session on its own (a flake
    under load: the request then found the new session)."""
    log = tmp_path / "records.jsonl"
    async with mcpping.http.connect(http_server, keepalive=None, record=str(log), listen=False) as peer:
        first = peer.session_id
        assert await asyncio.to_thread(_delete_raw, http_server, first, peer.protocol_version) == 200
        answer = await peer.request("tools/call", {"name": "echo", "arguments": {"text": "lost"}}, timeout=20)
        assert answer["error"]["message"] == "Session not found"
        assert peer.session_id is None  # the handshake is running again
        again = await peer.request("tools/call", {"name": "echo", "arguments": {"text": "again"}}, timeout=20)
        assert _text(again) == "again"
        assert peer.session_id not in (None, first)
        assert peer.info()["in_flight"] == 0
    events = [r["event"] for r in _records(log)]
    assert events.count("reconnect") == 1


async def test_a_stream_whose_session_ends_before_it_is_resumed_is_answered_in_doubt_now():
    """SEP-1699: the answer's stream ended after an event ID, and the GET
    that resumes it meets a 404 (the session is gone): the answer cannot
    come, so the request raises RequestInDoubt now, as a stdio request
    whose server failed does (it may have run; it waited out its deadline),
    and the session is opened again."""
    with fault_server("expire-resume") as url:
        async with mcpping.http.connect(url, keepalive=None) as peer:
            assert peer.session_id == "session-1"
            with pytest.raises(mcpping.RequestInDoubt) as info:
                await peer.request("tools/call", {"name": "work"}, timeout=20)
            assert info.value.disposition == "in_doubt" and info.value.method == "tools/call"
            # The engine's answer, whole: its code and its sentence.
            assert info.value.code == -32003 and info.value.message.startswith("Request in doubt (mcpping: ")
            assert str(info.value) == f"tools/call: {info.value.message}"
            again = await peer.request("tools/call", {"name": "work"}, timeout=20)
            assert again["result"] == {"session": "session-2"}
            assert peer.info()["in_flight"] == 0


@pytest.mark.parametrize("mode", ["sse-breaks", "json-breaks"])
async def test_a_request_whose_answer_stream_breaks_without_an_event_id_is_in_doubt_at_once(mode):
    """A server that dies mid-call, or a proxy that cuts a long call's
    stream, breaks the answer (an SSE stream, or a JSON body) before its
    end; with no event ID it cannot be resumed, so the answer has nowhere
    left to come: the request raises RequestInDoubt now (it waited out its
    whole deadline, here 60 s), and the session goes on."""
    with fault_server(mode) as url:
        async with mcpping.http.connect(url, keepalive=None) as peer:
            with pytest.raises(mcpping.RequestInDoubt) as info:
                await peer.request("tools/call", {"name": "work"}, timeout=60)
            assert info.value.disposition == "in_doubt"
            assert peer.info()["in_flight"] == 0 and peer.healthy
            assert await peer.ping(5) > 0


async def test_an_initialize_whose_answer_breaks_is_a_closed_connection_not_a_refusal():
    """The answer to initialize breaks mid-body (a server that died, a
    proxy that cut it): no refusal, so no server/discover after it; the
    handshake says the connection closed, as it does for a stdio server
    that dies under it (it said "initialize failed: Request cancelled")."""
    with fault_server("init-breaks") as url:
        with pytest.raises(mcpping.HandshakeError) as info:
            await mcpping.http.connect(url, keepalive=None)
        assert info.value.kind == "closed"
        assert str(info.value) == "the connection closed during initialize"


async def test_a_ping_whose_session_the_server_lost_and_answers_400_opens_a_new_one(tmp_path):
    """Servers built on the TS SDK's examples answer a session they do not
    know 400 "No valid session ID provided", not 404: the ping failed, and
    so did every one after it. A 400 to a ping on a session is the
    session's end (C's rule): a new one is opened and the ping answered."""
    log = tmp_path / "records.jsonl"
    with fault_server("expire-400") as url:
        async with mcpping.http.connect(url, keepalive=None, record=str(log)) as peer:
            assert peer.session_id == "session-1"
            assert await peer.ping(5) > 0
            assert peer.session_id == "session-2"
    assert [r["event"] for r in _records(log)].count("reconnect") == 1


async def test_a_server_that_refuses_every_session_costs_one_handshake_per_ping():
    """Each ping meets "Session not found" on every session: it is sent
    again once, on a new session, then fails; no endless round of
    handshakes."""
    with fault_server("refuse-sessions") as url:
        async with mcpping.http.connect(url, keepalive=None) as peer:
            with pytest.raises(mcpping.PingError, match="Session not found"):
                await peer.ping(5)
            answer = await peer.request("tools/call", {"name": "sessions"}, timeout=20)
            # The first, the one the ping was sent again on, and the one
            # its second refusal opened (this request waited for it).
            assert answer["result"] == {"sessions": 3}


def _serve_everything(port: int) -> subprocess.Popen:
    """@modelcontextprotocol/server-everything (npm) over Streamable HTTP on port."""
    assert EVERYTHING.exists(), f"{EVERYTHING} is missing: `npm install` provides it"
    proc = subprocess.Popen([shutil.which("node") or "node", str(EVERYTHING), "streamableHttp"],
                            env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_port(port, proc)
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait()


async def test_a_restarted_server_everything_gets_a_new_session_at_the_next_ping():
    """The reference server forgets its sessions when it restarts and
    answers the old one 400: the next ping opens a new session and is
    answered (it failed, and every ping after it)."""
    port = free_port()
    server = await asyncio.to_thread(_serve_everything, port)
    try:
        async with mcpping.http.connect(f"http://127.0.0.1:{port}/mcp", keepalive=None) as peer:
            first = peer.session_id
            assert await peer.ping(5) > 0
            await asyncio.to_thread(_stop, server)
            server = await asyncio.to_thread(_serve_everything, port)
            assert await peer.ping(10) > 0
            assert peer.session_id not in (None, first)
    finally:
        _stop(server)


async def test_request_timeout_is_the_engines(http_server, tmp_path):
    """A tool call past its own deadline: notifications/cancelled, a -32001
    answer inside the engine, TimeoutError here, the ledger cleared."""
    log = tmp_path / "records.jsonl"
    async with mcpping.http.connect(http_server, keepalive=None, record=str(log)) as peer:
        timed_out = []
        peer.on("request_timeout", timed_out.append)
        before = peer.info()
        with pytest.raises(asyncio.TimeoutError):
            # ping_client waits `delay` s before its pings: well past 0.3 s.
            await peer.request("tools/call", {"name": "ping_client",
                                              "arguments": {"count": 0, "delay": 5}}, timeout=0.3)
        assert len(timed_out) == 1
        info = peer.info()
        assert info["in_flight"] == before["in_flight"] == 0
        assert info["app_timeouts"] == 1
        assert not info["healthy"] and not peer.healthy  # no laundering by a quiet line
        # The session still works after the cancel, and an answer heals it.
        assert (await _call(peer, "add", a=2, b=3))["content"][0]["text"] == "5"
        assert peer.healthy


async def test_a_request_with_no_timeout_of_its_own_says_request_timeouts(http_server):
    """timeout=None: request_timeout applies, and the TimeoutError says it
    in the engine's words, as a stdio request's does."""
    async with mcpping.http.connect(http_server, keepalive=None, request_timeout=0.3) as peer:
        with pytest.raises(asyncio.TimeoutError) as info:
            await peer.request("tools/call", {"name": "ping_client",
                                              "arguments": {"count": 0, "delay": 5}}, timeout=None)
        assert str(info.value) == "Request timed out (mcpping: no answer after 300 ms)"
        assert peer.info()["in_flight"] == 0


async def test_cancelling_a_request_abandons_it(http_server):
    async with mcpping.http.connect(http_server, keepalive=None) as peer:
        cancelled = []
        peer.on("request_cancelled", cancelled.append)
        call = asyncio.ensure_future(peer.request(
            "tools/call", {"name": "ping_client", "arguments": {"count": 0, "delay": 5}}, timeout=30))
        await asyncio.sleep(0.3)
        assert peer.info()["in_flight"] == 1
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert len(cancelled) == 1 and peer.info()["in_flight"] == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"ping_timeout": 0}, "ping_timeout must be between"),
    ({"request_timeout": -1}, "request_timeout must be None"),
    ({"init_timeout": float("nan")}, "init_timeout must be between"),
    ({"listen": "yes"}, "listen must be True or False"),
])
async def test_bad_options_are_named(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        await mcpping.http.connect("http://127.0.0.1:9/mcp", **kwargs)


async def test_a_url_the_server_redirects_is_followed_on_its_own_origin(http_server):
    """The SDK's own server answers POST /mcp/ with 307 to /mcp: followed
    (C's mcpp_http_redirect_url), and the session stays there; it failed
    with "initialize failed: -32000 HTTP 307" before."""
    async with mcpping.http.connect(http_server + "/", keepalive=None, listen=False) as p:
        assert p.session_id
        assert await p.ping(5) > 0
        assert (await p.request("tools/list", timeout=10))["result"]["tools"]
        assert p._target == "/mcp"  # where the session went, no slash


@pytest.mark.parametrize("url, problem", [
    ("ftp://example.com/mcp", "is not an http:// or https:// URL"),
    ("http://[::1", "has an IPv6 address without its closing ]"),  # urllib's ValueError escaped
    ("http://127.0.0.1:99999/mcp", "has a port that is not a number from 1 to 65535"),
    ("http://127.0.0.1 :1/mcp", "has a space, a control character"),  # killed the POST thread
    ("http://h/%zz", "has a % in its path or query"),
])
async def test_a_bad_url_is_named(url, problem):
    """C's rule (mcpp_http_url_parse), at once and with the URL: the same
    URLs Node's HttpSession and both commands refuse."""
    with pytest.raises(ValueError) as e:
        await mcpping.http.connect(url)
    assert str(e.value).startswith(f"url {url!r} {problem}")
    with pytest.raises(TypeError, match="url must be a str"):
        mcpping.http.HttpPeer(b"http://h/")  # type: ignore[arg-type]


def test_the_cli_ends_its_session_with_delete(http_server):
    import shutil
    import sys

    exe = shutil.which("mcpping", path=os.path.dirname(sys.executable))
    r = subprocess.run([exe, "--json", "-c", "1", http_server], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    connected = json.loads(r.stdout.splitlines()[0])
    assert connected["session_id"]
    assert _post_raw(http_server, connected["session_id"], connected["protocol_version"]) == 404


async def test_a_listening_stream_that_fails_or_is_told_to_try_later_is_opened_again():
    """C's rule (mcpp_http_listen_after), as Node follows it: a GET that
    met no answer, then a 503, is sent again after a wait that doubles;
    the third opens, and the server's ping on it is answered; when it ends
    it is opened again with the Last-Event-ID it gave, after the retry it
    asked. (Python gave up after a GET with no answer, and both after a
    503.)"""
    with fault_server("listen-later") as url:
        peer = await mcpping.http.connect(url, keepalive=None)
        answer = await peer.request("tools/call", {"name": "gets"}, timeout=30)
        result = answer["result"]
        # The stream asked for a retry of 600 ms: it is not reopened sooner
        # (250 ms is the wait without one); a busy machine only adds to it.
        assert result.pop("reopened_after_ms") >= 590
        assert result == {"gets": ["no answer", 503, "stream", "stream"],
                          "last_event_ids": [None, None, None, "ev-1"], "pong": True}
        assert peer.listening
        # The stream has no length (it ends by closing): close() still cuts
        # it (it once waited out the 5 s connect timeout instead).
        conn = peer._listening.conn if peer._listening is not None else None
        assert conn is not None and conn.reusable()
        await asyncio.wait_for(peer.close(), 3)
        assert conn.lost


async def test_a_listening_stream_whose_server_never_answers_is_opened_again():
    """A GET the server (or a proxy) takes and never answers is given up
    after C's short timeout (MCPP_HTTP_SHORT_TIMEOUT_MS) and sent again:
    the second opens and its ping is answered. Node waited for the first
    for good, as Node's own test of this fault shows."""
    with fault_server("listen-held") as url:
        async with mcpping.http.connect(url, keepalive=None) as peer:
            answer = await peer.request("tools/call", {"name": "gets"}, timeout=30)
            assert answer["result"] == {"gets": ["held", "stream"], "pong": True}
            assert peer.listening


async def test_an_answer_ends_its_stream_even_when_the_server_keeps_it_open():
    """A server that keeps a request's event stream open after the answer
    (the spec's server SHOULD close it) held a thread and a socket per
    request, for good: keepalive alone piled them up. The stream is left
    once its answer came, as the official SDK's client leaves it."""
    with fault_server("sse-lingers") as url:
        async with mcpping.http.connect(url, keepalive=None) as peer:
            for _ in range(20):
                await peer.ping(5)
            assert (await peer.request("tools/list", timeout=5))["result"] == {}
            answer = await peer.request("tools/call", {"name": "streams"}, timeout=30)
            assert answer["result"] == {"open_streams": 0}


@pytest.fixture
def resumable_server() -> Iterator[str]:
    """The SDK server with an event store: SEP-1699 priming events, and a
    tool (close_stream) whose answer comes only on a resumed stream."""
    yield from serve_sdk_http(str(30 * 60), "resumable")


def _text(answer: dict) -> str:
    return answer["result"]["content"][0]["text"]


async def test_a_stream_the_server_closes_before_the_answer_is_resumed_with_last_event_id(resumable_server):
    """SEP-1699 (2025-11-25), against the official SDK server: the server
    closes the tool call's SSE stream before answering; the client resumes
    it with GET and Last-Event-ID and gets the answer (it waited out its
    timeout). The priming events (an id, no data) reach the engine as proof
    of life, not as messages."""
    async with mcpping.http.connect(resumable_server, keepalive=None) as peer:
        assert _text(await peer.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}},
                                        timeout=10)) == "hi"
        frames = peer.info()["frames_in"]
        answer = await peer.request("tools/call", {"name": "close_stream", "arguments": {}}, timeout=10)
        assert _text(answer) == "done"
        assert peer.info()["frames_in"] == frames + 1  # the answer alone, no empty priming frame
        assert await peer.ping(5) > 0


async def test_a_resumed_stream_is_cut_when_its_request_times_out(resumable_server):
    """The request's deadline passes while its stream is resumed: the GET
    waiting for an answer that will not come is cut, and its connection
    carries it no more."""
    async with mcpping.http.connect(resumable_server, keepalive=None) as peer:
        started, start = [], peer._start

        def spy(action):
            start(action)
            started.append(peer._posts.get(action["exchange"]))

        peer._start = spy
        with pytest.raises(asyncio.TimeoutError):
            await peer.request("tools/call", {"name": "close_stream", "arguments": {"seconds": 60}},
                               timeout=1)
        resumed = [ex for ex in started if ex is not None and ex.action["method"] == "GET" and ex.action["tag"]]
        assert resumed  # the answer's stream was resumed with GET (the fault under test)
        assert all(ex.stopped and ex.conn is None for ex in resumed)
        assert all(c.exchange is None or c.exchange.listens for c in peer._pool._open)
        assert await peer.ping(5) > 0


async def test_a_byte_order_mark_before_an_answer_is_refused_as_node_refuses_it_and_named():
    """A JSON body after a byte order mark is not JSON (C's rule: Node
    trimmed it and took the body, Python refused it). An SSE answer whose data
    starts with one answered Python's handshake (json.loads skipped the mark)
    while the engine refused every pong after it: now neither host takes it,
    and the handshake says what the server wrote."""
    with fault_server("json-bom") as url:
        with pytest.raises(mcpping.HandshakeError) as ei:
            await mcpping.http.connect(url, init_timeout=5)
    assert str(ei.value) == ("initialize failed: -32000 the server answered HTTP 200 with "
                             "application/json, not JSON; server/discover failed: -32000 the "
                             "server answered HTTP 200 with application/json, not JSON")
    with fault_server("sse-bom") as url:
        with pytest.raises(mcpping.HandshakeError) as ei:
            await mcpping.http.connect(url, init_timeout=0.5)
    assert str(ei.value) == (
        'no initialize result after 0.5 s; the server sent a message that is not JSON-RPC (it '
        'starts with a byte order mark): "\\ufeff{\\"jsonrpc\\": \\"2.0\\", \\"id\\": '
        '\\"mcpping-1\\", \\"result\\": {\\"protocolVer..."')


async def _figures(peer: mcpping.http.HttpPeer) -> dict:
    answer = await peer.request("tools/call", {"name": "figures", "arguments": {}}, timeout=10)
    return answer["result"]


TLS_CERT = ROOT / "tests" / "peers" / "tls" / "self_signed_cert.pem"

@pytest.mark.parametrize("loop", LOOPS)
def test_over_tls_a_session_keeps_one_connection_in_each_loop(loop, monkeypatch):
    """HTTPS through the loop's own TLS: with the server's certificate
    trusted (SSL_CERT_FILE, as a private CA is trusted) the handshake, 10
    pings and a tools/call go on one connection, under asyncio and uvloop;
    not trusted, the session fails and says why as Node says it."""
    async def session() -> dict:
        async with mcpping.http.connect(url, keepalive=None, listen=False) as peer:
            for _ in range(10):
                assert await peer.ping(5) >= 0
            return await _figures(peer)

    run = asyncio.run if loop == "asyncio" else __import__("uvloop").run
    with fault_server("keep-alive", "--tls") as url:
        assert url.startswith("https://")
        with pytest.raises(mcpping.PeerClosed, match="DEPTH_ZERO_SELF_SIGNED_CERT"):
            run(session())
        monkeypatch.setenv("SSL_CERT_FILE", str(TLS_CERT))
        figures = run(session())
    assert figures == {"connections": 1, "dropped": 0,
                       "answered": {"initialize": 1, "ping": 10, "tools/call": 1},
                       "arrived": ["initialize", "notifications/initialized", "ping"]}


async def test_a_session_runs_on_its_loop_with_no_thread_of_its_own(http_server):
    """Every exchange runs on the loop that opened the session: against the
    official SDK's server, the handshake, the listening stream, pings and a
    tool call start no thread (an address needs no resolver). Each exchange
    had a thread before."""
    before = set(threading.enumerate())
    async with mcpping.http.connect(http_server, keepalive=None) as peer:
        assert peer.listening
        for _ in range(5):
            assert await peer.ping(5) >= 0
        assert (await peer.request("tools/list", timeout=10))["result"]["tools"]
        assert set(threading.enumerate()) == before


async def test_a_host_name_is_resolved_and_each_of_its_addresses_tried():
    """localhost may resolve to ::1 first, where the server does not listen:
    the next address is tried, as socket.create_connection tries them."""
    with fault_server("keep-alive") as url:
        named = url.replace("127.0.0.1", "localhost")
        async with mcpping.http.connect(named, keepalive=None, listen=False) as peer:
            assert await peer.ping(5) >= 0


async def test_sequential_requests_share_one_kept_alive_connection():
    """HTTP/1.1 keeps a connection open: the handshake, 20 pings (each
    answered on an event stream that ends with its event, as the TS SDK's
    server answers) and a tools/call all go on one connection, each request
    answered once; the handshake's notification is through before the first
    ping goes (it went on a connection of its own, and could arrive after
    it). Each POST opened a connection of its own before."""
    with fault_server("keep-alive") as url:
        async with mcpping.http.connect(url, keepalive=None, listen=False) as peer:
            for _ in range(20):
                assert await peer.ping(5) >= 0
            figures = await _figures(peer)
    assert figures == {"connections": 1, "dropped": 0,
                       "answered": {"initialize": 1, "ping": 20, "tools/call": 1},
                       "arrived": ["initialize", "notifications/initialized", "ping"]}


async def test_a_kept_alive_connection_its_server_dropped_sends_the_request_again_on_a_new_one():
    """The server closes a kept-alive connection as the next request comes
    (its idle timeout ran out): that request never ran, so it goes once more
    on a new connection, as Node's request() does; no request is lost, none
    answered twice, and the session goes on."""
    with fault_server("drop-idle") as url:
        async with mcpping.http.connect(url, keepalive=None, listen=False) as peer:
            for _ in range(10):
                assert await peer.ping(5) >= 0
            figures = await _figures(peer)
            assert peer.healthy
    assert figures["answered"] == {"initialize": 1, "ping": 10, "tools/call": 1}
    assert figures["dropped"] >= 10, figures  # every request but the first met one


async def test_kept_alive_connections_serve_a_process_with_over_1024_files_open():
    """The idle connection's check must take any fd: select() refuses one
    at 1024 and above (every request then opened a connection of its own)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 1200
    assert hard == resource.RLIM_INFINITY or hard >= need, f"the hard limit of open files is {hard}"
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need) if soft != resource.RLIM_INFINITY else soft, hard))
    held = []
    try:
        with open(os.devnull) as devnull:
            while not held or held[-1] < 1100:  # the sockets opened next get numbers above these
                held.append(os.dup(devnull.fileno()))
        with fault_server("keep-alive") as url:
            async with mcpping.http.connect(url, keepalive=None, listen=False) as peer:
                for _ in range(5):
                    assert await peer.ping(5) >= 0
                figures = await _figures(peer)
        assert figures["connections"] == 1, figures
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_a_notification_post_never_answered_holds_the_handshake_no_longer_than_its_timeout():
    """connect() waits for the initialized notification's POST (so the
    server has it before the first request), but only within the
    handshake's time: a server that never answers that POST still opens,
    and its requests are answered."""
    with fault_server("mute-notifications") as url:
        # Not held for good (the bound is 1 s).
        peer = await asyncio.wait_for(mcpping.http.connect(url, keepalive=None, listen=False, init_timeout=1), 10)
        try:
            assert peer.protocol_version == "2025-11-25"
            assert await peer.ping(5) >= 0
        finally:
            await peer.close()
