"""Validation at every public boundary (issue 8 item 9).

Each bad number is refused where it is written, with TypeError (wrong kind)
or ValueError (out of range) naming the parameter and the allowed range:
never clamped, defaulted or wrapped to 32 bits. The connection a bad call
was made on keeps working.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path

import pytest

import mcpping
from mcpping import _native
from mcpping.stats import Stats
from conftest import PY, peer

RANGE = "between 0.001 and 2147483.647 seconds"
BAD_TIMES = [(-1, ValueError), (0, ValueError), (4294968, ValueError), (math.nan, ValueError),
             (math.inf, ValueError), (-math.inf, ValueError), (0.0004, ValueError), (10**400, ValueError),
             ("1", TypeError), (b"1", TypeError), (True, TypeError)]


@pytest.mark.parametrize("bad,kind", BAD_TIMES)
async def test_ping_timeout_is_refused_by_name_and_the_peer_keeps_working(bad, kind):
    async with mcpping.connect(peer("echo"), keepalive=None) as p:
        with pytest.raises(kind, match=f"^timeout must be {RANGE}, not "):
            await p.ping(timeout=bad)
        assert p.stats.count == 0  # nothing was sent
        assert await p.ping(timeout=2) > 0


async def test_the_longest_ping_timeout_is_kept_as_given():
    events: list[mcpping.Event] = []
    async with mcpping.connect(peer("drop_pings"), keepalive=None, on_event=events.append) as p:
        pending = asyncio.ensure_future(p.ping(timeout=2147483.647))
        assert "result" in await p.request("tools/list", timeout=5)
        # A later ping with a short timeout expires first, on the engine's clock.
        with pytest.raises(mcpping.PingTimeout):
            await p.ping(timeout=0.3)
        assert not pending.done()
    with pytest.raises(mcpping.PeerClosed):
        await pending
    sent = [e for e in events if e.name == "ping"]
    assert sent[0].timeout == 2147483.647


@pytest.mark.parametrize("field,bad,kind,wanted", [
    ("interval", math.nan, ValueError, "0 (off) or between 1 (min_interval) and 2147483.647 seconds"),
    ("interval", -1, ValueError, "0 (off) or between 1 (min_interval) and 2147483.647 seconds"),
    ("interval", math.inf, ValueError, "0 (off) or between 1 (min_interval) and 2147483.647 seconds"),
    ("timeout", 0, ValueError, RANGE),
    ("timeout", "5", TypeError, RANGE),
    ("failures", 1.5, ValueError, "an integer between 1 and 1000"),
    ("failures", True, TypeError, "an integer between 1 and 1000"),
    ("failures", 0, ValueError, "an integer between 1 and 1000"),
    ("failures", 2**40, ValueError, "an integer between 1 and 1000"),
    ("jitter_pct", 500, ValueError, "an integer between 0 and 100"),
    ("jitter_pct", -1, ValueError, "an integer between 0 and 100"),
    ("jitter_pct", 10.5, ValueError, "an integer between 0 and 100"),
    ("min_interval", -0.001, ValueError, "between 0 and 2147483.647 seconds"),
    ("min_interval", math.nan, ValueError, "between 0 and 2147483.647 seconds"),
    ("on_stale", "kill", ValueError, "'close' or 'report'"),
    ("clamp", 1, TypeError, "True or False"),
])
def test_keepalive_fields_are_refused_by_name(field, bad, kind, wanted):
    with pytest.raises(kind) as ei:
        mcpping.KeepAlive(**{field: bad})
    assert str(ei.value).startswith(f"KeepAlive.{field} must be {wanted}, not ")


def test_keepalive_edges_are_accepted():
    assert mcpping.KeepAlive(interval=0).interval == 0
    ka = mcpping.KeepAlive(interval=2147483.647, timeout=0.001, failures=1000, jitter_pct=100,
                           min_interval=0.01)
    assert ka.failures == 1000


@pytest.mark.parametrize("option,bad,kind,wanted", [
    ("kill_grace", -1, ValueError, f"0 (SIGKILL at once) or {RANGE}"),
    ("kill_grace", math.nan, ValueError, f"0 (SIGKILL at once) or {RANGE}"),
    ("kill_grace", 4294968, ValueError, f"0 (SIGKILL at once) or {RANGE}"),
    ("ping_timeout", 0, ValueError, RANGE),
    ("ping_timeout", math.inf, ValueError, RANGE),
    ("request_timeout", -1, ValueError, f"None (no deadline) or {RANGE}"),
    ("request_timeout", 0, ValueError, f"None (no deadline) or {RANGE}"),
    ("stderr", "devnull", ValueError, "one of 'inherit', 'ignore'"),
    ("keepalive", 15, TypeError, "a KeepAlive or None"),
])
async def test_connect_options_are_refused_by_name_before_a_spawn(option, bad, kind, wanted):
    with pytest.raises(kind) as ei:
        await mcpping.connect(peer("echo"), **{option: bad})
    assert str(ei.value).startswith(f"{option} must be {wanted}")


@pytest.mark.parametrize("bad,kind", [(-1, ValueError), (math.nan, ValueError), ("30", TypeError)])
def test_connect_init_timeout_is_refused_where_it_is_written(bad, kind):
    with pytest.raises(kind, match=f"^init_timeout must be {RANGE}"):
        mcpping.connect(peer("echo"), init_timeout=bad)


async def test_a_handshake_with_a_server_that_exits_says_how_it_exited():
    for cmd, status in ((["true"], 0), ([PY, "-c", "import sys; sys.exit(3)"], 3)):
        with pytest.raises(mcpping.HandshakeError) as ei:
            await mcpping.connect(cmd, init_timeout=10)
        text = str(ei.value)
        assert text.startswith("the server ended before answering initialize: "
                               f"server exited with status {status}")
        assert "No such connection" not in text


@pytest.mark.parametrize("frame, instead", [
    ("bom", ' (it starts with a byte order mark): "\\ufeff{\\"jsonrpc\\":\\"2.0\\",\\"id\\":'
            '\\"mcpping-1\\",\\"result\\":{\\"protocolVersion\\"..."'),
    ("batch", ' (a JSON-RPC batch: MCP has had none since 2025-06-18): "[{\\"jsonrpc\\":\\"2.0\\",'
              '\\"id\\":\\"mcpping-1\\",\\"result\\":{\\"protocolVersion\\":\\"..."'),
    ("lsp", ': "Content-Length: 146", then 146 bytes that no newline ends: "{\\"jsonrpc\\":'
            '\\"2.0\\",\\"id\\":\\"mcpping-1\\",\\"result\\":{\\"protocolVersion\\":\\"2..."'),
    ("logs", ': "[info] got initialize"'),
])
async def test_a_handshake_that_times_out_says_what_the_server_wrote_instead(frame, instead):
    """A server answering in a form no client reads (tests/peers/misframed.py)
    failed with "no initialize result after 0.5 s" and no word of why."""
    with pytest.raises(mcpping.HandshakeError) as ei:
        await mcpping.connect(peer("misframed", "--frame", frame), init_timeout=0.5, kill_grace=0.1)
    assert str(ei.value) == ("no initialize result after 0.5 s; the server wrote a line that "
                             "is not JSON-RPC" + instead)
    assert ei.value.kind == "timed_out"


async def test_a_handshake_that_times_out_names_an_answer_that_no_newline_ended():
    with pytest.raises(mcpping.HandshakeError) as ei:
        await mcpping.connect(peer("misframed", "--frame", "unended"), init_timeout=0.5,
                              kill_grace=0.1)
    assert str(ei.value) == ('no initialize result after 0.5 s; the server wrote 146 bytes that no '
                             'newline ends: "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":\\"mcpping-1\\",'
                             '\\"result\\":{\\"protocolVersion\\":\\"2..."')


async def test_send_on_a_closed_peer_says_closed_in_plain_words():
    p = await mcpping.connect(peer("echo"), keepalive=None)
    await p.close()
    # C's sentence (MCPP_CONNECTION_CLOSED_TEXT), as Node's ClosedError says it.
    with pytest.raises(mcpping.PeerClosed, match="^the connection is closed$"):
        p.notify("x")
    with pytest.raises(mcpping.PeerClosed, match="^the connection is closed$"):
        await p.ping()


@pytest.mark.parametrize("message", [5, [1, 2], None, 1.5])
async def test_send_refuses_what_is_no_message_and_writes_nothing(message):
    # send(5) wrote bytes(5), five NUL bytes, to the server; send([1, 2]) two
    # control bytes. Node's send refuses them too.
    async with mcpping.connect(peer("echo"), keepalive=None) as p:
        before = p.info()["frames_out"]
        with pytest.raises(TypeError, match=r"^message must be a mapping or its JSON text \(str or bytes\), not "):
            p.send(message)  # type: ignore[arg-type]
        assert p.info()["frames_out"] == before
        assert await p.ping(5) > 0


async def test_send_of_two_lines_says_cs_sentence():
    async with mcpping.connect(peer("echo"), keepalive=None) as p:
        with pytest.raises(ValueError, match=r"^An outbound frame contains a newline\.$"):
            p.send('{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","method":"b"}')
        assert await p.ping(5) > 0


BAD_MESSAGES = [
    (("", {}), TypeError, "^method must be a non-empty str, not str ''$"),
    ((5, {}), TypeError, "^method must be a non-empty str, not int 5$"),
    (("echo", "text"), TypeError, "^params must be a mapping or a list, not str 'text'$"),
    (("echo", {"x": math.nan}), ValueError, "^message is not JSON: Out of range float"),
    (("echo", {"x": math.inf}), ValueError, "^message is not JSON: Out of range float"),
    (("echo", {"x": object()}), TypeError, "^message is not JSON: Object of type object"),
]


@pytest.mark.parametrize("args,kind,wanted", BAD_MESSAGES)
async def test_a_message_json_cannot_carry_is_refused_and_nothing_is_left_waiting(args, kind, wanted):
    # NaN went out as NaN, which no server parses; a list of params raised
    # dict()'s "dictionary update sequence" and left the request's future
    # behind, to be warned about at close ("exception was never retrieved").
    async with mcpping.connect(peer("echo"), keepalive=None) as p:
        with pytest.raises(kind, match=wanted):
            await p.request(*args)
        with pytest.raises(kind, match=wanted):
            p.notify(*args)
        assert not p._requests.pending and p.info()["in_flight"] == 0
        # By-position params are JSON-RPC's too: sent as a list, as Node does.
        assert (await p.request("echo", [1, "a"]))["result"] == [1, "a"]


async def test_a_peer_used_from_another_loop_says_so_and_keeps_working():
    async with mcpping.connect(peer("echo"), keepalive=None) as p:
        def elsewhere(call):
            with pytest.raises(RuntimeError, match=r"^\w+\(\) called from another event loop"):
                asyncio.run(call())
        for call in (p.ping, lambda: p.request("echo", {}), p.drain):
            await asyncio.to_thread(elsewhere, call)
        assert await p.ping(timeout=2) > 0
        assert not p._pings and not p._requests.pending  # nothing was left behind


@pytest.mark.parametrize("bad,kind", [(0, ValueError), (1.5, ValueError), (10**8, ValueError),
                                      (True, TypeError)])
def test_stats_window_is_refused_by_name(bad, kind):
    # C's row (rtt_window, MCPP_MAX_RTT_WINDOW) and sentence, Node's too
    # (Node said "window must be an integer >= 1" and took any size).
    with pytest.raises(kind, match="^window must be an integer between 1 and 16777216,"):
        Stats(window=bad)
    assert Stats(window=16.0).window == 16


@pytest.mark.parametrize("option,bad,kind,wanted", [
    ("ping_timeout", -1, ValueError, RANGE),
    ("request_timeout", math.nan, ValueError, f"None (no deadline) or {RANGE}"),
    ("role", "peer", ValueError, "'client' or 'server'"),
    ("transport", "tcp", ValueError, "'stdio', 'streamable-http' or 'custom'"),
    ("codec", "xml", ValueError, "one of 'sdk', 'json'"),
    ("keepalive", "on", TypeError, "a KeepAlive or None"),
])
async def test_guard_options_are_refused_by_name(option, bad, kind, wanted):
    import anyio
    send, recv = anyio.create_memory_object_stream[object](10)
    with pytest.raises(kind) as ei:
        async with mcpping.guard(recv, send, **{"codec": "json", option: bad}):
            pass
    assert str(ei.value).startswith(f"{option} must be {wanted}")


async def test_guard_ping_timeout_is_refused_by_name():
    import anyio
    send, recv = anyio.create_memory_object_stream[object](10)
    async with mcpping.guard(recv, send, codec="json", keepalive=None) as (_r, _w, g):
        with pytest.raises(ValueError, match=f"^timeout must be {RANGE}, not nan"):
            await g.ping(timeout=math.nan)
        assert g.stats.count == 0


async def test_sdk_transport_options_are_refused_by_name():
    from mcpping.sdk import StdioServerParameters, stdio_client, stdio_peer
    server = StdioServerParameters(command=PY, args=[str(peer("echo")[1])])
    with pytest.raises(ValueError, match=f"^kill_grace must be 0 \\(SIGKILL at once\\) or {RANGE}"):
        async with stdio_peer(server, kill_grace=-1):
            pass
    with pytest.raises(TypeError, match="^keepalive must be a KeepAlive or None"):
        async with stdio_client(server, keepalive=30):
            pass


@pytest.mark.parametrize("settings,wanted", [
    ({"jitter_pct": 500}, "jitter_pct must be between 0 and 100"),
    ({"failures": 0}, "failures must be between 1 and 1000"),
    ({"timeout_ms": 2**31}, "timeout_ms must be between 1 and 2147483647 ms"),
    ({"interval_ms": 5}, "interval_ms must be 0 (off) or between min_interval_ms and 2147483647 ms"),
])
def test_the_engine_check_names_the_field_it_refuses(settings, wanted):
    with pytest.raises(ValueError) as ei:
        _native.Engine(settings, lambda kind, frame: None)
    assert str(ei.value).startswith(f"settings: {wanted}")


@pytest.mark.parametrize("value,kind", [(-1, ValueError), (2**32, ValueError), (1.5, TypeError)])
def test_native_settings_are_never_wrapped(value, kind):
    with pytest.raises(kind, match="^setting timeout_ms must be (an integer )?between 0 and 4294967295"):
        _native.Engine({"timeout_ms": value}, lambda kind, frame: None)


@pytest.mark.parametrize("options,wanted", [
    (dict(command=["echo", 5]), "command[1] must be a str or os.PathLike, not 5"),
    (dict(env={"A": 1}), "env must map non-empty names without '=' to str values, not 'A': 1"),
    (dict(env={"A=B": "c"}), "env must map non-empty names without '=' to str values"),
    (dict(on_message="print"), "on_message must be callable or None, not 'print'"),
    (dict(on_close=1), "on_close must be callable or None, not 1"),
    (dict(on_event=[]), "on_event must be callable or None, not []"),
])
async def test_connect_refuses_what_it_would_otherwise_convert_silently(options, wanted):
    options.setdefault("command", peer("echo"))
    with pytest.raises(TypeError) as ei:
        await mcpping.connect(**options)
    assert str(ei.value).startswith(wanted)


# The Python half of tests/fixtures/setting_sentences.json (the Node half is
# in tests/node/validate.test.js): each bad value is refused with C's
# sentence, shown in seconds, so both bindings say the same thing.
_SENTENCES = json.loads((Path(__file__).parents[1] / "fixtures" / "setting_sentences.json").read_text())
_PY_NAMES = {"timeout_ms": ("KeepAlive", "timeout"), "interval_ms": ("KeepAlive", "interval"),
             "min_interval_ms": ("KeepAlive", "min_interval"), "failures": ("KeepAlive", "failures"),
             "jitter_pct": ("KeepAlive", "jitter_pct"), "reconnect.initial_ms": ("Reconnect", "initial"),
             "reconnect.max_delay_ms": ("Reconnect", "max_delay"),
             "reconnect.multiplier": ("Reconnect", "multiplier"), "reconnect.jitter": ("Reconnect", "jitter"),
             "reconnect.max_attempts": ("Reconnect", "max_attempts")}
_FLOORS = {"interval_ms": "min_interval", "reconnect.max_delay_ms": "initial"}


def _seconds(ms: str) -> str:
    s = float(ms) / 1000
    return str(int(s)) if s.is_integer() else repr(s)


@pytest.mark.parametrize("case", _SENTENCES["cases"], ids=lambda c: f"{c['setting']}={c['value']}")
def test_a_bad_setting_gets_the_sentence_node_gives_too(case):
    cls, field = _PY_NAMES[case["setting"]]
    value = case["value"] / 1000 if case["setting"].endswith("_ms") else case["value"]
    with pytest.raises(ValueError) as ei:
        getattr(mcpping, cls)(**{field: value})
    wanted = re.sub(r"\{(-?[\d.]+)\}", lambda m: _seconds(m.group(1)), case["sentence"])
    wanted = wanted.format(name=f"{cls}.{field}", floor=_FLOORS.get(case["setting"], ""), unit="seconds")
    assert str(ei.value) == wanted


def test_call_deadlines_default_to_cs_one_value_for_stdio_and_http():
    """A request's and the handshake's default deadlines are C's
    (MCPP_REQUEST_TIMEOUT_MS, MCPP_INITIALIZE_TIMEOUT_MS), the same for a
    stdio Peer and an HttpPeer (http.connect's handshake said 10 s, stdio 30 s)."""
    import inspect
    from mcpping import http

    def default(fn, name):
        return inspect.signature(fn).parameters[name].default

    request_s = _native.REQUEST_TIMEOUT_MS / 1000
    init_s = _native.INITIALIZE_TIMEOUT_MS / 1000
    assert (request_s, init_s) == (30.0, 30.0)
    assert default(mcpping.Peer.request, "timeout") == request_s
    assert default(http.HttpPeer.request, "timeout") == request_s
    assert default(mcpping.Peer.initialize, "timeout") == init_s
    assert default(http.HttpPeer.initialize, "timeout") == init_s
    assert default(mcpping.connect, "init_timeout") == init_s
    assert default(http.connect, "init_timeout") == init_s
