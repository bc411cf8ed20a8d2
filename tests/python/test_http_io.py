"""The Streamable HTTP client's response parser (C's, mcpping._native.HttpResponse,
as mcpping._http_io reads answers with it): what a server's bytes give the
session, however the reads split them; and the bytes a request goes as."""

from __future__ import annotations

import random

import pytest

from mcpping._http_io import NotHttp
from mcpping._native import HttpResponse as _Response
from mcpping._native import HttpSession

EVENT = b"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1}\r\n\r\n"
SSE_ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: s-1\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n"
              + b"%x\r\n" % len(EVENT) + EVENT + b"\r\n0\r\n\r\n")


def _parse(*reads: bytes) -> tuple[list[tuple], _Response]:
    r = _Response()
    out: list[tuple] = []
    for data in reads:
        out += r.feed(data)
    return out, r


def _merged(parts: list[tuple]) -> list[tuple]:
    """Parts with consecutive body reads joined: what the session is given."""
    out: list[tuple] = []
    for p in parts:
        if p[0] == "body" and out and out[-1][0] == "body":
            out[-1] = ("body", out[-1][1] + p[1])
        else:
            out.append(p)
    return out


def test_a_chunked_event_stream_gives_its_head_body_and_end_however_it_is_split():
    whole, r = _parse(SSE_ANSWER)
    assert whole == [("head", 200, {"content-type": "text/event-stream", "mcp-session-id": "s-1",
                                    "transfer-encoding": "chunked"}),
                     ("body", EVENT),
                     ("end",)]
    assert r.ended and r.keep_alive
    for cut in range(1, len(SSE_ANSWER)):
        parts, r = _parse(SSE_ANSWER[:cut], SSE_ANSWER[cut:])
        assert _merged(parts) == whole, cut
    parts, r = _parse(*[SSE_ANSWER[i:i + 1] for i in range(len(SSE_ANSWER))])
    assert _merged(parts) == whole and r.ended


def test_a_length_body_ends_at_its_length_and_no_body_ends_at_once():
    parts, r = _parse(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
    assert parts == [("head", 202, {"content-length": "0"}), ("end",)] and r.keep_alive
    parts, r = _parse(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab", b"cde")
    assert parts == [("head", 200, {"content-length": "5"}), ("body", b"ab"), ("body", b"cde"), ("end",)]
    parts, r = _parse(b"HTTP/1.1 204 No Content\r\n\r\n")
    assert parts == [("head", 204, {}), ("end",)]


def test_a_body_without_length_ends_when_the_server_closes_and_its_connection_is_not_kept():
    parts, r = _parse(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n")
    assert parts[-1] == ("body", b"data: 1\n\n") and not r.ended and not r.keep_alive
    assert r.closed() and r.ended
    # A length or chunked body cut short by the close is broken.
    _, r = _parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc")
    assert not r.closed()
    _, r = _parse(SSE_ANSWER[:-5])
    assert not r.closed()


def test_which_connections_may_carry_the_next_request():
    assert _parse(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")[1].keep_alive
    assert not _parse(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")[1].keep_alive
    assert not _parse(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")[1].keep_alive
    assert _parse(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")[1].keep_alive
    # Bytes past the answer's end belong to no request: the connection goes.
    assert not _parse(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1")[1].keep_alive


def test_an_interim_answer_is_skipped_and_folded_and_repeated_headers_are_joined():
    parts, _ = _parse(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
                      b"X-A: one\r\n  two\r\nx-a: three\r\n\r\n")
    assert parts == [("head", 200, {"content-length": "0", "x-a": "one two, three"}), ("end",)]


@pytest.mark.parametrize("answer", [
    b"SSH-2.0-OpenSSH_9.2\r\n\r\n",
    b"HTTP/1.1 20 OK\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
    b"HTTP/1.1 200 OK\nContent-Length: 2\n\n{}",  # bare LF: llhttp (Node) refuses it too
    b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 101 + b"\r\n",
    b"HTTP/1.1 200 OK\r\nX: " + b"y" * (64 * 1024 + 1),
])
def test_what_no_http_server_sends_is_refused(answer):
    with pytest.raises(NotHttp):
        _parse(answer)


def test_random_bytes_raise_nothing_but_not_http():
    """A small fuzz (seeded, bounded): any bytes, however split, give parts
    or NotHttp, never another exception; a body never exceeds what came."""
    rng = random.Random(1)
    pieces = [b"HTTP/1.1 200 OK\r\n", b"Transfer-Encoding: chunked\r\n", b"Content-Length: 3\r\n",
              b"\r\n", b"5\r\n", b"abcde", b"0\r\n", b"\r\n\r\n", b";x", b"\xff", b"HTTP/1.0 101 S\r\n"]
    for _ in range(3000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9)))
        r = _Response()
        try:
            at = 0
            got = 0
            while at < len(data):
                n = rng.randrange(1, 8)
                got += sum(len(p[1]) for p in r.feed(data[at:at + n]) if p[0] == "body")
                at += n
            assert got <= len(data)
        except NotHttp:
            pass


def _random_answer(rng: random.Random) -> tuple[bytes, bytes, bool]:
    """A response a server may send (framing, headers, body), the body it
    carries, and whether its connection may carry the next request."""
    body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
    head = [b"HTTP/1.1 200 OK", b"Content-Type: text/event-stream"]
    head += [b"X-%d: %s" % (i, b"v" * rng.randrange(0, 40)) for i in range(rng.randrange(0, 5))]
    framing = rng.choice(["length", "chunked", "close"])
    if framing == "length":
        head.append(b"Content-Length: %d" % len(body))
        wire = body
    elif framing == "chunked":
        head.append(b"Transfer-Encoding: chunked")
        wire, at = b"", 0
        while at < len(body):
            n = rng.randrange(1, 64)
            ext = rng.choice([b"", b";name=value"])
            wire += b"%x%s\r\n%s\r\n" % (len(body[at:at + n]), ext, body[at:at + n])
            at += n
        wire += b"0\r\n" + rng.choice([b"", b"X-Trailer: t\r\n"]) + b"\r\n"
    else:
        wire = body
    return b"\r\n".join(head) + b"\r\n\r\n" + wire, body, framing != "close"


def test_any_answer_split_anywhere_gives_its_body_unaltered():
    """A model check (seeded, bounded): 500 answers of random framing,
    headers and bytes, each fed in random splits, give their body byte for
    byte, end where they end (a body until close at the close), and keep
    their connection exactly when their framing allows."""
    rng = random.Random(7)
    for _ in range(500):
        wire, body, framed = _random_answer(rng)
        r, got, at = _Response(), b"", 0
        ended = False
        while at < len(wire):
            n = rng.randrange(1, 40)
            for part in r.feed(wire[at:at + n]):
                assert not ended  # nothing after the end
                if part[0] == "body":
                    got += part[1]
                ended = ended or part[0] == "end"
            at += n
        if not framed:
            assert not ended and r.closed()
        assert (ended or not framed) and got == body
        assert r.keep_alive == framed


def _request(url: str, headers: dict[str, str], frame: bytes) -> bytes:
    """The bytes the session's first exchange goes as."""
    start = HttpSession(url, headers, 0, False).post(frame, 1, True)[0]
    assert start["do"] == "start"
    return start["request"]


def test_a_request_goes_as_node_sends_it():
    """The request's head: Host with the port unless the scheme's, an IPv6
    host in brackets, the session's headers in order, Content-Length for a
    body; a Latin-1 value a byte a character, as node:http and http.client
    send it (one past Latin-1 is refused before: test_http.py)."""
    assert _request("http://[::1]:8080/mcp?x=1", {"Authorization": "Bearer é"}, b'{"jsonrpc":"2.0"}') == (
        b"POST /mcp?x=1 HTTP/1.1\r\nHost: [::1]:8080\r\nAuthorization: Bearer \xe9\r\n"
        b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        b'Content-Length: 17\r\n\r\n{"jsonrpc":"2.0"}')
    assert _request("https://example.com/mcp", {}, b"{}") == (
        b"POST /mcp HTTP/1.1\r\nHost: example.com\r\n"
        b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        b"Content-Length: 2\r\n\r\n{}")
