"""The ``mcpping`` command: ping(8) for MCP servers (docs/cli.md).

Plumbing only: the command line, the check's rules (count, interval,
deadlines, the method, exit statuses) and every byte printed come from the C
application layer (csrc/src/app, via ``_native.cli_*``). This module opens
the connection it is asked to open, sends what it is asked to send, and
writes what it is given.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from types import SimpleNamespace
from typing import Any

from . import _native
from ._commands import CLOSED, ERROR, INVALID, OK, TIMEOUT, now_ms as _now_ms
from ._commands import open_server, ping_reply, stop_on, unreachable
from .errors import PeerClosed, RequestInDoubt, SpawnError
from .peer import HandshakeError, Peer

# What the state machine asks (app.h mcpp_cli_do) and what it is told.
_OPEN, _LIST_TOOLS, _SEND, _WAIT, _EXIT = 1, 2, 3, 4, 5
_OPEN_OK, _SPAWN_FAILED, _CONNECT_FAILED, _HANDSHAKE_FAILED, _TIMED_OUT = range(5)


def _write(out: bytes, err: bytes) -> None:
    if out:
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
    if err:
        sys.stderr.buffer.write(err)
        sys.stderr.buffer.flush()


def _drop(chunk: str) -> None:
    """A stdio server's stderr, read and not shown."""


class _Target:
    """The connection the check runs on: stdio (the C driver) or HTTP."""

    def __init__(self, o: dict[str, Any]) -> None:
        self.o = o
        self.peer: Any = None

    async def open(self, timeout_s: float) -> tuple[int, tuple[Any, ...]]:
        o = self.o
        http = o["target"] == "http"
        try:
            self.peer = open_server(
                url=o["url"] if http else None, headers=o["headers"] or None,
                command=o["command"] or [sys.executable, "-m", "mcpping.demo"],
                env=o["env"] or None, record=o["log"], ping_timeout=o["timeout_ms"] / 1000,
                # Not shown, so that the output stays ping(8)'s, but read:
                # a server that exits is quoted by C ("status 3: fatal: ...").
                stderr=_drop)
        except SpawnError as e:
            return _SPAWN_FAILED, (None, None, None, None, str(e))
        if o["init"]:
            try:
                # The step's own bound (run()) decides a timeout, so both
                # commands say the same: the handshake gets a second more.
                await self.peer.initialize(timeout_s + _native.CLI_STEP_SLACK_MS / 1000)
            except (HandshakeError, PeerClosed) as e:
                gone = unreachable(self.peer)
                if gone is not None:
                    return _CONNECT_FAILED, (None, None, None, None, gone)
                return _HANDSHAKE_FAILED, (None, None, None, None, str(e))
        return _OPEN_OK, (self.peer.name, "streamable-http" if http else "stdio",
                          self.peer.protocol_version, getattr(self.peer, "session_id", None), None)

    async def check(self, method: str, timeout_s: float) -> tuple[int, float, Any, str | None]:
        """One check: (kind, rtt_ms, code, message) as app.h's mcpp_cli_replied takes them."""
        if method == "ping":
            reply = await ping_reply(self.peer, timeout_s)
            if reply[0] == CLOSED:
                return CLOSED, 0.0, None, await self._closed_reason(reply[3], timeout_s)
            return reply
        t0 = time.monotonic()
        try:
            resp = await self.peer.request(method, {}, timeout=timeout_s)
        except asyncio.TimeoutError:
            return TIMEOUT, 0.0, None, None
        except RequestInDoubt as e:  # its answer broke off: the engine's answer, as an error
            return ERROR, 0.0, e.code, e.message
        except PeerClosed as e:
            return CLOSED, 0.0, None, await self._closed_reason(str(e), timeout_s)
        rtt = (time.monotonic() - t0) * 1000
        self.result = resp.get("result")
        if "error" in resp:
            err = resp["error"] if isinstance(resp["error"], dict) else {}
            return ERROR, 0.0, err.get("code"), str(err.get("message", ""))
        if not isinstance(self.result, dict):
            return INVALID, 0.0, None, None  # C words it
        return OK, rtt, None, None

    async def _closed_reason(self, said: str | None, wait_s: float) -> str | None:
        """Why the connection closed: what could not reach the URL, or a
        stdio server's close reason ("server exited with status 3"), which
        arrives just after the check that met it."""
        gone = unreachable(self.peer)
        if gone is not None:
            return gone
        if isinstance(self.peer, Peer):
            try:
                return (await asyncio.wait_for(self.peer.wait_closed(), wait_s)).reason
            except asyncio.TimeoutError:
                pass
        return said

    async def tools(self, timeout_s: float) -> tuple[int, list[str], int | None, str | None]:
        kind, _, code, message = await self.check("tools/list", timeout_s)
        if kind != OK:
            return kind, [], code, message
        tools = self.result.get("tools") if isinstance(self.result, dict) else None
        names = [t["name"] for t in tools or [] if isinstance(t, dict) and isinstance(t.get("name"), str)]
        return OK, names, None, None

    def unreadable(self) -> str | None:
        """What the server wrote that is not JSON-RPC (C's sentence)."""
        if isinstance(self.peer, Peer):
            return self.peer._unreadable()
        return self.peer.driver.unreadable() if self.peer is not None else None

    async def close(self) -> None:
        if self.peer is not None:
            await self.peer.close()


async def run(argv: list[str]) -> int:
    """Runs the check the C state machine describes; returns the exit status."""
    o = _native.cli_parse(argv)
    run_ = _native.cli_run(argv, _now_ms())
    stop = asyncio.Event()
    stop_on(stop)
    target = _Target(o)
    try:
        while True:
            what, method, timeout_ms, until_ms, status, out, err = _native.cli_next(run_, _now_ms())
            _write(out, err)
            if what == _EXIT:
                return status
            if what == _OPEN:
                opening = asyncio.ensure_future(target.open(timeout_ms / 1000))
                done = await _first(opening, stop, timeout_ms / 1000)
                if stop.is_set() and not done:
                    _native.cli_interrupt(run_, _now_ms())
                elif not done:
                    _native.cli_open_done(run_, _now_ms(), _TIMED_OUT, None, None, None, None,
                                          target.unreadable())
                else:
                    result, info = opening.result()
                    _native.cli_open_done(run_, _now_ms(), result, *info)
            elif what == _LIST_TOOLS:
                _native.cli_tools(run_, _now_ms(), *await target.tools(timeout_ms / 1000))
            elif what == _SEND:
                assert method is not None  # C names the method of every SEND
                sending = asyncio.ensure_future(target.check(method, timeout_ms / 1000))
                limit = None if not until_ms else max(0, until_ms - _now_ms()) / 1000
                if await _first(sending, stop, limit):
                    _native.cli_replied(run_, _now_ms(), *sending.result())
                else:
                    _native.cli_interrupt(run_, _now_ms())  # Ctrl-C or -w
            elif what == _WAIT:
                try:
                    await asyncio.wait_for(stop.wait(), max(0, until_ms - _now_ms()) / 1000)
                    _native.cli_interrupt(run_, _now_ms())
                except asyncio.TimeoutError:
                    pass
    finally:
        await target.close()


async def _first(task: asyncio.Future[Any], stop: asyncio.Event, limit: float | None) -> bool:
    """Waits for task, Ctrl-C or limit seconds; True if task finished (else it is cancelled)."""
    stopper = asyncio.ensure_future(stop.wait())
    done, _ = await asyncio.wait({task, stopper}, timeout=limit,
                                 return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    if task in done:
        return True
    task.cancel()
    try:
        await task
    except BaseException:
        pass
    return False


def _fail(reason: str) -> int:
    sys.stderr.write(f"mcpping: {reason}\n")
    sys.stderr.flush()
    return 2


def load_configs(configs: list[str]) -> Any:
    """The --config files (C's choice: mcpp_config_files), or why not (a str)."""
    from . import config
    picked = _native.config_files(configs, config.auto_paths())
    if isinstance(picked, str):
        return picked
    try:
        return [config.load(p, require_servers=require) for p, require in picked]
    except config.ConfigError as e:
        return str(e)


async def run_config(o: SimpleNamespace) -> int:
    """--config: checks every server of the configs at once, one row each."""
    from ._config_check import Plan, check_all
    from ._report import ConfigReporter
    files = load_configs(o.configs)
    if isinstance(files, str):
        return _fail(files)
    stop = asyncio.Event()
    stop_on(stop)
    rep = ConfigReporter(o.json, quiet=o.quiet)
    rep.files([(f.path, len(f.servers)) for f in files])
    servers = [(s, f.workspace) for f in files for s in f.servers]
    assert o.count is not None and o.deadline is not None
    rep.start(len(servers), o.count, o.interval, o.timeout, o.deadline)
    plan = Plan(count=o.count, interval=o.interval, timeout=o.timeout, deadline=o.deadline,
                log=o.log)
    start = time.monotonic()
    results = await check_all(servers, plan, stop)
    return rep.results(results, (time.monotonic() - start) * 1000)


def config_options(o: dict[str, Any]) -> SimpleNamespace:
    """The hand-over to the --config runner: C's parsed options in its units."""
    return SimpleNamespace(
        configs=o["configs"], wrap=o["wrap"], unwrap=o["unwrap"], write=o["write"],
        command_path=o["command_path"], count=o["count"], interval=o["interval_ms"] / 1000,
        timeout=o["timeout_ms"] / 1000, deadline=o["deadline_ms"] / 1000,
        connect_timeout=o["connect_timeout_ms"] / 1000, json=o["json"], quiet=o["quiet"],
        log=o["log"])


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["wrap"]:
        from .wrap import main as wrap_main
        return wrap_main(args[1:])
    o = _native.cli_parse(args)
    try:
        if o["done"]:  # -h, -V, bad usage: C's bytes and status
            _write(o["out"].encode(), o["err"].encode())
            return int(o["status"])
        if o["mode"] == "config":
            if o["wrap"] or o["unwrap"]:
                from .config_wrap import run_wrap
                return run_wrap(o["configs"][0], unwrap=bool(o["unwrap"]), write=bool(o["write"]),
                                command=o["command_path"])
            return asyncio.run(run_config(config_options(o)))
        if o["mode"] == "watch":
            from . import watch
            return asyncio.run(watch.run(args, o))
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return 1
    except BrokenPipeError:
        return _output_closed()


def _output_closed() -> int:
    """stdout's reader left (``| head``): the run stopped where it wrote
    (its server closed), nothing more is written, not even the
    interpreter's last flush, and the status says so (C's)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return _native.EXIT_OUTPUT_CLOSED


if __name__ == "__main__":
    raise SystemExit(main())
