"""mcpping.metrics: Prometheus and OpenTelemetry figures for a fleet of peers.

Every connection's figures are counted in C where its events happen (the
runtime's thread for a spawned :class:`~mcpping.Peer`, the engine for a
guard or an HTTP peer; csrc/src/engine/metrics_tally.c), so no event crosses
to Python to be counted. This module only adapts C's rows to each exporter
and reads the in-flight gauge live at a collection.

Both exporters are optional: importing mcpping needs neither
``prometheus_client`` nor ``opentelemetry-api``, and each function here says
which package is missing when it is. Figures start when the first function
is called; a connection opened earlier counts from its next event.

Labels are ``peer`` (the server's name from its serverInfo, or the program's
basename until the handshake; the client's name in the server role) and
``transport``. Nothing from payloads, arguments or the environment.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from . import _isolation, _native
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
# A library connection has no config entry, so no "server" label.
_LABELS = [x for x in _native.metric_series_labels() if x != "server"]

Row = dict[str, Any]


class _Histogram:
    """What a row's RTT histogram gave the OpenTelemetry sinks so far."""

    __slots__ = ("attrs", "buckets", "sum")

    def __init__(self, attrs: dict[str, str], buckets: list[int], total: float) -> None:
        self.attrs = attrs
        self.buckets = buckets
        self.sum = total


class _Tally:
    """Which connections C counts for (cells), and the rows it returns."""

    def __init__(self) -> None:
        # Taken at a connection's start and end and at collection (which may
        # run on an exporter's thread), never per event.
        self._lock = threading.Lock()
        #: Open cells: id -> (cell, the reporting object weakly, or None).
        self._open: dict[int, tuple[Any, weakref.ref[Any] | None]] = {}
        #: Called with (rtt, row) per pong, at a collection: OpenTelemetry's
        #: histograms (C keeps the buckets and the sum, and turns their
        #: growth into values: metric_rtt_growth).
        self.rtt_sinks: list[Callable[[float, Any], None]] = []
        self._given: dict[tuple[str, str], _Histogram] = {}
        # Collections may run on an exporter's thread and the loop's at once:
        # each pong is given once.
        self._give_lock = threading.Lock()

    def opened(self, hub: _events.EventHub) -> None:
        cell = _native.metrics_cell(_first_name(hub), hub.transport)
        src = hub.source
        with self._lock:
            self._open[id(cell)] = (cell, None if src is None else weakref.ref(src))
        hub.count_into_cell(cell)

    def closed(self, hub: _events.EventHub) -> None:
        cell = hub.figures
        if cell is not None:
            with self._lock:
                self._open.pop(id(cell), None)
            _native.metrics_retire(cell)

    def rows(self) -> list[Row]:
        """C's rows (one per label set), after reading each open connection's
        in-flight count live: a request sent emits no event."""
        with self._lock:
            cells = list(self._open.items())
        for key, (cell, ref) in cells:
            src = ref() if ref is not None else None
            if ref is not None and src is None:  # collected without closing
                with self._lock:
                    self._open.pop(key, None)
                _native.metrics_retire(cell)
                continue
            try:
                info = src.info() if src is not None else None
            except Exception:
                info = None
            if info is not None:
                _native.metrics_set_in_flight(cell, int(info.get("in_flight", 0)))
        rows = _native.metrics_rows()
        with self._give_lock:
            self._give_rtts(rows)
        return rows

    def _give_rtts(self, rows: list[Row]) -> None:
        """Hands the pongs since the last collection to every RTT sink. An
        exporter that raises loses nothing else: reported once, the rest go on."""
        failed = None
        for r in rows:
            labels = (r["peer"], r["transport"])
            h = self._given.get(labels)
            if h is None:
                h = self._given[labels] = _Histogram(
                    {"peer": r["peer"], "transport": r["transport"]},
                    [0] * (len(RTT_BUCKETS) + 1), 0.0)
            new = r["rtt_buckets"]
            if new == h.buckets:
                continue
            # Pongs from before the first sink are not given (as a sink that
            # records each pong from then on).
            rtts = (_native.metric_rtt_growth(new, h.buckets, r["rtt_sum"] - h.sum)
                    if self.rtt_sinks else [])
            h.buckets, h.sum = list(new), r["rtt_sum"]
            for rtt in rtts:
                for sink in self.rtt_sinks:
                    try:
                        sink(rtt, h)
                    except Exception as exc:
                        failed = exc
        if failed is not None:
            try:
                report = _isolation.reporter(asyncio.get_running_loop())
            except RuntimeError:  # an exporter's thread: no loop to tell
                raise failed from None
            report("mcpping: the metrics tally raised", failed)


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
        return self._families([])

    def collect(self) -> Iterator[Any]:
        """The metric families with one sample set per (peer, transport)."""
        return self._families(self._tally.rows())

    def _families(self, rows: list[Row]) -> Iterator[Any]:
        from prometheus_client.core import (
            CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily,
        )

        make = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily}
        for f in _FAMILIES:
            name, field, label = f["name"], f["field"], f["label"]
            if f["kind"] == "histogram":
                h = HistogramMetricFamily(name, f["help"], labels=_LABELS, unit="seconds")
                for r in rows:
                    cumulative, buckets = 0, []
                    for le, n in zip([*(t for _, t in _BOUNDS), "+Inf"], r[field]):
                        cumulative += n
                        buckets.append((le, cumulative))
                    h.add_metric([r["peer"], r["transport"]], buckets, r["rtt_sum"])
                yield h
                continue
            m = make[f["kind"]](name, f["help"], labels=[*_LABELS, label] if label else _LABELS)
            for r in rows:
                key = [r["peer"], r["transport"]]
                if label:
                    for v, n in zip(f["values"], r[field]):
                        m.add_metric([*key, v], n)
                else:
                    m.add_metric(key, r[field])
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
    pass at each collection from the buckets and sum C counted (each value in
    its bucket, the values summing to the sum), which costs the keepalive
    path nothing.
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

    def observer(field: str, label: str | None,
                 values: tuple[str, ...] | None) -> Callable[[Any], list[Any]]:
        def observe(_options: Any) -> list[Any]:
            rows = tally.rows()
            if label:
                return [Observation(n, {"peer": r["peer"], "transport": r["transport"], label: v})
                        for r in rows for v, n in zip(values or (), r[field])]
            return [Observation(r[field], {"peer": r["peer"], "transport": r["transport"]})
                    for r in rows]
        return observe

    histogram = None
    for f in _FAMILIES:
        name, kind, desc, unit = f["name"], f["kind"], f["help"], f["unit"]
        if kind == "histogram":
            histogram = meter.create_histogram(name, unit, desc,
                                               explicit_bucket_boundaries_advisory=list(RTT_BUCKETS))
            continue
        create = meter.create_observable_counter if kind == "counter" else meter.create_observable_gauge
        create(name, [observer(f["field"], f["label"], f["values"])], unit, desc)
    assert histogram is not None
    tally.rtt_sinks.append(lambda rtt, row: histogram.record(rtt, row.attrs))


# --------------------------------------------------------------- Text exposition


def exposition() -> str:
    """Every connection's figures as Prometheus text (format 0.0.4), rendered
    by the C core as ``mcpping wrap --metrics`` serves them; needs neither
    exporter package. Figures start at the first call, as above."""
    return _native.metrics_render(_enable().rows())
