'use strict';
/**
 * SessionReaper: the server role over Streamable HTTP, ending dead clients'
 * sessions. With the TS SDK each session is one StreamableHTTPServerTransport
 * (usually with its own McpServer), kept by the application until the client
 * sends DELETE; a client that died without one keeps its transport, its
 * server and its memory for good. `reaper.watch(transport)` returns the
 * transport wrapped in a guard in the server role: give it to
 * `server.connect()`. It answers the client's pings, pings an idle client on
 * keepalive, and when the client went stale it closes the transport, so the
 * server and the application's onclose let the session go.
 *
 * A server's ping reaches the client only on the client's GET listening
 * stream. Until the client opens one its silence is not held against it (no
 * keepalive ping, nothing times out); a client that opened none within
 * streamGraceMs is "unsupported", never "stale". A client
 * whose stream was open and then dropped is pinged as before: a live client
 * opens it again, a dead one does not answer.
 */
const { EventEmitter } = require('node:events');
const { GuardedTransport } = require('./guard');
const check = require('./validate');
const { emitSafely } = require('./isolate');

const binding = require('./binding');

/** mcpping.h: closed because the peer went stale (MCPP_ERRNO_MAP). */
const { MCPP_ERR_STALE } = binding.errorCodes;
const EVENTS = ['ping', 'pong', 'timeout', 'ping_error', 'unsupported', 'ping_answered', 'suspect', 'stale', 'recovered', 'closed', 'record'];

class SessionReaper extends EventEmitter {
  /**
   * @param {{keepalive?: object, records?: string|Function|object, streamGraceMs?: number}} [options]
   *   keepalive: as for connect() (default intervalMs 15000, timeoutMs 5000,
   *   failures 3, onStale 'close'); records: the governance records of
   *   every session; streamGraceMs: how long a new client has to open its
   *   listening stream before it is "unsupported" (default intervalMs +
   *   timeoutMs x failures)
   */
  constructor(options) {
    super();
    options = check.options('SessionReaper options', options);
    check.knownKeys('options', options, ['keepalive', 'records', 'streamGraceMs']);
    if (options.keepalive === null) throw check.invalid(TypeError, 'SessionReaper: options.keepalive must be an object (a reaper that never pings reaps nothing)');
    this.keepalive = options.keepalive || {};
    this.records = options.records;
    /** @type {Map<string, GuardedTransport>} the sessions watched now, by session id */
    this.sessions = new Map();
    /** How many sessions this reaper closed because their client went stale. */
    this.reaped = 0;
    // The grace a new client has to open its listening stream, checked now
    // so a bad keepalive fails here, not at the first session.
    const ka = check.keepaliveOptions(this.keepalive);
    this.graceMs = check.optional('options.streamGraceMs', 'timeout_ms', options.streamGraceMs) ??
      binding.staleBoundMs(ka.intervalMs, ka.timeoutMs ?? 0, ka.failures ?? 0);
  }

  /**
   * Wraps a StreamableHTTPServerTransport (stateful) in a guard in the server
   * role; give the result to server.connect(). The transport's own onclose,
   * if set before, still runs.
   * @param {object} transport
   * @returns {GuardedTransport}
   */
  watch(transport) {
    if (!transport || typeof transport.handleRequest !== 'function') {
      throw check.invalid(TypeError, 'SessionReaper.watch: expected a StreamableHTTPServerTransport');
    }
    if (transport.mcppingReaped) throw check.invalid(Error, 'SessionReaper.watch: this transport is watched already');
    transport.mcppingReaped = true;
    const userOnClose = transport.onclose;
    const g = new GuardedTransport(transport, {
      role: 'server',
      transport: 'streamable-http',
      keepalive: this.keepalive,
      records: this.records,
      probe: null,
    });
    g.onclose = userOnClose;
    let seenStream = false;
    g.reachable = () => seenStream;
    // No stream yet: the silence is ours, not the client's.
    g.driver.setReading(false);
    const grace = setTimeout(() => g.driver.setReading(true), this.graceMs);
    grace.unref();
    const handleRequest = transport.handleRequest.bind(transport);
    transport.handleRequest = (req, res, body) => {
      if (req && req.method === 'GET' && !seenStream) {
        seenStream = true;
        g.driver.setReading(true);
      }
      this.track(transport, g);
      // The initialize POST is where the transport learns its session id.
      return handleRequest(req, res, body).finally(() => this.track(transport, g));
    };
    for (const name of EVENTS) {
      g.on(name, (ev) => {
        const sid = transport.sessionId || null;
        if (name === 'closed') {
          clearTimeout(grace);
          if (sid) this.sessions.delete(sid);
          if (ev && ev.error === MCPP_ERR_STALE) this.reaped++;
        }
        emitSafely(this, name, sid, ev);
      });
    }
    return g;
  }

  /** Lists a session by its id once the transport has one (until it closes). */
  track(transport, g) {
    const sid = transport.sessionId;
    if (sid && !g.driver.closed && !this.sessions.has(sid)) this.sessions.set(sid, g);
  }
}

module.exports = { SessionReaper };
