"""A Streamable HTTP MCP client for pinging, stdlib only (urllib in threads).

Each message is a POST with ``Accept: application/json, text/event-stream``;
the answer is one JSON message or an SSE stream of them. Every inbound
message goes through the engine on the loop thread, which times the pings.
An HTTP error is classified by the C core (``mcpp_http_classify``): a 404
whose body is a JSON-RPC -32601 means the method is unsupported; any other
404 on a session means the session expired, so the handshake runs again (a
``reconnect`` record says so) and the pings that met the 404 are sent again
on the new session; anything else fails the request.
SSE comment lines (``: keep-alive``) carry no message but prove the server
alive: they reach the engine as traffic (SEP-2575's transport-layer proof).
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from . import _native
from ._driver import EngineDriver
from .errors import PeerClosed
from .keepalive import KeepAlive
from .peer import CLIENT_INFO, PROTOCOL_VERSION, HandshakeError
from .records import RecordTarget

__all__ = ["HttpPeer"]


class HttpPeer:
    """One Streamable HTTP MCP endpoint, pinged through the engine."""

    def __init__(self, url: str, *, ping_timeout: float, record: RecordTarget = None,
                 keepalive: KeepAlive | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        self.url = url
        #: Sent with every POST (a config's ``headers``: often a secret).
        self._extra_headers = dict(headers or {})
        u = urllib.parse.urlsplit(url)
        default_port = 443 if u.scheme == "https" else 80
        self.name = f"{u.hostname}:{u.port or default_port}"
        self.protocol_version: str | None = None
        self.session_id: str | None = None
        self.loop = asyncio.get_running_loop()
        self._requests: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        #: Set when the server could not be reached at all.
        self.fatal: BaseException | None = None
        self._ids = 0
        self._init_timeout = 10.0
        #: Pings waiting for a new session (None: no re-initialize running).
        self._after_reinit: list[bytes] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.driver = EngineDriver(self._engine_send, keepalive=keepalive, transport="streamable-http",
                                   ping_timeout=ping_timeout, peer_name=self.name, record=record)

    # ------------------------------------------------------------ HTTP

    def _post_blocking(self, frame: bytes, frame_id: Any) -> None:
        """Runs in a worker thread: one POST, handing each answer to the loop."""
        headers = {**self._extra_headers, "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        sent_session = self.session_id
        if sent_session:
            headers["Mcp-Session-Id"] = sent_session
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        req = urllib.request.Request(self.url, data=frame, headers=headers, method="POST")
        try:
            resp = urllib.request.urlopen(req, timeout=60)
        except urllib.error.HTTPError as e:
            body = e.read()
            verdict = _native.http_classify(e.code, body, sent_session is not None)
            if verdict == "session_expired":
                self._to_loop_call(self._session_expired, (frame, sent_session))
                return
            if frame_id is None:
                return
            # An HTTP error answers this request: give the engine a JSON-RPC
            # error with our id ("unsupported": the body's -32601 itself).
            error = {"code": -32000, "message": f"HTTP {e.code} {e.reason}"}
            try:
                got = json.loads(body)
                if isinstance(got, dict) and isinstance(got.get("error"), dict):
                    error = got["error"]
            except ValueError:
                pass
            self._to_loop(json.dumps({"jsonrpc": "2.0", "id": frame_id, "error": error}).encode())
            return
        except OSError as e:
            self._to_loop_call(self._fail, e)
            return
        with resp:
            sid = resp.headers.get("Mcp-Session-Id")
            if sid and not self.session_id:
                self._to_loop_call(self._set_session, sid)
            ctype = resp.headers.get("Content-Type", "")
            if ctype.startswith("text/event-stream"):
                data: list[str] = []
                for raw in resp:
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if line.startswith("data:"):
                        data.append(line[5:].lstrip(" "))
                    elif line.startswith(":"):
                        self._touch()
                    elif not line and data:
                        self._to_loop("\n".join(data).encode())
                        data = []
                if data:
                    self._to_loop("\n".join(data).encode())
            else:
                body = resp.read()
                if body.strip():
                    self._to_loop(body.strip())

    def _to_loop(self, frame: bytes) -> None:
        self._to_loop_call(self._inbound, frame)

    def _to_loop_call(self, fn: Any, arg: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, arg)
        except RuntimeError:
            pass  # the loop is closed: the run is over

    def _touch(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self.driver.touch)
        except RuntimeError:
            pass  # the loop is closed: the run is over

    def _session_expired(self, what: tuple[bytes, str | None]) -> None:
        """A 404 on our session: initialize again, then resend the pings
        that met it (a ping has no side effects; nothing else is resent)."""
        frame, sent_session = what
        try:
            is_ping = json.loads(frame).get("method") == "ping"
        except (ValueError, AttributeError):
            is_ping = False
        if self._after_reinit is None:
            if sent_session != self.session_id:
                # Already on a newer session: just resend.
                if is_ping:
                    self._post(frame)
                return
            self._after_reinit = []
            self.session_id = None
            self.protocol_version = None
            fut = asyncio.ensure_future(self._reinitialize())
            self._tasks.add(fut)
            fut.add_done_callback(self._tasks.discard)
        if is_ping:
            self._after_reinit.append(frame)

    async def _reinitialize(self) -> None:
        try:
            await self.initialize(self._init_timeout)
        except Exception as e:  # the new handshake failed: the peer is gone
            self._after_reinit = None
            self._fail(e)
            return
        self.driver.record_reconnect()
        waiting, self._after_reinit = self._after_reinit or [], None
        for frame in waiting:
            self._post(frame)

    def _set_session(self, sid: str) -> None:
        self.session_id = sid
        self.driver.set_session_id(sid)

    def _fail(self, exc: BaseException) -> None:
        if self.fatal is None:
            self.fatal = exc
        for fut in self._requests.values():
            if not fut.done():
                fut.set_exception(PeerClosed(str(exc)))
        self.driver.close(f"cannot reach {self.url}: {exc}")

    def _post(self, frame: bytes) -> None:
        try:
            frame_id = json.loads(frame).get("id")
        except ValueError:
            frame_id = None
        # A daemon thread per POST, not the loop's executor: asyncio.run()
        # joins that executor at exit, so a server that accepted and never
        # answered would hold the process for urlopen's whole timeout.
        threading.Thread(target=self._post_blocking, args=(frame, frame_id), daemon=True,
                         name="mcpping-http-post").start()

    def _engine_send(self, kind: int, frame: bytes) -> None:
        self._post(frame)

    def _inbound(self, frame: bytes) -> None:
        if not self.driver.recv(frame):
            return
        try:
            msg = json.loads(frame)
        except ValueError:
            return
        if isinstance(msg, dict) and "method" not in msg:
            fut = self._requests.get(msg.get("id"))
            if fut is not None and not fut.done():
                fut.set_result(msg)

    # ------------------------------------------------------------ API

    async def initialize(self, timeout: float) -> None:
        """Runs the handshake; raises HandshakeError or PeerClosed."""
        self._init_timeout = timeout
        msg = {"jsonrpc": "2.0", "id": "mcpping-init", "method": "initialize",
               "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                          "clientInfo": CLIENT_INFO}}
        frame = json.dumps(msg, separators=(",", ":")).encode()
        fut: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self._requests["mcpping-init"] = fut
        self.driver.observe_outbound(frame)
        self._post(frame)
        try:
            resp = await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            raise HandshakeError(f"no initialize result after {timeout:g} s") from None
        result = resp.get("result")
        if not isinstance(result, dict):
            err = resp.get("error") or {}
            raise HandshakeError(f"initialize failed: {err.get('code')} {err.get('message')}")
        self.protocol_version = result.get("protocolVersion")
        info = result.get("serverInfo") or {}
        if isinstance(info.get("name"), str) and info["name"]:
            self.name = info["name"]
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        self.driver.observe_outbound(note)
        self._post(note)

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      timeout: float = 30.0) -> dict[str, Any]:
        """Sends a request; returns the whole response message (result or error)."""
        self._ids += 1
        rid = f"mcpping-{self._ids}"
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        frame = json.dumps(msg, separators=(",", ":")).encode()
        fut: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self._requests[rid] = fut
        self.driver.observe_outbound(frame)
        self._post(frame)
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._requests.pop(rid, None)

    async def ping(self, timeout: float) -> float:
        """Pings the endpoint; RTT in seconds or a PingFailure/PeerClosed."""
        if self.fatal is not None:
            raise PeerClosed(str(self.fatal))
        return await self.driver.ping(timeout)

    async def close(self) -> None:
        """Stops the engine; POSTs still running finish in their threads."""
        self.driver.close("closed")
