"""Exceptions raised by mcpping."""

from __future__ import annotations

from . import _native

__all__ = [
    "MCPPingError",
    "PingFailure",
    "PingTimeout",
    "PingError",
    "PingInvalid",
    "PingUnsupported",
    "PeerClosed",
    "RequestInDoubt",
    "SpawnError",
]


class MCPPingError(Exception):
    """Base class of every mcpping error."""


class PingFailure(MCPPingError):
    """A ping did not get a valid pong."""


class PingTimeout(PingFailure, TimeoutError):
    """No answer to a ping within its timeout."""

    def __init__(self, timeout: float) -> None:
        super().__init__(_native.PING_TIMEOUT_FORMAT % round(timeout * 1000))
        #: The timeout in force, in seconds.
        self.timeout = timeout


class PingError(PingFailure):
    """The peer answered the ping with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(_native.PING_ERROR_FORMAT % (code, message))
        #: The JSON-RPC error code.
        self.code = code
        #: The peer's error message.
        self.message = message


class PingInvalid(PingFailure):
    """The pong's result was missing or not an object."""

    def __init__(self, message: str | None = None) -> None:
        message = message or _native.PING_INVALID_MESSAGE
        super().__init__(message)
        self.message = message


class PingUnsupported(PingFailure):
    """The peer does not support ping (-32601/-32602, or a protocol without ping).

    The connection stays up; mcpping stops pinging it and relies on passive
    liveness instead.
    """

    def __init__(self, code: int | None = None, message: str | None = None) -> None:
        message = message or _native.PING_UNSUPPORTED_MESSAGE
        super().__init__(message if code is None else _native.PING_ERROR_FORMAT % (code, message))
        self.code = code
        self.message = message


class PeerClosed(MCPPingError, ConnectionError):
    """The connection is closed (or closed while the call was waiting)."""

    @classmethod
    def because(cls, reason: str | None) -> PeerClosed:
        """What a call still waiting when the connection closed raises: the
        close's reason, as C words it, else C's sentence for a closed one."""
        return cls(reason or _native.CONNECTION_CLOSED_TEXT)


class SpawnError(MCPPingError, OSError):
    """The server command could not be started.

    When the OS refused it, ``errno`` says why and the error is also the
    ``OSError`` subclass Python raises for that errno, as ``subprocess`` and
    the SDK's own ``stdio_client`` raise it: ``FileNotFoundError`` (ENOENT),
    ``PermissionError`` (EACCES)."""

    @classmethod
    def of_os(cls, message: str, os_errno: int) -> SpawnError:
        """The error for ``message``, of the kind ``os_errno`` (0: none) makes."""
        kind = type(OSError(os_errno, "")) if os_errno else OSError
        err = (cls if kind is OSError else _spawn_kind(kind))(message)
        err.errno = os_errno or None  # str(err) stays the message
        return err


_SPAWN_KINDS: dict[type, type] = {}


def _spawn_kind(kind: type) -> type:
    """SpawnError that is also ``kind`` (FileNotFoundError, ...), made once."""
    made = _SPAWN_KINDS.get(kind)
    if made is None:
        made = _SPAWN_KINDS[kind] = type("SpawnError", (SpawnError, kind),
                                         {"__module__": __name__, "__doc__": SpawnError.__doc__})
    return made


def ping_refusal(code: int) -> MCPPingError:
    """What a ping the engine refused raises (an MCPP_ERR_* code), on every
    path (stdio, HTTP, guards), as Node's ``fromCode`` makes it."""
    if code == _native.MCPP_ERR_UNSUPPORTED:
        return PingUnsupported()
    if code in (_native.MCPP_ERR_CLOSED, _native.MCPP_ERR_NOT_FOUND):
        return PeerClosed(_native.CONNECTION_CLOSED_TEXT)
    return MCPPingError(_native.strerror(code))  # too many pings out: C's sentence


class RequestInDoubt(MCPPingError, ConnectionError):
    """The server failed while this request was in flight (reconnect).

    mcpping never sends it again: ``disposition`` is ``"in_doubt"`` when it
    may have run on the server (a ``tools/call``: check before retrying)
    and ``"cancelled"`` when it is known to have no side effects.
    """

    def __init__(self, method: str, disposition: str, message: str, code: int | None = None) -> None:
        super().__init__(f"{method}: {message}")
        #: The request's method.
        self.method = method
        #: ``"in_doubt"`` or ``"cancelled"``.
        self.disposition = disposition
        #: The engine's answer to the request: its JSON-RPC code (-32003) and sentence.
        self.code = code
        self.message = message
