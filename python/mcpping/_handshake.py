"""The client handshake, run by the C machine (mcpp_client_hs): this only
carries its requests and answers and keeps its clock. Used by the stdio
Peer and the Streamable HTTP client alike, so both say the same sentences."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from . import _native
from .errors import PeerClosed, RequestInDoubt

#: request(method, params, timeout) -> the whole answer message.
Request = Callable[[str, Any, float], Awaitable[dict[str, Any]]]
#: Why the connection ended: (reason or None, exit status, signal), or
#: None to pass the PeerClosed on.
ClosedWhy = Callable[[], Awaitable[tuple[str | None, int, int] | None]]


async def run(request: Request, notify: Callable[[str], Awaitable[None] | None], closed_why: ClosedWhy,
              timeout: float, error: type[Exception],
              done: Callable[[dict[str, Any]], None],
              unreadable: Callable[[], str | None] | None = None) -> dict[str, Any]:
    """Runs the handshake within `timeout` seconds; returns the C outcome
    (version, modern, server_name, server_info and result decoded), given
    to `done` first, before the notification goes (its headers name the
    session) and, where notify returns an awaitable (a POST), through
    before the session is used, within `timeout` too. Raises `error(sentence)` with a `kind` attribute if it fails;
    a timeout's sentence adds what `unreadable` says the server wrote
    instead."""
    hs = _native.ClientHandshake(max(1, round(timeout * 1000)))
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while (req := hs.request()) is not None:
        msg = json.loads(req[1])
        try:
            resp = await request(msg["method"], msg.get("params"), max(0.001, end - loop.time()))
        except asyncio.TimeoutError:
            hs.timed_out(unreadable() if unreadable is not None else None)
        except RequestInDoubt:
            # The server failed under the request (a stream cut mid-answer,
            # a process that died and was started again): no refusal.
            hs.closed(None, -1, 0)
        except PeerClosed:
            why = await closed_why()
            if why is None:
                raise  # the transport says it as it is (an unreachable URL)
            hs.closed(*why)
        else:
            hs.answer(json.dumps(resp).encode())
    out: dict[str, Any] = hs.outcome()
    if out["state"] != "done":
        exc = error(out["error"])
        exc.kind = out["kind"]  # type: ignore[attr-defined]
        raise exc
    out["result"] = json.loads(out["result"])
    out["server_info"] = json.loads(out["server_info"]) if out["server_info"] else None
    done(out)
    note = hs.notification()
    if note is not None:
        try:
            sent = notify(json.loads(note)["method"])
            if sent is not None:
                await asyncio.wait_for(asyncio.shield(sent), max(0.001, end - loop.time()))
        except asyncio.TimeoutError:
            pass  # sent, its POST not answered yet: the session goes on
        except PeerClosed:
            pass  # it answered, then left: the close is reported on its own
    return out
