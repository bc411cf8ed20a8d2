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

from . import _native
from . import events as _events
from ._native import VERSION

__all__ = [
    "register_prometheus", "instrument_otel", "exposition", "PrometheusCollector", "METRICS",
    "RTT_BUCKETS", "STATES", "FAILURE_REASONS", "PROBE_RESULTS",
]

# Every name, help text, unit, label and bound comes from the C table
# (csrc/src/engine/metrics.c); this module adapts it to each exporter.
_FAMILIES = _native.metric_families()
_BOUNDS = _native.metric_rtt_buckets()
_BY_FIELD = {f["field"]: f for f in _FAMILIES}
#: Upper bounds (seconds) of the RTT histogram's buckets.
RTT_BUCKETS = tuple(b for b, _ in _BOUNDS)
#: The values of ``mcpping_peer_state``'s ``state`` label.
STATES = _BY_FIELD["states"]["values"]
#: The values of ``mcpping_ping_failures_total``'s ``reason`` label.
FAILURE_REASONS = _BY_FIELD["failures"]["values"]
#: The values of ``mcpping_probes_total``'s ``result`` label.
PROBE_RESULTS = _BY_FIELD["probes"]["values"]
#: Every metric: name -> (kind, help).
METRICS = {f["name"]: (f["kind"], f["help"]) for f in _FAMILIES}
# The plain counters' fields: pings_sent, ..., reconnects.
_COUNTERS = tuple(f["field"] for f in _FAMILIES if f["kind"] == "counter" and not f["label"])
# The labelled counters' fields and their label's values: failures by reason,
# probes by result.
_LABELLED = {f["field"]: f["values"] for f in _FAMILIES if f["kind"] == "counter" and f["label"]}


def _key(field: str, value: str | None) -> str:
    """A count's key: the field, and a labelled one's value after a colon
    (values repeat across families: a probe's "timeout" is no ping's)."""
    return f"{field}:{value}" if value else field


# The keys of a connection's counts: the plain counters and each labelled
# counter's values.
_COUNTS = (*_COUNTERS, *(_key(f, v) for f, vals in _LABELLED.items() for v in vals))


def _event_counts() -> tuple[dict[str, str], dict[str, tuple[str | None, ...]]]:
    """Which count each event adds one to (the C rule): per event name, the
    key; and where it depends on the event, 8 keys (or None) indexed by
    closed * 4 + invalid * 2 + (ping_seq != 0)."""
    always, depends = {}, {}
    for name, row in _native.metric_event_figures().items():
        keys = tuple(fx and _key(fx[0], fx[1]) for fx in row)
        if len(set(keys)) == 1:
            always[name] = keys[0]
        else:
            depends[name] = keys
    return always, depends


_EVENT_COUNT, _EVENT_COUNT_BY = _event_counts()
# A library connection has no config entry, so no "server" label.
_LABELS = [x for x in _native.metric_series_labels() if x != "server"]
# Pongs a connection keeps for the OpenTelemetry histograms between
# collections; at this many they are recorded at once.
_RTT_BATCH = 256

Labels = tuple[str, str]


class _Figures:
    """One connection's counts, or the summed counts of closed connections."""

    __slots__ = ("peer", "transport", "state", "in_flight", "source", "attrs", "counts",
                 "rtt_buckets", "rtt_sum", "rtts", "report")

    def __init__(self, peer: str, transport: str, source: Any = None,
                 report: Callable[[str, BaseException], None] | None = None) -> None:
        self.peer = peer
        self.transport = transport
        self.state = "alive"
        self.in_flight = 0
        #: The reporting object (weakly), whose info() the gauges read.
        self.source = None if source is None else weakref.ref(source)
        self.attrs = {"peer": peer, "transport": transport}
        self.counts = dict.fromkeys(_COUNTS, 0)
        # Per bucket, not cumulative; the last one is +Inf.
        self.rtt_buckets = [0] * (len(RTT_BUCKETS) + 1)
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
        for k, n in other.counts.items():
            self.counts[k] += n
        for i, n in enumerate(other.rtt_buckets):
            self.rtt_buckets[i] += n
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

    def get(self, field: str) -> Any:
        """The figure a family of the C table shows (its ``field``)."""
        if field in ("states", "in_flight"):
            return getattr(self, field)
        if field in _LABELLED:
            return {v: self.figures.counts[_key(field, v)] for v in _LABELLED[field]}
        if field == "rtt_buckets":
            return self.figures.rtt_buckets
        return self.figures.counts[field]

    def series(self) -> dict[str, Any]:
        """This row as metrics.c's series, for its renderer."""
        f = self.figures
        return {**{k: f.counts[k] for k in _COUNTERS}, "peer": f.peer, "transport": f.transport,
                **{fld: [f.counts[_key(fld, v)] for v in vals] for fld, vals in _LABELLED.items()},
                "rtt_buckets": f.rtt_buckets, "rtt_sum": f.rtt_sum,
                "states": [self.states[st] for st in STATES], "in_flight": self.in_flight}


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
        key = _EVENT_COUNT.get(name)
        if key is None and name in _EVENT_COUNT_BY:
            key = _EVENT_COUNT_BY[name][(ev.state == "closed") * 4 + (2 if ev.invalid else 0)
                                        + (1 if ev.ping_seq else 0)]
        if key is not None:
            fig.counts[key] += 1
            if name == "pong":
                rtt = ev.rtt or 0.0
                fig.rtt_buckets[bisect_left(RTT_BUCKETS, rtt)] += 1
                fig.rtt_sum += rtt
                if self.rtt_sinks:
                    q = fig.rtts
                    if q is None:
                        q = fig.rtts = deque()
                    q.append(rtt)
                    if len(q) >= _RTT_BATCH:
                        self._record_rtts(fig)
        elif name == "initialized" and ev.message:
            fig.rename(ev.message)

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
            _events.set_tap(_tally)
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

        make = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily}
        for f in _FAMILIES:
            name, field, label = f["name"], f["field"], f["label"]
            if f["kind"] == "histogram":
                h = HistogramMetricFamily(name, f["help"], labels=_LABELS, unit="seconds")
                for key, r in rows.items():
                    cumulative, buckets = 0, []
                    for le, n in zip([*(t for _, t in _BOUNDS), "+Inf"], r.get(field)):
                        cumulative += n
                        buckets.append((le, cumulative))
                    h.add_metric(key, buckets, r.figures.rtt_sum)
                yield h
                continue
            m = make[f["kind"]](name, f["help"], labels=[*_LABELS, label] if label else _LABELS)
            for key, r in rows.items():
                if label:
                    for v, n in r.get(field).items():
                        m.add_metric([*key, v], n)
                else:
                    m.add_metric(key, r.get(field))
            yield m


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

    def observer(field: str, label: str | None) -> Callable[[Any], list[Any]]:
        def observe(_options: Any) -> list[Any]:
            rows = tally.rows().values()
            if label:
                return [Observation(n, {**r.figures.attrs, label: v})
                        for r in rows for v, n in r.get(field).items()]
            return [Observation(r.get(field), r.figures.attrs) for r in rows]
        return observe

    histogram = None
    for f in _FAMILIES:
        name, kind, desc, unit = f["name"], f["kind"], f["help"], f["unit"]
        if kind == "histogram":
            histogram = meter.create_histogram(name, unit, desc,
                                               explicit_bucket_boundaries_advisory=list(RTT_BUCKETS))
            continue
        create = meter.create_observable_counter if kind == "counter" else meter.create_observable_gauge
        create(name, [observer(f["field"], f["label"])], unit, desc)
    assert histogram is not None
    tally.rtt_sinks.append(lambda rtt, fig: histogram.record(rtt, fig.attrs))


# --------------------------------------------------------------- Text exposition


def exposition() -> str:
    """Every connection's figures as Prometheus text (format 0.0.4), rendered
    by the C core as ``mcpping wrap --metrics`` serves them; needs neither
    exporter package. Figures start at the first call, as above."""
    return _native.metrics_render([r.series() for r in _enable().rows().values()])
