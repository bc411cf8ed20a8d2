'use strict';
/**
 * mcpping.metrics: Prometheus (prom-client) and OpenTelemetry
 * (@opentelemetry/api) figures for a fleet of peers, named by C (mcpping/metrics.h).
 *
 * Every connection (a spawned Peer or StdioClientTransport, a guard, the
 * CLI's HTTP session) reports to `hub`: once metrics are on, `hub.tally`
 * gives it a cell that C counts its events into where they happen (the
 * runtime's thread, or the engine; csrc/src/engine/metrics_tally.c), so no
 * event crosses to be counted. Exporters read C's rows when they collect;
 * the in-flight gauge reads each open connection live at that moment.
 *
 * Both exporters are optional: requiring mcpping loads neither package, and
 * each function says which one is missing. Figures start when the first
 * function is called; a connection opened earlier counts from its next event.
 *
 * Labels: `peer` (the server's serverInfo name, or the program's basename
 * until the handshake; the client's name in the server role) and
 * `transport`. Nothing from payloads, arguments or the environment.
 */
const binding = require('./binding');
const { McppError } = require('./errors');
const { version } = require('../package.json');

// Every name, help text, unit, label and bound comes from the C table
// (csrc/src/engine/metrics.c); this module adapts it to each exporter.
const FAMILIES = Object.freeze(binding.metricFamilies());
const byField = Object.fromEntries(FAMILIES.map((f) => [f.field, f]));
/** Upper bounds (seconds) of the RTT histogram's buckets. */
const RTT_BUCKETS = Object.freeze(binding.metricRttBuckets().map(([bound]) => bound));
/** The values of mcpping_peer_state's `state` label. */
const STATES = Object.freeze(byField.states.values);
/** The values of mcpping_ping_failures_total's `reason` label. */
const FAILURE_REASONS = Object.freeze(byField.failures.values);
/** The values of mcpping_probes_total's `result` label. */
const PROBE_RESULTS = Object.freeze(byField.probes.values);
/** Every metric: name -> [type, help]. */
const METRICS = Object.freeze(Object.fromEntries(FAMILIES.map((f) => [f.name, [f.kind, f.help]])));
/** A table field ('pings_sent') as the row property it names. */
const camel = (field) => field.replace(/_(.)/g, (_, c) => c.toUpperCase());

/**
 * An exporter that throws (an OpenTelemetry SDK's record) must not break
 * the delivery of the connection's items, nor lose the other RTTs, nor
 * vanish: it becomes one process warning.
 * @param {unknown} err
 */
function warnRecordFailed(err) {
  process.emitWarning(`mcpping.metrics: recording an RTT failed: ${err && err.message}`, { type: 'McppMetricsWarning', detail: err && err.stack });
}

/**
 * Which connections C counts for (one cell each: the runtime or the engine
 * counts every event into it where it happens, so no event crosses to be
 * counted), and the rows C returns.
 */
class Tally {
  constructor() {
    /** @type {Set<{cell: object, source: WeakRef<object>|null}>} open connections */
    this.open = new Set();
    /**
     * OpenTelemetry histograms, each called with (rtt, row) per pong at a
     * collection (C keeps the buckets and the sum, and turns their growth
     * into values: binding.metricRttGrowth).
     * @type {Array<(rtt: number, row: {attrs: object}) => void>}
     */
    this.rttSinks = [];
    /** @type {Map<string, {attrs: object, buckets: number[], sum: number}>} given to the sinks so far */
    this.given = new Map();
  }

  /**
   * A connection starts: its cell, which its owner has C count into
   * (binding.setMetrics or engine.setMetrics).
   * @param {string|null} peer its name so far
   * @param {string} transport
   * @param {{info(): object|null}} source read live by the in-flight gauge
   */
  opened(peer, transport, source) {
    const fig = { cell: binding.metricsCell(peer || 'unknown', transport), source: source ? new WeakRef(source) : null };
    this.open.add(fig);
    return fig;
  }

  /** @param {{cell: object}} fig the connection ended */
  closed(fig) {
    if (!this.open.delete(fig)) return;
    binding.metricsRetire(fig.cell);
  }

  /**
   * C's rows (one per label set), after reading each open connection's
   * in-flight count live: a request sent emits no event.
   * @returns {object[]}
   */
  rows() {
    for (const fig of [...this.open]) {
      const src = fig.source && fig.source.deref();
      if (fig.source && !src) {
        this.closed(fig); // collected without closing
        continue;
      }
      let info = null;
      try {
        info = src ? src.info() : null;
      } catch {
        // Closing: the last event's count stands.
      }
      if (info) binding.metricsSetInFlight(fig.cell, info.inFlight);
    }
    const rows = binding.metricsRows();
    this.giveRtts(rows);
    return rows;
  }

  /** @param {object[]} rows the pongs since the last collection go to every sink */
  giveRtts(rows) {
    let failed = null;
    for (const r of rows) {
      const key = `${r.peer}\u0000${r.transport}`;
      let h = this.given.get(key);
      if (!h) {
        h = { attrs: { peer: r.peer, transport: r.transport }, buckets: new Array(RTT_BUCKETS.length + 1).fill(0), sum: 0 };
        this.given.set(key, h);
      }
      if (r.rttBuckets.every((n, i) => n === h.buckets[i])) continue;
      // Pongs from before the first sink are not given.
      const rtts = this.rttSinks.length ? binding.metricRttGrowth(r.rttBuckets, h.buckets, r.rttSum - h.sum) : [];
      h.buckets = r.rttBuckets;
      h.sum = r.rttSum;
      for (const rtt of rtts) {
        for (const sink of this.rttSinks) {
          try {
            sink(rtt, h);
          } catch (err) {
            failed = err;
          }
        }
      }
    }
    if (failed) warnRecordFailed(failed);
  }
}

/**
 * Where connections report. `hub.tally` is null until metrics are on, so
 * keeping no figures costs one check per event.
 */
const hub = {
  tally: /** @type {Tally|null} */ (null),
  /** Told when metrics turn on: connections that keep ping events in C while nobody listens. */
  followers: /** @type {Set<() => void>} */ (new Set()),
};

/** @returns {Tally} the process's tally, counting from now on */
function enable() {
  if (!hub.tally) {
    hub.tally = new Tally();
    for (const f of [...hub.followers]) f();
  }
  return hub.tally;
}

/**
 * Loads an optional package, or says how to install it.
 * @param {string} pkg
 * @param {string} fn
 */
function optional(pkg, fn) {
  try {
    return require(pkg);
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(pkg)) {
      throw new McppError(`mcpping.metrics.${fn}() needs the ${pkg} package, which is not installed: npm install ${pkg}`,
        { code: 'ERR_MCPPING_MISSING_PACKAGE', cause: err });
    }
    throw err;
  }
}

// ---------------------------------------------------------------- Prometheus

/**
 * The figure a family of the C table shows (its `field`) in one row: a
 * number, or per label value in the family's order.
 * @param {object} r a row of binding.metricsRows()
 * @param {string} field
 */
function figure(r, field) {
  return r[camel(field)];
}

/**
 * The samples of one family, in prom-client's `metric.get()` shape.
 * @param {object} f a family of the C table
 * @param {ReturnType<Tally['rows']>} rows
 */
function samples(f, rows) {
  const values = [];
  const labels = (r, extra) => ({ peer: r.peer, transport: r.transport, ...extra });
  for (const r of rows) {
    const v = figure(r, f.field);
    if (f.kind === 'histogram') {
      let cumulative = 0;
      v.forEach((n, i) => {
        cumulative += n;
        const le = i < RTT_BUCKETS.length ? RTT_BUCKETS[i] : '+Inf';
        values.push({ metricName: `${f.name}_bucket`, labels: labels(r, { le }), value: cumulative });
      });
      values.push({ metricName: `${f.name}_sum`, labels: labels(r), value: r.rttSum });
      values.push({ metricName: `${f.name}_count`, labels: labels(r), value: cumulative });
    } else if (f.label) {
      f.values.forEach((x, i) => values.push({ labels: labels(r, { [f.label]: x }), value: v[i] }));
    } else {
      values.push({ labels: labels(r), value: v });
    }
  }
  return values;
}

/**
 * Registers mcpping's metrics with a prom-client Registry (default: the
 * global `register`), as collectors that read the tally at each scrape.
 * Throws if the registry already has them (prom-client's duplicate check).
 * @param {object} [register] a prom-client Registry
 * @returns {object[]} the registered metrics (for register.removeSingleMetric)
 */
function registerPrometheus(register) {
  const registry = register || optional('prom-client', 'registerPrometheus').register;
  const tally = enable();
  const metrics = FAMILIES.map((f) => ({
    name: f.name,
    help: f.help,
    type: f.kind,
    aggregator: 'sum',
    get: async () => ({ name: f.name, help: f.help, type: f.kind, aggregator: 'sum', values: samples(f, tally.rows()) }),
  }));
  for (const m of metrics) {
    if (registry.getSingleMetric(m.name)) {
      throw new McppError(`registerPrometheus: the registry already has ${m.name}`, { code: 'ERR_MCPPING_DUPLICATE_METRIC' });
    }
  }
  for (const m of metrics) registry.registerMetric(m);
  return metrics;
}

// ------------------------------------------------------------- OpenTelemetry

const otelProviders = new WeakSet();

/**
 * Creates mcpping's instruments on an OpenTelemetry MeterProvider (default:
 * the global one). Counters and gauges are observable, read at each
 * collection; the RTT histogram gets every pong, with RTT_BUCKETS advised
 * as its boundaries, recorded in one pass at each collection from the
 * buckets and sum C counted. Instrumenting one provider twice throws.
 * @param {object} [meterProvider]
 */
function instrumentOtel(meterProvider) {
  const api = optional('@opentelemetry/api', 'instrumentOtel');
  const provider = meterProvider || api.metrics.getMeterProvider();
  if (otelProviders.has(provider)) {
    throw new McppError('instrumentOtel: this meter provider already has mcpping\'s instruments', { code: 'ERR_MCPPING_DUPLICATE_METRIC' });
  }
  otelProviders.add(provider);
  const tally = enable();
  const meter = provider.getMeter('mcpping', version);
  const observe = (instrument, each) => instrument.addCallback((result) => {
    for (const r of tally.rows()) {
      const attrs = { peer: r.peer, transport: r.transport };
      each(r, (value, extra) => result.observe(value, extra ? { ...attrs, ...extra } : attrs));
    }
  });
  let histogram = null;
  for (const f of FAMILIES) {
    const options = { description: f.help, unit: f.unit };
    if (f.kind === 'histogram') {
      histogram = meter.createHistogram(f.name, { ...options, advice: { explicitBucketBoundaries: [...RTT_BUCKETS] } });
    } else {
      const instrument = f.kind === 'counter' ? meter.createObservableCounter(f.name, options) : meter.createObservableGauge(f.name, options);
      observe(instrument, (r, put) => {
        const v = figure(r, f.field);
        if (f.label) f.values.forEach((x, i) => put(v[i], { [f.label]: x }));
        else put(v);
      });
    }
  }
  tally.rttSinks.push((rtt, row) => histogram.record(rtt, row.attrs));
}

// ---------------------------------------------------------- Text exposition

/**
 * Every connection's figures as Prometheus text (format 0.0.4), rendered
 * by the C core as `mcpping wrap --metrics` serves them; needs neither
 * exporter package. Figures start at the first call.
 * @returns {string}
 */
function exposition() {
  return binding.metricsRender(enable().rows());
}

module.exports = { registerPrometheus, instrumentOtel, exposition, hub, METRICS, RTT_BUCKETS, STATES, FAILURE_REASONS, PROBE_RESULTS };
