"""mcpping.sdk picks the installed mcp major; any other mcp is a clear ImportError."""

from __future__ import annotations

import os
import subprocess
from importlib import metadata

import pytest

from conftest import PY
from mcpping import _mcp


def test_the_installed_major_is_the_one_in_use():
    assert _mcp.VERSION == metadata.version("mcp")
    assert _mcp.MAJOR == int(_mcp.VERSION.split(".")[0])
    if _mcp.MAJOR == 1:
        from mcp.types import JSONRPCMessage
        assert isinstance(_mcp.decode('{"jsonrpc":"2.0","id":1,"method":"ping"}'), JSONRPCMessage)
    else:
        import mcp_types
        assert isinstance(_mcp.decode('{"jsonrpc":"2.0","id":1,"method":"ping"}'),
                          mcp_types.JSONRPCRequest)


@pytest.mark.parametrize("text", [
    '{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"x","arguments":{"k":[1,2]}}}',
    '{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}',
    '{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}',
])
def test_messages_round_trip_unchanged(text):
    import json

    assert json.loads(_mcp.encode(_mcp.decode(text))) == json.loads(text)


def test_an_invalid_message_is_a_valueerror():
    with pytest.raises(ValueError):
        _mcp.decode('{"jsonrpc":"2.0","id":1}')


@pytest.mark.parametrize("version,major", [("1.24.0", 1), ("1.30.0", 1), ("2.0.0", 2),
                                           ("2.3.0rc1", 2), ("1.24", 1)])
def test_supported_versions(version, major):
    assert _mcp.check_version(version) == major


@pytest.mark.parametrize("version", ["1.23.9", "1.0.0", "0.9", "3.0.0", "garbage"])
def test_unsupported_versions_name_themselves_and_the_range(version):
    with pytest.raises(ImportError) as info:
        _mcp.check_version(version)
    msg = str(info.value)
    assert f"the installed mcp is {version}" in msg
    assert "1.x (>= 1.24) and 2.x" in msg and "mcpping[sdk]" in msg


def test_importing_the_adapter_with_an_old_mcp_installed_fails_naming_it(tmp_path):
    # A real distribution on the path, found before the installed one.
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text("")
    info = tmp_path / "mcp-1.10.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mcp\nVersion: 1.10.0\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    r = subprocess.run([PY, "-c", "import mcpping.sdk"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: mcpping.sdk supports mcp 1.x (>= 1.24) and 2.x; "
                           "the installed mcp is 1.10.0"), r.stderr


def test_the_sdk_extra_admits_both_majors():
    import tomllib

    from conftest import ROOT

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["sdk"] == ["mcp>=1.24"]
    # The floor of the extra is the floor check_version enforces.
    assert _mcp.check_version("1.24.0") == 1
    with pytest.raises(ImportError):
        _mcp.check_version("1.23.0")
