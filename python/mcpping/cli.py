"""The ``mcpping`` command: ping(8) for MCP servers (docs/cli.md)."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from . import _check, _native
from ._config_check import _connect_reason
from ._report import Reporter
from .errors import PeerClosed, PingError, PingInvalid, PingTimeout, PingUnsupported, SpawnError
from .peer import HandshakeError, Peer

USAGE = """\
usage: mcpping [options] -- COMMAND [ARG...]   spawn a stdio server and ping it
       mcpping [options] URL                   ping a Streamable HTTP server
       mcpping [options] [--demo]              ping the bundled demo server (the default)
       mcpping [options] --config FILE|auto    ping every server of a client config
       mcpping wrap [options] -- COMMAND [ARG...]  proxy a stdio server for an MCP client
                                               (mcpping wrap --help)
       mcpping --config FILE --wrap|--unwrap [--write]  put every stdio server of a
                                               config behind mcpping wrap, or take it away
  -c N      count (demo default 5, --config 3; otherwise until Ctrl-C)
  -i SEC    interval between pings (default 1; 0 = flood)
  -W SEC    per-ping timeout (default 5)
  -w SEC    overall deadline: stop after SEC seconds whatever the count
            (--config: each server's deadline, default 15)
  -q        summary only
  --json    one JSON object per line
  --log FILE  append governance records (JSONL) to FILE
  --no-init   ping without the initialize handshake
  --config FILE|auto  Claude Desktop, Claude Code, Cursor or VS Code config;
              auto: the usual places on this OS (repeatable)
  -h, --help  usage;  -V, --version  version
"""

NO_PING_VERSION = "2026-07-28"
#: Each server's deadline under --config unless -w says otherwise, in seconds.
CONFIG_DEADLINE = 15.0


class UsageError(Exception):
    """Bad command line."""


@dataclass
class Options:
    """The parsed command line."""

    count: int | None = None
    interval: float = 1.0
    timeout: float = 5.0
    deadline: float | None = None
    quiet: bool = False
    json: bool = False
    log: str | None = None
    init: bool = True
    command: list[str] = field(default_factory=list)
    url: str | None = None
    demo: bool = False
    configs: list[str] = field(default_factory=list)


def _number(flag: str, text: str, integer: bool = False) -> float:
    try:
        v = int(text) if integer else float(text)
    except ValueError:
        raise UsageError(f"{flag} needs {'an integer' if integer else 'a number'}, got {text!r}") from None
    if integer and v < 1:
        raise UsageError(f"{flag} must be a positive integer")
    return v


def _seconds(flag: str, text: str, low: float) -> float:
    """A time option: low .. MAX_SECONDS (the engine's longest wait), never clamped."""
    v = _number(flag, text)
    try:
        _check.seconds(flag, v, low=low)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return v


def parse_args(argv: list[str]) -> Options | str:
    """Parses argv; returns Options, or "help"/"version"."""
    o = Options()
    i = 0
    takes = {"-c", "-i", "-W", "-w", "--log", "--config"}
    argv = list(argv)
    while i < len(argv):
        a = argv[i]
        if a == "--":
            o.command = argv[i + 1:]
            if not o.command:
                raise UsageError("-- needs a COMMAND")
            break
        # Attached values, as the Node command takes them: -c5, -i0.2, --log=FILE.
        if len(a) > 2 and a[:2] in ("-c", "-i", "-W", "-w"):
            argv[i:i + 1] = [a[:2], a[2:]]
            continue
        if a.startswith("--log="):
            argv[i:i + 1] = ["--log", a[6:]]
            continue
        if a.startswith("--config="):
            if not a[9:]:
                raise UsageError("--config needs a FILE or auto")
            o.configs.append(a[9:])
            i += 1
            continue
        if a in ("-h", "--help"):
            return "help"
        if a in ("-V", "--version"):
            return "version"
        if a in takes:
            if i + 1 >= len(argv):
                raise UsageError(f"{a} needs a value")
            v = argv[i + 1]
            i += 2
            if a == "-c":
                o.count = int(_number(a, v, integer=True))
            elif a == "-i":
                o.interval = _seconds(a, v, low=0)  # 0: flood
            elif a in ("-W", "-w"):
                t = _seconds(a, v, low=_check.MIN_SECONDS)
                if a == "-W":
                    o.timeout = t
                else:
                    o.deadline = t
            elif a == "--config":
                if not v:
                    raise UsageError("--config needs a FILE or auto")
                o.configs.append(v)
            else:
                if not v:
                    raise UsageError("--log needs a value")
                o.log = v
            continue
        if a == "-q":
            o.quiet = True
        elif a == "--json":
            o.json = True
        elif a == "--no-init":
            o.init = False
        elif a == "--demo":
            o.demo = True
        elif a.startswith("-"):
            raise UsageError(f"unknown option {a}")
        elif a.startswith(("http://", "https://")) and o.url is None:
            o.url = a
        else:
            raise UsageError(f"unexpected argument {a!r} (put a server command after --)")
        i += 1
    if sum(bool(x) for x in (o.command, o.url, o.demo, o.configs)) > 1:
        raise UsageError("give one target: -- COMMAND, URL, --config, or --demo")
    if o.configs:
        if not o.init:
            raise UsageError("--config runs each server's handshake: drop --no-init")
        if o.count is None:
            o.count = 3
        if o.deadline is None:
            o.deadline = CONFIG_DEADLINE
        return o
    if not o.command and not o.url:
        o.demo = True
        o.command = [sys.executable, "-m", "mcpping.demo"]
        if o.count is None:
            o.count = 5
    return o


def _fail(reason: str) -> int:
    sys.stderr.write(f"mcpping: {reason}\n")
    sys.stderr.flush()
    return 2


async def run(o: Options) -> int:
    """Connects, pings as asked, prints, returns the exit status."""
    loop = asyncio.get_running_loop()
    start = time.monotonic()
    end = start + o.deadline if o.deadline is not None else math.inf
    stop = asyncio.Event()
    try:
        loop.add_signal_handler(signal.SIGINT, stop.set)
    except (NotImplementedError, RuntimeError):
        pass
    rep = Reporter(o.json, o.quiet)
    peer: Any
    transport = "streamable-http" if o.url else "stdio"
    try:
        if o.url:
            from .http import HttpPeer
            peer = HttpPeer(o.url, ping_timeout=o.timeout, record=o.log)
        else:
            peer = Peer(o.command, keepalive=None, env=None, cwd=None, stderr="ignore",
                        record=o.log, ping_timeout=o.timeout, request_timeout=None,
                        kill_grace=1.0, on_message=None, on_close=None)
    except SpawnError as e:
        msg = str(e)
        return _fail(msg if msg.startswith("cannot start") else
                     f"cannot start {os.path.basename(o.command[0])}: {msg}")
    except OSError as e:
        return _fail(f"cannot open log: {e}")
    try:
        if o.init:
            try:
                await peer.initialize(min(30.0, max(0.001, end - time.monotonic())))
            except (HandshakeError, PeerClosed) as e:
                if o.url and getattr(peer, "fatal", None) is not None:
                    return _fail(f"cannot connect to {o.url}: {_connect_reason(peer.fatal)}")
                return _fail(f"handshake failed: {e}")
            if peer.protocol_version and peer.protocol_version >= NO_PING_VERSION:
                return _fail(f"ping unsupported: protocol {peer.protocol_version} has no ping")
        rep.connected(peer.name, transport, peer.protocol_version,
                      getattr(peer, "session_id", None), int(round(o.timeout * 1000)),
                      int(round(o.interval * 1000)))
        return await _ping_loop(o, peer, rep, stop, end)
    finally:
        await peer.close()


async def run_config(o: Options) -> int:
    """--config: checks every server of the configs at once, one row each."""
    from . import config
    from ._config_check import Plan, check_all
    from ._report import ConfigReporter
    paths: list[str] = []
    auto = False
    for c in o.configs:
        if c == "auto":
            auto = True
            paths += [p for p in config.auto_paths() if os.path.isfile(p) and p not in paths]
        elif c not in paths:
            paths.append(c)
    if not paths:
        return _fail("--config auto: no client config found in "
                     + ", ".join(config.auto_paths()))
    files: list[config.ConfigFile] = []
    for p in paths:
        try:
            files.append(config.load(p, require_servers=not auto or p in o.configs))
        except config.ConfigError as e:
            return _fail(str(e))
    if o.log:
        try:
            open(o.log, "a").close()
        except OSError as e:
            return _fail(f"cannot open log: {e}")
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    try:
        loop.add_signal_handler(signal.SIGINT, stop.set)
    except (NotImplementedError, RuntimeError):
        pass
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


async def _ping_loop(o: Options, peer: Any, rep: Reporter, stop: asyncio.Event,
                     end: float) -> int:
    sent = received = 0
    first = time.monotonic()
    seq = 0
    while (o.count is None or seq < o.count) and not stop.is_set() and time.monotonic() < end:
        seq += 1
        sent += 1
        wait = min(o.timeout, end - time.monotonic())
        ping = asyncio.ensure_future(peer.ping(o.timeout))
        stopper = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait({ping, stopper}, timeout=max(0.0, wait) + 0.5,
                                     return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if ping not in done:
            ping.cancel()  # Ctrl-C or the -w deadline cut this ping short
            break
        try:
            rtt = ping.result()
        except PingTimeout:
            rep.timeout(seq, int(round(o.timeout * 1000)))
        except PingInvalid as e:
            rep.invalid(seq, e.message)
        except PingError as e:
            rep.ping_error(seq, e.code, e.message)
        except PingUnsupported as e:
            rep.unsupported(seq, e.code, e.message)
            return _fail(f"ping unsupported: {e}")
        except PeerClosed as e:
            sent -= 1
            if received == 0:
                if o.url and getattr(peer, "fatal", None) is not None:
                    return _fail(f"cannot connect to {o.url}: {_connect_reason(peer.fatal)}")
                return _fail(f"connection closed: {e}")
            break
        else:
            received += 1
            rep.pong(seq, rtt * 1000)
        if o.count is not None and seq >= o.count:
            break
        next_at = first + seq * o.interval
        delay = min(next_at, end) - time.monotonic()
        if delay > 0:
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except asyncio.TimeoutError:
                pass
    rep.summary(sent, received, (time.monotonic() - first) * 1000)
    return 0 if sent and received == sent else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["wrap"]:
        from .wrap import main as wrap_main
        return wrap_main(args[1:])
    if "--wrap" in args or "--unwrap" in args:
        from .config_wrap import main as config_wrap_main
        return config_wrap_main(args)
    try:
        o = parse_args(args)
    except UsageError as e:
        return _fail(str(e))
    if o == "help":
        sys.stdout.write(USAGE)
        return 0
    if o == "version":
        sys.stdout.write(f"mcpping {_native.VERSION}\n")
        return 0
    assert isinstance(o, Options)
    try:
        return asyncio.run(run_config(o) if o.configs else run(o))
    except KeyboardInterrupt:
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
