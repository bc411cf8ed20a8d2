"""Runs user code (callbacks, listeners, record sinks) without letting it fail delivery.

An exception from user code is handed to the asyncio loop's exception
handler, where the host looks for errors of callbacks, with the connection
in the context; it is never swallowed and never stops the items after it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["Reporter", "reporter"]

#: Reports one error: ``report(message, exception)``.
Reporter = Callable[[str, BaseException], None]


def reporter(loop: asyncio.AbstractEventLoop, **context: Any) -> Reporter:
    """A Reporter that calls ``loop.call_exception_handler`` with ``context`` added."""

    def report(message: str, exc: BaseException) -> None:
        loop.call_exception_handler({"message": message, "exception": exc, **context})

    return report


def call(report: Reporter, what: str, fn: Callable[..., Any], *args: Any) -> None:
    """Calls ``fn(*args)``; reports an Exception it raises, or that its coroutine raises."""
    try:
        res = fn(*args)
    except Exception as exc:
        report(f"mcpping: {what} raised", exc)
        return
    if inspect.isawaitable(res):
        task = asyncio.ensure_future(res)
        _tasks.add(task)
        task.add_done_callback(lambda t: _task_done(report, what, t))


# Strong references: the loop keeps only weak ones to running tasks.
_tasks: set[asyncio.Future[Any]] = set()


def _task_done(report: Reporter, what: str, task: asyncio.Future[Any]) -> None:
    _tasks.discard(task)
    if not task.cancelled() and task.exception() is not None:
        report(f"mcpping: {what} raised", task.exception())  # type: ignore[arg-type]
