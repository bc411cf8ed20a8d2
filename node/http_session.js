'use strict';
/**
 * A Streamable HTTP MCP client on node:http (http_request.js, not fetch:
 * see there), the engine and the C core's session machine
 * (binding.HttpSession, mcpp_http_session): the machine sequences the
 * exchanges (each message a POST accepting JSON or SSE, the Mcp-Session-Id
 * and MCP-Protocol-Version headers, a session renewed after a 404 with what
 * waits for it, answers resumed with Last-Event-ID, the GET listening
 * stream and its reopening, the DELETE at close), as it does for Python;
 * this file runs the HTTP requests it asks for, reports what they did, and
 * hands the messages to the engine and the application.
 */
const { binding } = require('./runtime');
const { EngineDriver } = require('./engine_driver');
const { RpcRequester, timedOutByEngine, requestText } = require('./rpc');
const { request } = require('./http_request');
const { runHandshake } = require('./handshake');
const { ClosedError } = require('./errors');

class HttpSession {
  /**
   * @param {string} url
   * @param {{keepalive?: object, records?: string|Function|object, probe?: string|null,
   *   headers?: Record<string,string>, listen?: boolean}} [options] headers: sent with every
   *   request (a config's headers: often a secret); listen: open the GET listening stream
   *   after the handshake (default true)
   */
  constructor(url, options = {}) {
    this.url = url;
    const headers = { ...(options.headers || {}) };
    // A header that cannot be sent throws here, not in a later POST.
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== 'string') throw new TypeError(`headers: ${JSON.stringify(name)} must be a string`);
      const problem = binding.httpHeaderProblem(name, value); // C's rule: what would break the request
      if (problem !== null) throw new RangeError(`headers: ${JSON.stringify(name)} ${problem}`);
    }
    if (typeof url !== 'string') throw new TypeError(`url must be a string, not ${typeof url}`);
    const parts = binding.httpUrl(url, headers); // C's rule: which URLs open, and how
    if (typeof parts === 'string') {
      throw Object.assign(new TypeError(`url ${JSON.stringify(url)} ${parts}`), { code: 'ERR_INVALID_URL' });
    }
    /** The session's sequencing (C's): what to send, cut, resume, wait for. */
    // maxBody 0: the settings' max_line_bytes, a stdio line's and an SSE
    // event's bound, so a server that answers without end costs no more.
    this.machine = new binding.HttpSession(url, headers, 0, options.listen !== false);
    /** host:port, the server's name until its handshake gives one. */
    this.address = parts.name;
    /** The URL as sentences and records quote it (no credentials, no query). */
    this.shownUrl = parts.shown;
    this.sessionId = null;
    this.protocolVersion = null;
    /** True on a 2026-07-28 session (no session id, no ping). */
    this.modern = false;
    this.serverInfo = null;
    this.rpc = new RpcRequester('mcpping-');
    /** Set when a POST could not reach the server at all. */
    this.connectError = null;
    /** The handshake's arguments, to run it again when the session expires. */
    this.initArgs = null;
    /** True while the GET listening stream is open. */
    this.listening = false;
    this.closed = false;
    /** @type {Map<number, AbortController>} the exchanges running, by the machine's id */
    this.exchanges = new Map();
    /** @type {Set<NodeJS.Timeout>} the machine's WAITs */
    this.timers = new Set();
    /** The error of the request whose failure the machine is being told of. */
    this.failing = null;
    this.tags = 0;
    /** @type {Map<number, string>} the application's requests by tag: their ids */
    this.tagIds = new Map();
    /** @type {Array<{tag: number, frame: string}>} the engine's own requests (pings, probes) */
    this.engineRequests = [];
    /** The last exchange started: its promise settles when it is over. */
    this.started = null;
    /** @type {Map<string, () => void>} what initialize() and close() wait for ('listening', 'closed') */
    this.awaited = new Map();
    this.driver = new EngineDriver({
      role: 'client',
      transport: 'streamable-http',
      keepalive: options.keepalive,
      peerName: this.address,
      probe: options.probe,
      records: options.records,
      write: (frame, kind) => this.engineSend(frame, kind),
      // The engine's own answers (a request timed out; in doubt after the
      // session expired): the request's promise rejects with an RpcError of that kind.
      deliver: (frame, kind) => this.rpc.handle(JSON.parse(frame), kind),
      // The stale policy is C's (mcpp_engine_should_close): a stale server's session is over.
      onMustClose: () => this.closeStale(),
    });
  }

  /** False once listening is off or the server offers no GET stream. */
  get listenWanted() {
    return this.machine.listens;
  }

  /** Runs what the machine asks, in order. @param {Array<object>} actions */
  run(actions) {
    for (const a of actions) {
      switch (a.do) {
        case 'start': this.started = this.start(a); break;
        case 'cut': this.cut(a.exchange); break;
        case 'receive': this.receive(a.data); break;
        case 'touch': this.driver.touch(); break; // an SSE comment: the server is alive
        case 'lost': this.answerLost(a.tag); break;
        case 'session':
          this.sessionId = a.id;
          if (a.id !== null) this.driver.setSessionId(a.id);
          break;
        case 'renew':
          this.protocolVersion = null;
          this.reinitialize();
          break;
        case 'gone':
          if (a.exchange) this.connectError = this.failing;
          this.lose(a.reason);
          break;
        case 'listening':
          this.listening = a.value;
          this.arrived(a.do);
          break;
        case 'wait': this.wait(a.wait, a.ms); break;
        case 'closed': this.arrived(a.do); break;
        default: throw new Error(`unknown HttpSession action ${a.do}`);
      }
    }
  }

  /** Sends one request the machine asked for and reports what it did. @param {object} a a START */
  async start(a) {
    const abort = new AbortController();
    const id = a.exchange;
    this.exchanges.set(id, abort);
    const { signal } = abort;
    let res;
    try {
      res = await request(a, {
        method: a.method, headers: a.headers, body: a.body ?? undefined, signal,
        connectTimeoutMs: a.connectTimeoutMs, headersTimeoutMs: a.headersTimeoutMs || undefined,
      });
    } catch (err) {
      if (signal.aborted) return; // cut: nothing waits for it
      this.exchanges.delete(id);
      this.failing = err;
      this.run(this.machine.failed(id, describe(err)));
      this.failing = null;
      return;
    }
    if (signal.aborted) {
      res.body.destroy();
      return;
    }
    this.run(this.machine.response(id, res.status, res.headers.get('content-type'),
      res.headers.get('mcp-session-id'), res.headers.get('location')));
    let broken = false;
    // The body's last bytes (node:http has read it whole) go to the machine
    // once the body has ended and its socket is back in the agent's pool:
    // a request the answer sets off (the next ping) then finds that socket
    // free, not busy, and opens no second connection (Python's client
    // gives a connection back before the session hears of the end too).
    const last = [];
    try {
      for await (const chunk of res.body) {
        if (!this.exchanges.has(id)) break; // cut: leaving the loop destroys the body
        if (res.body.complete) last.push(chunk);
        else this.run(this.machine.body(id, chunk));
      }
    } catch {
      broken = true; // reset, or cut mid-body (or by us)
    }
    if (last.length && this.exchanges.has(id)) this.run(this.machine.body(id, Buffer.concat(last)));
    if (!this.exchanges.delete(id)) return; // cut
    this.run(this.machine.end(id, broken));
  }

  /**
   * Runs the machine's answer to one input and waits, timeoutMs at most,
   * until it asks for `action`.
   * @param {string} action @param {() => object[]} feed @param {number} timeoutMs
   */
  async until(action, feed, timeoutMs) {
    let timer;
    const arrived = new Promise((resolve) => {
      this.awaited.set(action, resolve);
      timer = setTimeout(resolve, timeoutMs);
    });
    this.run(feed());
    await arrived;
    clearTimeout(timer);
    this.awaited.delete(action);
  }

  /** @param {string} action */
  arrived(action) {
    const resolve = this.awaited.get(action);
    if (resolve) resolve();
  }

  /** @param {number} id */
  cut(id) {
    const abort = this.exchanges.get(id);
    if (abort === undefined) return;
    this.exchanges.delete(id);
    abort.abort();
  }

  /** @param {number} wait @param {number} ms */
  wait(wait, ms) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.run(this.machine.wake(wait));
    }, ms);
    timer.unref(); // the requests' deadlines hold the process, not a retry
    this.timers.add(timer);
  }

  /** The engine's stale policy said close: the server is gone (no DELETE to send it). */
  closeStale() {
    this.lose(this.driver.staleReason(), binding.errorCodes.MCPP_ERR_STALE);
  }

  /** The session is over without a DELETE: the engine closes, and what waits is told why. */
  lose(reason, err = 0) {
    if (this.closed) return;
    this.closed = true;
    this.run(this.machine.lose());
    this.clearTimers();
    this.driver.close(reason, err);
    this.rpc.failAll(new ClosedError(reason));
  }

  clearTimers() {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  async reinitialize() {
    try {
      if (this.initArgs === null) throw new Error('no handshake ran to run again');
      await this.initialize(...this.initArgs);
    } catch (err) {
      this.connectError = err;
      this.run(this.machine.renewed(false, err.message));
      return;
    }
    this.driver.recordReconnect();
    this.run(this.machine.renewed(true, null)); // what waited goes now, in order
  }

  /** Feeds one inbound message: the engine first, then our requests. */
  receive(text) {
    if (!this.driver.recv(text)) return;
    const answer = binding.unservedRequestAnswer(text);
    if (answer !== null) {
      // A request from the server (roots/list, sampling, elicitation): this
      // client serves none, and says so rather than leave the server waiting.
      this.driver.observeOutbound(answer);
      this.run(this.machine.post(answer, 0, false));
      return;
    }
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    this.rpc.handle(msg);
  }

  fail(id, code, message) {
    this.receive(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
  }

  /**
   * Sends a request through the engine and resolves with its result. The
   * engine times it: past timeoutMs (0: the settings' request timeout) it
   * sends notifications/cancelled (never for initialize) and this rejects
   * with its -32001 RpcError (answerKind 'timeout').
   * @param {string} method
   * @param {object} [params]
   * @param {number} [timeoutMs]
   * @param {boolean} [direct] sent even while the session is renewed (the handshake's own)
   */
  request(method, params, timeoutMs = binding.requestTimeoutMs, direct = false) {
    const { message, promise } = this.rpc.create(method, params);
    let frame;
    try {
      frame = requestText(message, this.modern);
    } catch (err) {
      this.rpc.cancel(message.id); // params JSON cannot carry: nothing is left waiting
      throw err;
    }
    this.driver.observeOutbound(frame, timeoutMs);
    const tag = ++this.tags;
    this.tagIds.set(tag, message.id);
    // Settled either way: what still reads or resumes its answer is cut.
    const settle = () => {
      this.tagIds.delete(tag);
      this.run(this.machine.settled(tag));
    };
    promise.then(settle, settle);
    this.driver.holdUntil(promise); // its deadline holds the process (the CLI's run)
    this.run(this.machine.post(frame, tag, direct));
    return promise;
  }

  /**
   * The engine's frame. A ping or probe gets a tag, so its POST is cut once
   * the engine no longer waits for it (it timed out): a server that takes
   * requests and never answers holds no socket per ping.
   * @param {string} frame @param {number} kind
   */
  engineSend(frame, kind) {
    this.cutEngineRequests();
    if (kind !== binding.frameKinds.ping && kind !== binding.frameKinds.probe) {
      this.run(this.machine.post(frame, 0, false));
      return;
    }
    const tag = ++this.tags;
    this.engineRequests.push({ tag, frame });
    this.run(this.machine.post(frame, tag, false));
  }

  /**
   * A request's answer cannot come any more: the engine answers it in doubt
   * (an engine's own ping or probe is left to its timeout).
   * @param {number} tag
   */
  answerLost(tag) {
    const id = this.tagIds.get(tag);
    if (id !== undefined && !this.closed) this.driver.failRequest(id);
  }

  /** Settles the engine's requests it no longer waits for (C's mcpp_engine_awaits). */
  cutEngineRequests() {
    const waiting = [];
    const over = [];
    for (const r of this.engineRequests) (this.driver.awaits(r.frame) ? waiting : over).push(r);
    this.engineRequests = waiting; // before the machine runs: what it runs may send more
    for (const r of over) this.run(this.machine.settled(r.tag));
  }

  /**
   * Sends a notification; resolves when its POST is over (the handshake's
   * initialized is through before the session is used).
   * @param {string} method @param {boolean} [direct] sent even while the session is renewed
   */
  notify(method, direct = false) {
    const frame = JSON.stringify({ jsonrpc: '2.0', method });
    this.driver.observeOutbound(frame);
    this.started = null;
    this.run(this.machine.post(frame, 0, direct));
    return this.started ?? Promise.resolve();
  }

  /**
   * The MCP handshake, the C core's (handshake.js): initialize, or
   * server/discover on a 2026-07-28 server (no session, no ping: the
   * engine watches it by probe). Then the GET listening stream, if the
   * server gave a session.
   * @param {object} [params] unused: the C machine writes the requests (kept for callers)
   * @param {number} timeoutMs
   */
  async initialize(params, timeoutMs) {
    this.initArgs = [params, timeoutMs];
    const out = await runHandshake({
      request: (method, p, left) => this.request(method, p, left, true),
      notify: (method) => this.notify(method, true),
      timeoutMs,
      isTimeout: timedOutByEngine,
      // A POST that could not reach the server: its error is said as it is.
      isLost: () => this.connectError !== null,
      unreadable: () => this.driver.unreadable(),
      done: (o) => {
        this.serverInfo = o.serverInfo;
        this.protocolVersion = o.version;
        this.modern = o.modern;
        this.run(this.machine.setVersion(o.version));
      },
    });
    // Wait for the GET's answer (bounded), so `listening` is true on return.
    await this.until('listening', () => this.machine.opened(), timeoutMs);
    return out.result;
  }

  /** @param {{timeoutMs?: number, signal?: AbortSignal}} opts */
  ping(opts) {
    const done = this.driver.ping(opts);
    const sweep = () => this.cutEngineRequests();
    done.then(sweep, sweep); // a timed-out ping's POST is cut now, not at the next one
    return done;
  }

  /** Ends the session (DELETE, best effort; 405 is fine), the GET stream and the engine. */
  async close() {
    if (this.closed) return;
    this.closed = true;
    this.clearTimers();
    await this.until('closed', () => this.machine.close(), binding.httpShortTimeoutMs);
    for (const id of [...this.exchanges.keys()]) this.cut(id); // a DELETE past its bound
    this.driver.close(binding.closedByAppReason);
    this.rpc.failAll(new ClosedError(binding.closedByAppReason));
  }
}

/** @param {Error} err @returns {string} the root cause, e.g. "ECONNREFUSED" */
function describe(err) {
  let e = err;
  while (e && e.cause) e = e.cause;
  // llhttp's HPE_* parse errors: C's one cause, as Python's http.client says it.
  if (e && typeof e.code === 'string' && e.code.startsWith('HPE_')) return binding.httpNotHttpCause;
  return (e && (e.code || e.message)) || String(err);
}

module.exports = { HttpSession, describe };
