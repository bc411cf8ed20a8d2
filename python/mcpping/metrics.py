"""mcpping.metrics: Prometheus and OpenTelemetry figures for a fleet of peers.

Every connection (a spawned :class:`~mcpping.Peer`, a guard, an HTTP peer)
already hands its events to one hub (:mod:`mcpping.events`). Once metrics are
on, the hub passes each event to one tally here, which adds it to that
connection's figures: an increment or two per event, no listener per metric.
Exporters read the tally when they collect; the two gauges read each open
connection live at that moment.

Both exporters are optional: importing mcpping needs neither
``prometheus_client`` nor ``opentelemetry-api``, and each function here says
which package is missing when it is. Figures start when the first function
is called; a connection opened earlier counts from its next event.

Labels are ``peer`` (the server's name from its serverInfo, or the program's
basename until the handshake; the client's name in the server role) and
``transport``. Nothing from payloads, arguments or the environment.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from . import events as _events
from ._native import VERSION

__all__ = [
    "register_prometheus", "instrument_otel", "PrometheusCollector", "METRICS", "RTT_BUCKETS",
    "STATES", "FAILURE_REASONS",
]

#: Upper bounds (seconds) of the RTT histogram's buckets: a ping over a local
#: pipe takes tens of microseconds, one over a WAN hundreds of milliseconds.
RTT_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
               0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: The values of ``mcpping_peer_state``'s ``state`` label.
STATES = ("alive", "suspect", "stale", "closed")
#: The values of ``mcpping_ping_failures_total``'s ``reason`` label.
FAILURE_REASONS = ("timeout", "error", "invalid", "unsupported")
# Pongs a connection keeps for the OpenTelemetry histograms between
# collections; at this many they are recorded at once.
_RTT_BATCH = 256

#: Every metric: name -> (kind, help).
METRICS = {
    "mcpping_pings_sent_total": ("counter", "Pings sent to the peer, keepalive and manual."),
    "mcpping_pongs_received_total": ("counter", "Pongs received from the peer."),
    "mcpping_ping_failures_total": (
        "counter", "Pings that got no pong, by reason: timeout, error (a JSON-RPC error), "
        "invalid (a result that is not an object), unsupported (-32601 or -32602)."),
    "mcpping_pings_answered_total": ("counter", "Pings from the peer that mcpping answered."),
    "mcpping_stale_total": ("counter", "Times the peer was declared stale."),
    "mcpping_ping_deaf_total": (
        "counter", "Times the peer was found ping-deaf: pings failed, a probe was answered."),
    "mcpping_reconnects_total": ("counter", "Reconnects to the peer."),
    "mcpping_ping_rtt_seconds": ("histogram", "Round-trip time of answered pings, in seconds."),
    "mcpping_peer_state": (
        "gauge", "Connections to the peer in each state; closed is 1 once none is open."),
    "mcpping_in_flight_requests": (
        "gauge", "Application requests awaiting an answer from the peer."),
}

# Counter name -> the _Figures field it reads.
_COUNTER_FIELDS = {
    "mcpping_pings_sent_total": "sent",
    "mcpping_pongs_received_total": "pongs",
    "mcpping_pings_answered_total": "answered",
    "mcpping_stale_total": "stale",
    "mcpping_ping_deaf_total": "ping_deaf",
    "mcpping_reconnects_total": "reconnects",
}

Labels = tuple[str, str]


class _Figures:
    """One connection's counts, or the summed counts of closed connections."""

    __slots__ = ("peer", "transport", "state", "in_flight", "source", "attrs", "sent", "pongs",
                 "answered", "stale", "ping_deaf", "reconnects", "failures", "buckets", "rtt_sum", "rtts",
                 "report")

    def __init__(self, peer: str, transport: str, source: Any = None,
                 report: Callable[[str, BaseException], None] | None = None) -> None:
        self.peer = peer
        self.transport = transport
        self.state = "alive"
        self.in_flight = 0
        #: The reporting object (weakly), whose info() the gauges read.
        self.source = None if source is None else weakref.ref(source)
        self.attrs = {"peer": peer, "transport": transport}
        self.sent = self.pongs = self.answered = self.stale = self.reconnects = 0
        self.ping_deaf = 0
        self.failures = dict.fromkeys(FAILURE_REASONS, 0)
        # Per bucket, not cumulative; the last one is +Inf.
        self.buckets = [0] * (len(RTT_BUCKETS) + 1)
        self.rtt_sum = 0.0
        #: RTTs not yet recorded into the OpenTelemetry histograms (a deque:
        #: appended on the loop's thread, taken on a collector's).
        self.rtts: deque[float] | None = None
        #: Where an exporter's error goes (the connection's hub reporter).
        self.report = report

    @property
    def labels(self) -> Labels:
        return (self.peer, self.transport)

    def rename(self, peer: str) -> None:
        self.peer = peer
        self.attrs = {"peer": peer, "transport": self.transport}

    def add(self, other: "_Figures") -> None:
        self.sent += other.sent
        self.pongs += other.pongs
        self.answered += other.answered
        self.stale += other.stale
        self.ping_deaf += other.ping_deaf
        self.reconnects += other.reconnects
        for reason, n in other.failures.items():
            self.failures[reason] += n
        for i, n in enumerate(other.buckets):
            self.buckets[i] += n
        self.rtt_sum += other.rtt_sum

    def live_in_flight(self) -> int:
        """The engine's live count, or the last event's if it cannot be read."""
        src = self.source() if self.source is not None else None
        if src is not None:
            try:
                info = src.info()
            except Exception:
                info = None
            if info is not None:
                return int(info.get("in_flight", 0))
        return self.in_flight


class _Row:
    """What one label set shows at a collection."""

    __slots__ = ("figures", "states", "in_flight")

    def __init__(self, figures: _Figures) -> None:
        self.figures = figures
        self.states = dict.fromkeys(STATES, 0)
        self.in_flight = 0


class _Tally:
    """The one place every connection's events are counted."""

    def __init__(self) -> None:
        # Taken at a connection's start and end and at collection (which may
        # run on an exporter's thread), never per event.
        self._lock = threading.Lock()
        self._open: set[_Figures] = set()
        self._closed: dict[Labels, _Figures] = {}
        #: Called with (rtt, figures) for every pong: OpenTelemetry histograms.
        #: A histogram's record() costs more than the rest of a keepalive
        #: ping's Python work when made on the ping's path (6 µs warm, 15 on
        #: the path), so pongs wait in the connection's figures and are
        #: recorded in one pass when anything collects (rows()), or at
        #: _RTT_BATCH pongs.
        self.rtt_sinks: list[Callable[[float, _Figures], None]] = []

    def opened(self, hub: _events.EventHub) -> None:
        hub.figures = self._track(hub)

    def closed(self, hub: _events.EventHub) -> None:
        if hub.figures is not None:
            self._record_rtts(hub.figures)
            self._retire(hub.figures)

    def event(self, hub: _events.EventHub, ev: _events.Event) -> None:
        fig = hub.figures
        if fig is None:  # opened before metrics were turned on
            fig = hub.figures = self._track(hub)
        fig.state = ev.state
        fig.in_flight = ev.in_flight
        name = ev.name
        if name == "ping":
            fig.sent += 1
        elif name == "pong":
            rtt = ev.rtt or 0.0
            fig.pongs += 1
            fig.buckets[bisect_left(RTT_BUCKETS, rtt)] += 1
            fig.rtt_sum += rtt
            if self.rtt_sinks:
                q = fig.rtts
                if q is None:
                    q = fig.rtts = deque()
                q.append(rtt)
                if len(q) >= _RTT_BATCH:
                    self._record_rtts(fig)
        elif name == "timeout":
            # A ping still out when the connection closes was abandoned, not lost.
            if ev.state != "closed":
                fig.failures["timeout"] += 1
        elif name == "ping_error":
            fig.failures["invalid" if ev.invalid else "error"] += 1
        elif name == "unsupported":
            # Only a refused ping; a protocol version without ping sent none.
            if ev.ping_seq:
                fig.failures["unsupported"] += 1
        elif name == "ping_answered":
            fig.answered += 1
        elif name == "stale":
            fig.stale += 1
        elif name == "ping_deaf":
            fig.ping_deaf += 1
        elif name == "initialized":
            if ev.message:
                fig.rename(ev.message)
        elif name == "reconnected":
            fig.reconnects += 1

    def _record_rtts(self, fig: _Figures) -> None:
        """Records the pongs waiting in ``fig`` into every histogram. An
        exporter that raises loses nothing else: reported once, the rest go on."""
        q = fig.rtts
        failed = None
        while q:
            try:
                rtt = q.popleft()
            except IndexError:  # taken by another collector meanwhile
                break
            for sink in self.rtt_sinks:
                try:
                    sink(rtt, fig)
                except Exception as exc:
                    failed = exc
        if failed is not None:
            if fig.report is None:
                raise failed
            fig.report("mcpping: the metrics tally raised", failed)

    def _track(self, hub: _events.EventHub) -> _Figures:
        fig = _Figures(_first_name(hub), hub.transport, hub.source,
                       getattr(hub, "_report", None))
        with self._lock:
            self._open.add(fig)
        return fig

    def _retire(self, fig: _Figures) -> None:
        with self._lock:
            self._retire_locked(fig)

    def _retire_locked(self, fig: _Figures) -> None:
        if fig not in self._open:
            return
        self._open.discard(fig)
        fig.state = "closed"
        total = self._closed.get(fig.labels)
        if total is None:
            total = self._closed[fig.labels] = _Figures(*fig.labels)
        total.add(fig)

    def rows(self) -> dict[Labels, _Row]:
        """Sums the figures per label set, with the state and in-flight gauges."""
        out: dict[Labels, _Row] = {}
        if self.rtt_sinks:
            with self._lock:
                waiting = [f for f in self._open if f.rtts]
            for fig in waiting:
                self._record_rtts(fig)

        def row(labels: Labels) -> _Row:
            r = out.get(labels)
            if r is None:
                r = out[labels] = _Row(_Figures(*labels))
            return r

        with self._lock:
            for fig in [f for f in self._open if f.source is not None and f.source() is None]:
                self._retire_locked(fig)  # its owner was collected without closing
            open_figs = list(self._open)
            for labels, total in self._closed.items():
                row(labels).figures.add(total)
            for fig in open_figs:
                r = row(fig.labels)
                r.figures.add(fig)
                r.states[fig.state] += 1
        for fig in open_figs:
            out[fig.labels].in_flight += fig.live_in_flight()
        for r in out.values():
            if not any(r.states.values()):
                r.states["closed"] = 1
        return out


def _first_name(hub: _events.EventHub) -> str:
    """The peer label of a connection first seen now (metrics may start late)."""
    src = hub.source
    name = getattr(src, "name", None)
    if not name and src is not None and hasattr(src, "info"):
        try:
            name = (src.info() or {}).get("peer_name")
        except Exception:
            name = None
    return str(name or hub.peer or "unknown")


_tally: _Tally | None = None
_tally_lock = threading.Lock()


def _enable() -> _Tally:
    """Starts counting (once per process) and returns the tally."""
    global _tally
    with _tally_lock:
        if _tally is None:
            _tally = _Tally()
            _events.tap = _tally
        return _tally


def _missing(package: str, extra: str, fn: str) -> ImportError:
    return ImportError(f"mcpping.metrics.{fn}() needs the {package} package, which is not "
                       f"installed: pip install {package} (or pip install 'mcpping[{extra}]')")


# ------------------------------------------------------------------ Prometheus


class PrometheusCollector:
    """A prometheus_client collector over every connection's figures."""

    def __init__(self, tally: _Tally) -> None:
        self._tally = tally

    def describe(self) -> Iterator[Any]:
        """The metric families, without samples (for the registry's name checks)."""
        return self._families({})

    def collect(self) -> Iterator[Any]:
        """The metric families with one sample set per (peer, transport)."""
        return self._families(self._tally.rows())

    def _families(self, rows: dict[Labels, _Row]) -> Iterator[Any]:
        from prometheus_client.core import (
            CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily,
        )

        labels = ["peer", "transport"]
        for name, field in _COUNTER_FIELDS.items():
            c = CounterMetricFamily(name, METRICS[name][1], labels=labels)
            for key, r in rows.items():
                c.add_metric(key, getattr(r.figures, field))
            yield c
        name = "mcpping_ping_failures_total"
        c = CounterMetricFamily(name, METRICS[name][1], labels=[*labels, "reason"])
        for key, r in rows.items():
            for reason, n in r.figures.failures.items():
                c.add_metric([*key, reason], n)
        yield c
        name = "mcpping_ping_rtt_seconds"
        h = HistogramMetricFamily(name, METRICS[name][1], labels=labels, unit="seconds")
        for key, r in rows.items():
            cumulative, buckets = 0, []
            for bound, n in zip([*map(str, RTT_BUCKETS), "+Inf"], r.figures.buckets):
                cumulative += n
                buckets.append((bound, cumulative))
            h.add_metric(key, buckets, r.figures.rtt_sum)
        yield h
        name = "mcpping_peer_state"
        g = GaugeMetricFamily(name, METRICS[name][1], labels=[*labels, "state"])
        for key, r in rows.items():
            for state, n in r.states.items():
                g.add_metric([*key, state], n)
        yield g
        name = "mcpping_in_flight_requests"
        g = GaugeMetricFamily(name, METRICS[name][1], labels=labels)
        for key, r in rows.items():
            g.add_metric(key, r.in_flight)
        yield g


def register_prometheus(registry: Any = None) -> PrometheusCollector:
    """Registers mcpping's metrics with a prometheus_client registry.

    ``registry`` defaults to ``prometheus_client.REGISTRY`` (what
    ``start_http_server`` and ``generate_latest`` serve). Returns the
    collector, for ``registry.unregister()``. Registering twice with one
    registry raises ValueError (prometheus_client's duplicate check).
    """
    try:
        import prometheus_client
    except ImportError as e:
        raise _missing("prometheus_client", "prometheus", "register_prometheus") from e
    collector = PrometheusCollector(_enable())
    (prometheus_client.REGISTRY if registry is None else registry).register(collector)
    return collector


# --------------------------------------------------------------- OpenTelemetry

_otel_providers: list[Any] = []


def instrument_otel(meter_provider: Any = None) -> None:
    """Creates mcpping's instruments on an OpenTelemetry meter provider.

    ``meter_provider`` defaults to the global one
    (``opentelemetry.metrics.get_meter_provider()``). The counters and gauges
    are observable (read at each collection); the RTT histogram gets every
    pong, with bucket boundaries :data:`RTT_BUCKETS` advised, recorded in one
    pass at each collection (at most 256 per connection wait in between), which costs the keepalive path nothing.
    Instrumenting one provider twice raises ValueError.
    """
    try:
        from opentelemetry import metrics as otel
    except ImportError as e:
        raise _missing("opentelemetry-api", "otel", "instrument_otel") from e
    provider = otel.get_meter_provider() if meter_provider is None else meter_provider
    with _tally_lock:
        if any(p is provider for p in _otel_providers):
            raise ValueError("instrument_otel: this meter provider already has mcpping's instruments")
        _otel_providers.append(provider)
    tally = _enable()
    meter = provider.get_meter("mcpping", VERSION)
    Observation = otel.Observation

    def counter(name: str, field: str) -> None:
        def observe(_options: Any) -> list[Any]:
            return [Observation(getattr(r.figures, field), r.figures.attrs)
                    for r in tally.rows().values()]
        meter.create_observable_counter(name, [observe], "1", METRICS[name][1])

    for name, field in _COUNTER_FIELDS.items():
        counter(name, field)

    def failures(_options: Any) -> list[Any]:
        return [Observation(n, {**r.figures.attrs, "reason": reason})
                for r in tally.rows().values() for reason, n in r.figures.failures.items()]

    def states(_options: Any) -> list[Any]:
        return [Observation(n, {**r.figures.attrs, "state": state})
                for r in tally.rows().values() for state, n in r.states.items()]

    def in_flight(_options: Any) -> list[Any]:
        return [Observation(r.in_flight, r.figures.attrs) for r in tally.rows().values()]

    name = "mcpping_ping_failures_total"
    meter.create_observable_counter(name, [failures], "1", METRICS[name][1])
    name = "mcpping_peer_state"
    meter.create_observable_gauge(name, [states], "1", METRICS[name][1])
    name = "mcpping_in_flight_requests"
    meter.create_observable_gauge(name, [in_flight], "1", METRICS[name][1])
    name = "mcpping_ping_rtt_seconds"
    histogram = meter.create_histogram(name, "s", METRICS[name][1],
                                       explicit_bucket_boundaries_advisory=list(RTT_BUCKETS))
    tally.rtt_sinks.append(lambda rtt, fig: histogram.record(rtt, fig.attrs))
