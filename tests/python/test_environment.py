"""The environment a server starts in: ours with env on top, or the SDKs'
safe subset of ours (C's rule, mcpp_env_safe), as Node's connect gives it."""

from __future__ import annotations

import os

import pytest

import mcpping
from conftest import peer

SAFE = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}


async def _server_env(**kwargs: object) -> dict[str, str]:
    async with mcpping.connect(peer("echo"), keepalive=None, **kwargs) as p:
        return (await p.request("test/env"))["result"]["env"]


async def test_env_goes_on_top_of_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    # env replaced the environment before: a server given a token lost PATH.
    monkeypatch.setenv("MCPPING_OURS", "ours")
    monkeypatch.setenv("MCPPING_BOTH", "ours")
    env = await _server_env(env={"MCPPING_GIVEN": "given", "MCPPING_BOTH": "given"})
    assert env["MCPPING_OURS"] == "ours"
    assert env["MCPPING_GIVEN"] == "given"
    assert env["MCPPING_BOTH"] == "given"
    assert env["PATH"] == os.environ["PATH"]


async def test_no_env_inherits_ours_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPPING_OURS", "ours")
    env = await _server_env()
    assert env["MCPPING_OURS"] == "ours"


async def test_inherit_env_false_passes_the_sdks_safe_subset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPPING_OURS", "ours")
    monkeypatch.setenv("TERM", "() { :; }")  # an exported shell function: never passed
    env = await _server_env(env={"MCPPING_GIVEN": "given"}, inherit_env=False)
    assert "MCPPING_OURS" not in env and "TERM" not in env
    assert env["MCPPING_GIVEN"] == "given"
    assert env["PATH"] == os.environ["PATH"]
    # Python itself may add a few (LC_CTYPE on a C locale): nothing of ours.
    ours_only = {k for k in env if k in os.environ and k not in SAFE}
    assert ours_only <= {"LC_CTYPE"}, ours_only


async def test_inherit_env_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="inherit_env"):
        await _server_env(inherit_env="no")
