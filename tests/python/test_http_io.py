"""The Streamable HTTP client's worker threads (mcpping._http_io.Workers):
an exchange goes to a thread that waits for one, else to a new thread;
threads end once idle for a while, and all of them once closed."""

from __future__ import annotations

import threading

import pytest

from mcpping import _http_io


class Job:
    """What Workers runs of an exchange: its name, its thread, run()."""

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.name = "mcpping-http-post"
        self.thread: threading.Thread | None = None
        self.ran = threading.Event()
        self.hold = hold

    def run(self) -> None:
        self.ran.set()
        if self.hold is not None:
            self.hold.wait(10)


def _idle(workers: _http_io.Workers, n: int) -> None:
    """Waits (10 s at most) until n threads wait for an exchange: a state
    with no event of its own, so it is looked at every 10 ms."""
    tick = threading.Event()
    for _ in range(1000):
        with workers._lock:
            if workers._idle == n:
                return
        tick.wait(0.01)
    raise AssertionError(f"{workers._idle} threads idle, not {n}")


def test_sequential_exchanges_run_in_one_thread_and_close_ends_it():
    workers = _http_io.Workers()
    jobs = []
    for _ in range(5):
        job = Job()
        workers.run(job)
        assert job.ran.wait(10)
        _idle(workers, 1)  # it ran, and its thread waits for the next
        jobs.append(job)
    threads = {job.thread for job in jobs}
    assert len(threads) == 1
    (thread,) = threads
    assert thread is not None and thread.name == "mcpping-http-idle"
    workers.close()
    thread.join(10)
    assert not thread.is_alive()


def test_exchanges_at_once_each_get_a_thread():
    workers = _http_io.Workers()
    hold = threading.Event()
    jobs = [Job(hold) for _ in range(3)]
    for job in jobs:
        workers.run(job)
    for job in jobs:
        assert job.ran.wait(10)
    assert len({job.thread for job in jobs}) == 3
    assert all(job.thread is not None and job.thread.name == "mcpping-http-post" for job in jobs)
    workers.close()  # while they run: each ends with its exchange
    hold.set()
    for job in jobs:
        assert job.thread is not None
        job.thread.join(10)
        assert not job.thread.is_alive()


def test_a_thread_idle_for_its_wait_ends(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_http_io, "_WORKER_IDLE", 0.05)
    workers = _http_io.Workers()
    job = Job()
    workers.run(job)
    assert job.ran.wait(10)
    assert job.thread is not None
    job.thread.join(10)
    assert not job.thread.is_alive()
    assert workers._idle == 0
    # The next exchange gets a new thread.
    again = Job()
    workers.run(again)
    assert again.ran.wait(10)
    assert again.thread is not job.thread
    workers.close()
