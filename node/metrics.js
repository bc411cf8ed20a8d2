'use strict';
/**
 * mcpping.metrics: Prometheus (prom-client) and OpenTelemetry
 * (@opentelemetry/api) figures for a fleet of peers, named as in Python.
 *
 * Every connection (a spawned Peer or StdioClientTransport, a guard, the
 * CLI's HTTP session) reports to `hub`: once metrics are on, `hub.tally`
 * counts each event into that connection's figures, an increment or two per
 * event, no listener per metric. Exporters read the tally when they collect;
 * the gauges read each open connection live at that moment.
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
/**
 * Pongs a connection keeps for the OpenTelemetry histograms between
 * collections; at this many they are recorded at once.
 */
const RTT_BATCH = 256;
/** The values of mcpping_peer_state's `state` label. */
const STATES = Object.freeze(byField.states.values);
/** The values of mcpping_ping_failures_total's `reason` label. */
const FAILURE_REASONS = Object.freeze(byField.failures.values);
/** The values of mcpping_probes_total's `result` label. */
const PROBE_RESULTS = Object.freeze(byField.probes.values);
/** Every metric: name -> [type, help]. */
const METRICS = Object.freeze(Object.fromEntries(FAMILIES.map((f) => [f.name, [f.kind, f.help]])));
/** A table field ('pings_sent') as the Figures property it names. */
const camel = (field) => field.replace(/_(.)/g, (_, c) => c.toUpperCase());
/**
 * Which figure each event counts toward (the C rule): per event type, 8
 * entries indexed by closed * 4 + invalid * 2 + (pingSeq != 0), each
 * [Figures property, label value or null] or null.
 */
const EVENT_FIGURES = new Map(Object.entries(binding.metricEventFigures())
  .map(([type, row]) => [type, row.map((fx) => fx && [camel(fx[0]), fx[1]])]));
/** The plain counters' Figures properties: pingsSent, ..., reconnects. */
const COUNTERS = FAMILIES.filter((f) => f.kind === 'counter' && !f.label).map((f) => camel(f.field));
/** The labelled counters: [Figures property, label values] (failures, probes). */
const LABELLED = FAMILIES.filter((f) => f.kind === 'counter' && f.label).map((f) => [camel(f.field), f.values]);

/** One connection's counts, or the summed counts of closed connections. */
class Figures {
  /**
   * @param {string} peer
   * @param {string} transport
   * @param {{info(): object|null}} [source] read live by the in-flight gauge
   */
  constructor(peer, transport, source) {
    this.transport = transport;
    this.rename(peer);
    this.state = 'alive';
    this.inFlight = 0;
    this.source = source ? new WeakRef(source) : null;
    for (const k of COUNTERS) this[k] = 0;
    for (const [k, values] of LABELLED) this[k] = Object.fromEntries(values.map((x) => [x, 0]));
    // Per bucket, not cumulative; the last one is +Inf.
    this.rttBuckets = new Array(RTT_BUCKETS.length + 1).fill(0);
    this.rttSum = 0;
    /** @type {number[]|null} RTTs not yet recorded into OpenTelemetry histograms */
    this.rtts = null;
  }

  /** @param {string} peer */
  rename(peer) {
    this.peer = peer;
    this.key = `${peer}\u0000${this.transport}`;
    this.attrs = { peer, transport: this.transport };
  }

  /** @param {Figures} other */
  add(other) {
    for (const k of COUNTERS) this[k] += other[k];
    for (const [k, values] of LABELLED) for (const x of values) this[k][x] += other[k][x];
    for (let i = 0; i < this.rttBuckets.length; i++) this.rttBuckets[i] += other.rttBuckets[i];
    this.rttSum += other.rttSum;
  }

  /** @returns {number} the engine's live count, or the last event's */
  liveInFlight() {
    const src = this.source && this.source.deref();
    if (src) {
      try {
        const info = src.info();
        if (info) return info.inFlight;
      } catch {
        // Closing: the last event's count stands.
      }
    }
    return this.inFlight;
  }
}

/** @param {number} rtt seconds @returns {number} its bucket's index */
function bucketOf(rtt) {
  let i = 0;
  while (i < RTT_BUCKETS.length && rtt > RTT_BUCKETS[i]) i++;
  return i;
}

/**
 * An exporter that throws (an OpenTelemetry SDK's record) must not break
 * the delivery of the connection's items, nor lose the other RTTs, nor
 * vanish: it becomes one process warning.
 * @param {unknown} err
 */
function warnRecordFailed(err) {
  process.emitWarning(`mcpping.metrics: recording an RTT failed: ${err && err.message}`, { type: 'McppMetricsWarning', detail: err && err.stack });
}

/** The one place every connection's events are counted. */
class Tally {
  constructor() {
    /** @type {Set<Figures>} */
    this.open = new Set();
    /** @type {Map<string, Figures>} closed connections' sums, by label set */
    this.closedSums = new Map();
    /**
     * OpenTelemetry histograms, each called with (rtt, figures) for every
     * pong. A record() made on the pong's path costs more than the rest of
     * the counting, so pongs wait in the connection's figures and are
     * recorded in one pass when anything collects (rows()), or at RTT_BATCH.
     * @type {Array<(rtt: number, fig: Figures) => void>}
     */
    this.rttSinks = [];
  }

  /**
   * A connection starts.
   * @param {string|null} peer its name so far
   * @param {string} transport
   * @param {{info(): object|null}} source
   * @returns {Figures}
   */
  opened(peer, transport, source) {
    const fig = new Figures(peer || 'unknown', transport, source);
    this.open.add(fig);
    return fig;
  }

  /** @param {Figures} fig @param {object} ev an engine event */
  event(fig, ev) {
    fig.state = ev.state;
    fig.inFlight = ev.inFlight;
    const row = EVENT_FIGURES.get(ev.type);
    if (row) {
      const fx = row[(ev.state === 'closed' ? 4 : 0) + (ev.invalid ? 2 : 0) + (ev.pingSeq ? 1 : 0)];
      if (!fx) return;
      if (fx[1] !== null) fig[fx[0]][fx[1]] += 1;
      else fig[fx[0]] += 1;
      if (ev.type === 'pong') {
        const rtt = ev.rttUs / 1e6;
        fig.rttBuckets[bucketOf(rtt)] += 1;
        fig.rttSum += rtt;
        if (this.rttSinks.length) {
          (fig.rtts ||= []).push(rtt);
          if (fig.rtts.length >= RTT_BATCH) this.recordRtts(fig);
        }
      }
    } else if (ev.type === 'initialized' && ev.message) {
      fig.rename(ev.message);
    }
  }

  /** @param {Figures} fig its waiting pongs go into every histogram */
  recordRtts(fig) {
    const rtts = fig.rtts;
    if (!rtts) return;
    fig.rtts = null;
    let failed = null;
    for (const rtt of rtts) {
      for (const sink of this.rttSinks) {
        try {
          sink(rtt, fig);
        } catch (err) {
          failed = err;
        }
      }
    }
    if (failed) warnRecordFailed(failed);
  }

  /** @param {Figures} fig the connection ended */
  closed(fig) {
    if (!this.open.delete(fig)) return;
    this.recordRtts(fig);
    fig.state = 'closed';
    let sum = this.closedSums.get(fig.key);
    if (!sum) {
      sum = new Figures(fig.peer, fig.transport);
      this.closedSums.set(fig.key, sum);
    }
    sum.add(fig);
  }

  /**
   * Sums per label set, with the state and in-flight gauges.
   * @returns {Array<{figures: Figures, states: Record<string, number>, inFlight: number}>}
   */
  rows() {
    const out = new Map();
    if (this.rttSinks.length) for (const fig of this.open) this.recordRtts(fig);
    const row = (fig) => {
      let r = out.get(fig.key);
      if (!r) {
        r = { figures: new Figures(fig.peer, fig.transport), states: { alive: 0, suspect: 0, stale: 0, closed: 0 }, inFlight: 0 };
        out.set(fig.key, r);
      }
      return r;
    };
    for (const fig of [...this.open]) {
      if (fig.source && !fig.source.deref()) this.closed(fig); // collected without closing
    }
    for (const sum of this.closedSums.values()) row(sum).figures.add(sum);
    for (const fig of this.open) {
      const r = row(fig);
      r.figures.add(fig);
      r.states[fig.state] += 1;
      r.inFlight += fig.liveInFlight();
    }
    for (const r of out.values()) {
      if (!STATES.some((s) => r.states[s])) r.states.closed = 1;
    }
    return [...out.values()];
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
 * The figure a family of the C table shows (its `field`) in one row.
 * @param {ReturnType<Tally['rows']>[number]} r
 * @param {string} field
 */
function figure(r, field) {
  if (field === 'states') return r.states;
  if (field === 'in_flight') return r.inFlight;
  return r.figures[camel(field)];
}

/**
 * The samples of one family, in prom-client's `metric.get()` shape.
 * @param {object} f a family of the C table
 * @param {ReturnType<Tally['rows']>} rows
 */
function samples(f, rows) {
  const values = [];
  const labels = (r, extra) => ({ peer: r.figures.peer, transport: r.figures.transport, ...extra });
  for (const r of rows) {
    const v = figure(r, f.field);
    if (f.kind === 'histogram') {
      let cumulative = 0;
      v.forEach((n, i) => {
        cumulative += n;
        const le = i < RTT_BUCKETS.length ? RTT_BUCKETS[i] : '+Inf';
        values.push({ metricName: `${f.name}_bucket`, labels: labels(r, { le }), value: cumulative });
      });
      values.push({ metricName: `${f.name}_sum`, labels: labels(r), value: r.figures.rttSum });
      values.push({ metricName: `${f.name}_count`, labels: labels(r), value: cumulative });
    } else if (f.label) {
      for (const x of f.values) values.push({ labels: labels(r, { [f.label]: x }), value: v[x] });
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
 * as its boundaries, recorded in one pass at each collection (at most
 * RTT_BATCH per connection wait in between). Instrumenting one provider twice throws.
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
    for (const r of tally.rows()) each(r, (value, extra) => result.observe(value, extra ? { ...r.figures.attrs, ...extra } : r.figures.attrs));
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
        if (f.label) for (const x of f.values) put(v[x], { [f.label]: x });
        else put(v);
      });
    }
  }
  tally.rttSinks.push((rtt, fig) => histogram.record(rtt, fig.attrs));
}

// ---------------------------------------------------------- Text exposition

/**
 * Every connection's figures as Prometheus text (format 0.0.4), rendered
 * by the C core as `mcpping wrap --metrics` serves them; needs neither
 * exporter package. Figures start at the first call.
 * @returns {string}
 */
function exposition() {
  return binding.metricsRender(enable().rows().map((r) => ({
    ...r.figures,
    ...Object.fromEntries(LABELLED.map(([k, values]) => [k, values.map((x) => r.figures[k][x])])),
    states: STATES.map((x) => r.states[x]),
    inFlight: r.inFlight,
  })));
}

module.exports = { registerPrometheus, instrumentOtel, exposition, hub, METRICS, RTT_BUCKETS, STATES, FAILURE_REASONS, PROBE_RESULTS };
