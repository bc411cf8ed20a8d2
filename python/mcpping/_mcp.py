"""The installed ``mcp`` SDK, whichever supported major it is.

The only module that knows how mcp 1.x and 2.x differ; ``mcpping.sdk``,
``mcpping.guard(codec="sdk")`` and ``mcpping.instrument`` use what it
exports. The two majors differ, for a transport, only in where the message
types live and how a message is read and written: 2.x moved the types to the
``mcp_types`` package (a TypeAdapter over a plain union), 1.x keeps them in
``mcp.types`` (a RootModel). ``SessionMessage``, ``StdioServerParameters``
and ``get_default_environment`` have the same names and meaning in both.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any, Callable

__all__ = ["SUPPORTED", "VERSION", "MAJOR", "SessionMessage", "StdioServerParameters",
           "get_default_environment", "decode", "encode", "check_version"]

#: The mcp releases mcpping's SDK adapters are written and tested against.
SUPPORTED = "mcp 1.x (>= 1.24) and 2.x"
_INSTALL = "pip install 'mcpping[sdk]'"


def _release(version: str) -> tuple[int, ...]:
    """The leading numeric release of a version string: "2.3.0rc1" -> (2, 3, 0)."""
    parts: list[int] = []
    for piece in version.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break
    return tuple(parts)


def check_version(version: str) -> int:
    """The major of a supported mcp ``version``; ImportError naming it otherwise."""
    release = _release(version)
    if release[:1] == (2,) or (release[:1] == (1,) and release[1:2] >= (24,)):
        return release[0]
    raise ImportError(f"mcpping.sdk supports {SUPPORTED}; the installed mcp is {version}: "
                      f"{_INSTALL} (or pip install 'mcp>=1.24')")


try:
    VERSION = metadata.version("mcp")
except metadata.PackageNotFoundError:
    raise ImportError(f"mcpping.sdk needs the official MCP SDK ({SUPPORTED}): {_INSTALL}") from None

MAJOR = check_version(VERSION)

from mcp.client.stdio import StdioServerParameters, get_default_environment  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402

decode: Callable[[str | bytes], Any]
encode: Callable[[Any], str]

if MAJOR == 1:
    from mcp.types import JSONRPCMessage as _Message

    def decode(text: str | bytes) -> Any:
        """One JSON-RPC message, as the SDK's session reads it (ValueError if invalid)."""
        # mcp 1.x's JSONRPCMessage is a RootModel; 2.x's (which mypy may see) a union.
        return _Message.model_validate_json(text)  # type: ignore[attr-defined]

    def encode(message: Any) -> str:
        """The message as mcp 1.x's own stdio transport writes it."""
        return message.model_dump_json(by_alias=True, exclude_none=True)
else:
    import mcp_types as _types

    _adapter = _types.jsonrpc_message_adapter

    def decode(text: str | bytes) -> Any:
        """One JSON-RPC message, as the SDK's session reads it (ValueError if invalid)."""
        return _adapter.validate_json(text, by_name=False)

    def encode(message: Any) -> str:
        """The message as mcp 2.x's own stdio transport writes it."""
        return message.model_dump_json(by_alias=True, exclude_unset=True)
