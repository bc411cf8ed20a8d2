"""The application's JSON-RPC requests on one connection: their frames,
ids and futures, and which inbound answers are theirs. Shared by the stdio
Peer and the Streamable HTTP client (as Node's ``rpc.js`` is by its two);
the engine times each request and makes its answer if none comes."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any, Union

from . import _check, _native
from .errors import RequestInDoubt

#: A request's answer as its future gets it: the message and, when the
#: engine made it, its kind (``timeout``, ``in_doubt``, ``cancelled``, ...).
Answer = tuple[dict[str, Any], Union[str, None]]

#: Given-up requests whose late answers are still recognised and dropped.
_MAX_GIVEN_UP = 1024
_PREFIX = "mcpping-"


class Requests:
    """Ids (``mcpping-N``, never the application's own), a future per
    request in flight, and the ids given up on, whose late answers are
    taken here rather than passed on (the oldest forgotten first)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.pending: dict[str, asyncio.Future[Answer]] = {}
        self._given_up: dict[str, None] = {}
        self._ids = itertools.count(1)

    def create(self, method: str, params: Mapping[str, Any] | None
               ) -> tuple[str, bytes, asyncio.Future[Answer]]:
        """A new request: its id, its frame (checked before anything waits
        on it) and the future its answer settles."""
        rid = f"{_PREFIX}{next(self._ids)}"
        frame = rpc_frame(method, params, rid)
        fut: asyncio.Future[Answer] = self.loop.create_future()
        self.pending[rid] = fut
        return rid, frame, fut

    def give_up(self, rid: str) -> None:
        """Stops waiting for rid; its answer, if one comes, is dropped."""
        self.pending.pop(rid, None)
        self._given_up[rid] = None
        if len(self._given_up) > _MAX_GIVEN_UP:
            del self._given_up[next(iter(self._given_up))]

    def answer(self, frame: bytes, kind: str | None = None) -> bool:
        """Settles the request frame answers (kind: the engine's, if it
        made it); True if frame was an answer to one of ours."""
        if not (self.pending or self._given_up) or b'"mcpping-' not in frame:
            return False  # the common case, without parsing
        try:
            # As text: a stray invalid byte must not hide our answer, and
            # json.loads on bytes would skip a byte order mark the engine refuses.
            msg = json.loads(frame.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return False
        if not isinstance(msg, dict) or "method" in msg:
            return False
        rid = msg.get("id")
        if not isinstance(rid, str):
            return False  # ours are str; an unhashable id is nobody's here
        fut = self.pending.pop(rid, None)
        if fut is not None:
            if not fut.done():
                fut.set_result((msg, kind))
            return True
        if rid in self._given_up:
            del self._given_up[rid]
            return True
        return False

    def fail_all(self, error: Callable[[], BaseException]) -> None:
        """Fails every request still waiting (the connection closed)."""
        pending, self.pending = self.pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(error())


def outcome(method: str, answer: Answer) -> dict[str, Any]:
    """What ``request()`` gives for its answer, on stdio and HTTP alike: the
    message, or the error the engine's own answer stands for, in C's words
    (a timeout: ``TimeoutError``; an answer that cannot come: RequestInDoubt)."""
    msg, kind = answer
    if kind == "timeout":
        # C's sentence, not "cancelled on the server": a request held for a
        # reconnect times out without ever reaching one (and is never sent).
        raise asyncio.TimeoutError(msg["error"]["message"])
    if kind in _native.IN_DOUBT_KINDS:
        raise RequestInDoubt(method, kind, msg["error"]["message"], msg["error"]["code"])
    return msg


def timeout_ms(timeout: float | None) -> int:
    """A request's timeout in ms for the engine; None: none of its own (0)."""
    ms = _check.optional_seconds("timeout", timeout, none="none of its own")
    return 0 if ms is None else ms


def encode(message: Mapping[str, Any] | str | bytes) -> bytes:
    """A message the application sends, as the bytes of one frame."""
    if isinstance(message, Mapping):
        try:
            # allow_nan=False: NaN and Infinity are no JSON, and a server's
            # parser would refuse the whole message.
            return json.dumps(message, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False).encode()
        except ValueError as e:
            raise ValueError(f"message is not JSON: {e}") from None
        except TypeError as e:
            raise TypeError(f"message is not JSON: {e}") from None
    if isinstance(message, str):
        return message.encode()
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    # bytes(5) would be five NUL bytes on the server's stdin.
    raise TypeError("message must be a mapping or its JSON text (str or bytes), "
                    f"not {type(message).__name__} {message!r}"[:200])


def rpc_frame(method: Any, params: Any, rid: str | None = None) -> bytes:
    """A JSON-RPC request (``rid`` given) or notification as compact JSON,
    checked first: the method a non-empty str, params a mapping or a list
    (by-position params, as JSON-RPC allows), every value one JSON carries."""
    _check.text("method", method)
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    if rid is not None:
        msg["id"] = rid
    msg["method"] = method
    if isinstance(params, Mapping):
        msg["params"] = dict(params)
    elif isinstance(params, (list, tuple)):
        msg["params"] = list(params)
    elif params is not None:
        raise TypeError(f"params must be a mapping or a list, not {type(params).__name__} {params!r}"[:200])
    return encode(msg)
