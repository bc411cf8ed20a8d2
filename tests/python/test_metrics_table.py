"""The metrics are defined once, in C (csrc/src/engine/metrics.c): the adapters to
prometheus_client and OpenTelemetry expose exactly its table, which is the
shared expectation tests/shared/metrics.json (Node's test reads it too), and
mcpping.metrics.exposition() is the C renderer's text."""

from __future__ import annotations

import json
import uuid

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import mcpping
import mcpping.metrics
from mcpping import _native
from conftest import ROOT, peer

EXPECTED = json.loads((ROOT / "tests" / "shared" / "metrics.json").read_text())


def _samples(text: str) -> set[tuple[str, frozenset[tuple[str, str]], float]]:
    return {(s.name, frozenset(s.labels.items()), round(s.value, 9))
            for fam in text_string_to_metric_families(text) for s in fam.samples}


async def _one_connection() -> str:
    name = f"table-{uuid.uuid4().hex[:8]}"
    async with mcpping.connect(peer("echo", "--name", name), keepalive=None) as p:
        await p.ping()
    return name


def test_the_c_table_is_the_shared_expectation():
    got = []
    for f in _native.metric_families():
        row = {"name": f["name"], "kind": f["kind"], "help": f["help"], "unit": f["unit"],
               "labels": ["peer", "transport", *([f["label"]] if f["label"] else [])]}
        if f["values"]:
            row["values"] = list(f["values"])
        got.append(row)
    assert got == EXPECTED["families"]
    assert list(_native.metric_series_labels()) == EXPECTED["series_labels"]
    assert [b for b, _ in _native.metric_rtt_buckets()] == EXPECTED["rtt_buckets"]
    assert [t for _, t in _native.metric_rtt_buckets()] == EXPECTED["rtt_bucket_le"]
    # The module's constants are the table's.
    assert mcpping.metrics.METRICS == {f["name"]: (f["kind"], f["help"]) for f in EXPECTED["families"]}
    assert list(mcpping.metrics.RTT_BUCKETS) == EXPECTED["rtt_buckets"]


async def test_prometheus_adapter_exposes_exactly_the_table():
    registry = CollectorRegistry()
    mcpping.metrics.register_prometheus(registry)
    name = await _one_connection()
    text = generate_latest(registry).decode()
    families = {fam.name: fam for fam in text_string_to_metric_families(text)}
    assert len(families) == len(EXPECTED["families"])
    for f in EXPECTED["families"]:
        fam = families[f["name"].removesuffix("_total")]
        assert (fam.type, fam.documentation) == (f["kind"], f["help"])
        mine = [s for s in fam.samples if s.labels["peer"] == name]
        assert mine, f["name"]
        for s in mine:
            extra = ["le"] if s.name.endswith("_bucket") else []
            assert sorted(s.labels) == sorted(f["labels"] + extra), s
        if f.get("values"):
            assert [s.labels[f["labels"][-1]] for s in mine] == f["values"]
        if f["kind"] == "histogram":
            les = [s.labels["le"] for s in mine if s.name.endswith("_bucket")]
            assert les == [*EXPECTED["rtt_bucket_le"], "+Inf"]


async def test_opentelemetry_adapter_exposes_exactly_the_table():
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    mcpping.metrics.instrument_otel(provider)
    await _one_connection()
    metrics = {m.name: m for rm in reader.get_metrics_data().resource_metrics
               for sm in rm.scope_metrics for m in sm.metrics}
    assert sorted(metrics) == sorted(f["name"] for f in EXPECTED["families"])
    for f in EXPECTED["families"]:
        m = metrics[f["name"]]
        assert (m.description, m.unit) == (f["help"], f["unit"])
        for pt in m.data.data_points:
            assert sorted(pt.attributes) == sorted(f["labels"])
        if f["kind"] == "histogram":
            assert [list(pt.explicit_bounds) for pt in m.data.data_points][0] == EXPECTED["rtt_buckets"]
    provider.shutdown()


async def test_exposition_is_the_c_renderer_and_says_what_the_adapter_says():
    registry = CollectorRegistry()
    mcpping.metrics.register_prometheus(registry)
    name = await _one_connection()
    text = mcpping.metrics.exposition()
    # Valid exposition (prometheus_client's own parser), sample for sample
    # what prometheus_client writes from the same figures.
    assert _samples(text) == _samples(generate_latest(registry).decode())
    assert f'mcpping_pings_sent_total{{peer="{name}",transport="stdio"}} 1\n' in text
    assert "# TYPE mcpping_ping_rtt_seconds histogram\n" in text


def test_rendered_labels_round_trip_escapes_through_prometheus_client():
    odd = 'say "hi"\\n\nnewline \\ backslash'
    series = [{"server": "fleet \"a\"", "peer": odd, "transport": "stdio", "pings_sent": 3,
               "rtt_buckets": [1] * (len(EXPECTED["rtt_buckets"]) + 1), "rtt_sum": 0.1 + 0.2,
               "states": [0, 0, 1, 0]},
              {"peer": "plain", "transport": "http"}]
    text = _native.metrics_render(series)
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    sent = {s.labels["peer"]: s for s in fams["mcpping_pings_sent"].samples}
    assert sent[odd].labels == {"server": 'fleet "a"', "peer": odd, "transport": "stdio"}
    assert sent[odd].value == 3 and sent["plain"].value == 0
    assert "server" not in sent["plain"].labels
    buckets = [s.value for s in fams["mcpping_ping_rtt_seconds"].samples
               if s.name.endswith("_bucket") and s.labels["peer"] == odd]
    assert buckets == list(range(1, len(EXPECTED["rtt_buckets"]) + 2))  # cumulative
    (total,) = [s.value for s in fams["mcpping_ping_rtt_seconds"].samples
                if s.name.endswith("_sum") and s.labels["peer"] == odd]
    assert total == 0.1 + 0.2
