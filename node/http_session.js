'use strict';
/**
 * A minimal Streamable HTTP MCP client for the CLI, built on node:http
 * (http_request.js, not fetch: see there) and the sans-I/O engine: every message is a POST accepting JSON or SSE, the
 * Mcp-Session-Id is kept, MCP-Protocol-Version is sent after initialize.
 * After the handshake the GET listening stream is opened (405: the server
 * offers none), so server pings arriving on it or on a POST's SSE stream
 * are answered by the engine (a POST each). Close sends DELETE.
 * The C core classifies HTTP errors (httpClassify): a 404 whose body is a
 * JSON-RPC -32601 means unsupported; any other 404 on a session (or a 400
 * to a ping on one: the server lost the session) means the session
 * expired, so the handshake runs again (a "reconnect" record): the
 * pings that met the 404 are sent again on the new session, a request that
 * met it gets the server's 404 as its answer (it did not run), and what is
 * sent meanwhile waits for the new session; nothing else is resent.
 */
const { setTimeout: sleep } = require('node:timers/promises');
const { format } = require('node:util');
const { binding } = require('./runtime');
const { EngineDriver } = require('./engine_driver');
const { RpcRequester, RpcError } = require('./rpc');
const { request } = require('./http_request');
const { runHandshake } = require('./handshake');
const { ClosedError } = require('./errors');
const check = require('./validate');

/**
 * The longest body read whole (an answer, an error's), as a line or an SSE
 * event: the settings' max_line_bytes, so a server that answers without end
 * costs no more memory than that.
 */
const MAX_BODY = binding.settingsTable().find((row) => row.name === 'max_line_bytes').default;

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
    this.extraHeaders = { ...(options.headers || {}) };
    // A header that cannot be sent throws here, not in a later POST.
    for (const [name, value] of Object.entries(this.extraHeaders)) {
      if (typeof value !== 'string') throw new TypeError(`headers: ${JSON.stringify(name)} must be a string`);
      const problem = binding.httpHeaderProblem(name, value); // C's rule: what would break the request
      if (problem !== null) throw new RangeError(`headers: ${JSON.stringify(name)} ${problem}`);
    }
    if (typeof url !== 'string') throw new TypeError(`url must be a string, not ${typeof url}`);
    const parts = binding.httpUrl(url, this.extraHeaders); // C's rule: which URLs open, and how
    if (typeof parts === 'string') {
      throw Object.assign(new TypeError(`url ${JSON.stringify(url)} ${parts}`), { code: 'ERR_INVALID_URL' });
    }
    if (parts.authorization !== null) this.extraHeaders.Authorization = parts.authorization; // the URL's user:password
    /** Where requests go: host, port, target (no credentials, no fragment). */
    this.target = parts;
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
    this.opened = false; // the handshake succeeded once
    /** The handshake's arguments, to run it again when the session expires. */
    this.initArgs = null;
    /** C's rules for a session that ended: which end renews it, what waits, which ping goes again. */
    this.renewal = new binding.HttpRenewal();
    /**
     * What waits for the new session while the handshake runs again, in order.
     * @type {Array<[string, Resumable|undefined]>}
     */
    this.held = [];
    /** Open the GET listening stream after the handshake (options.listen, default true). */
    this.listenWanted = options.listen !== false;
    /** True while the GET listening stream is open. */
    this.listening = false;
    this.closed = false;
    /** @type {AbortController|null} aborts the GET stream at close */
    this.listenAbort = null;
    /** @type {{session: string, sse: object}|null} the listening stream's parser (its last event ID) */
    this.listenSse = null;
    /** The last wait before opening the listening stream again (0: none since it was open). */
    this.relistenMs = 0;
    this.relistenTimer = null;
    /** @type {Set<AbortController>} the POSTs still waiting for answers, cut when the session ends */
    this.posts = new Set();
    /** @type {Resumable[]} the engine's own requests (pings, probes) whose POSTs may still wait */
    this.engineRequests = [];
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

  /**
   * The headers of a request (C's rule: the caller's first, never replacing mcpping's).
   * @param {'POST'|'GET'|'DELETE'} method
   * @param {string|null} session
   * @returns {Record<string,string>}
   */
  headers(method, session) {
    return binding.httpRequestHeaders(method, this.extraHeaders, session, this.protocolVersion);
  }

  /**
   * POSTs one frame and feeds every message of the answer to the engine.
   * Never rejects: failures become synthetic JSON-RPC errors for the
   * request, so the waiting side settles.
   * While the session is renewed the frame waits for the new one, unless
   * direct (the handshake's own).
   * @param {string} frame
   * @param {Resumable} [answer] a request of ours: its SSE answer is resumed (SEP-1699)
   * @param {boolean} [direct]
   */
  async post(frame, answer, direct = false) {
    if (!direct && this.renewal.holds(frame)) {
      this.held.push([frame, answer]);
      return;
    }
    // Each POST its own abort, so the session's end cuts only what still
    // waits (aborting a finished one errors its kept-alive socket in the pool).
    const abort = new AbortController();
    if (answer) {
      // A request settled without its answer (timed out, cancelled) has
      // none left to come: its POST is cut too.
      if (answer.abort.signal.aborted) return;
      answer.abort.signal.addEventListener('abort', () => abort.abort(), { once: true });
    }
    this.posts.add(abort);
    try {
      await this.exchange(frame, 0, abort.signal, answer);
    } finally {
      this.posts.delete(abort);
    }
  }

  /**
   * One POST and its answer (following C's redirects).
   * @param {string} frame @param {number} redirects followed so far @param {AbortSignal} signal
   * @param {Resumable} [answer]
   */
  async exchange(frame, redirects, signal, answer) {
    let msg;
    try {
      msg = JSON.parse(frame);
    } catch {
      return;
    }
    const isRequest = msg && msg.method !== undefined && msg.id !== undefined;
    const sentSession = this.sessionId;
    let res;
    try {
      res = await request(this.target, {
        method: 'POST', headers: this.headers('POST', sentSession), body: frame, signal,
        connectTimeoutMs: binding.httpPostConnectTimeoutMs,
      });
    } catch (err) {
      if (this.closed || signal.aborted) return; // cut at close or when settled: nothing waits any more
      this.connectError = err;
      // An open session whose server cannot be reached is over: what waits
      // is told so (an error made up here is no answer from the server).
      if (this.opened) this.lose(format(binding.httpUnreachableFormat, this.shownUrl, describe(err)));
      else if (isRequest) this.fail(msg.id, -32000, `cannot connect: ${describe(err)}`);
      return;
    }
    const to = binding.httpRedirectUrl(res.status, res.headers.get('location'), this.target.requestUrl);
    if (to !== null && redirects < binding.httpMaxRedirects) {
      // C's rule: 307/308 on the same origin; the session goes there from now on.
      res.body.resume();
      this.target = binding.httpUrl(to, this.extraHeaders);
      await this.exchange(frame, redirects + 1, signal, answer);
      return;
    }
    const sid = res.headers.get('mcp-session-id');
    if (sid && !this.sessionId) {
      this.sessionId = sid;
      this.driver.setSessionId(sid);
    }
    const kind = binding.httpBodyKind('POST', res.status, res.headers.get('content-type'));
    if (kind === 'error') {
      let body = '';
      try {
        body = await res.text(MAX_BODY); // null past the bound
      } catch {
        // A broken body: classified as empty.
      }
      this.answered(kind, res, body, frame, sentSession);
      return;
    }
    await this.readBody(res, kind, frame, answer, sentSession);
  }

  /**
   * Hands the engine what C says the answer's body gives it (null: cut at
   * the bound): the message, an answer C made of an error, a page or a
   * body without end, or the session's end.
   * @param {'json'|'error'|'none'} kind @param {string|null} body
   * @param {string} frame @param {string|null} sentSession
   */
  answered(kind, res, body, frame, sentSession) {
    const { step, message } = binding.httpPostAnswer(kind, res.status, res.headers.get('content-type'), body,
      MAX_BODY, frame, sentSession !== null);
    if (step === 'expired') this.sessionExpired(frame, sentSession, res.status, body ?? '');
    else if (message !== null) this.receive(message);
  }

  /**
   * Opens the GET listening stream and feeds its events to the engine;
   * resolves when the server has answered the GET (the stream then runs on).
   */
  listen() {
    if (this.closed || !this.listenWanted || !this.sessionId || this.listenAbort) return Promise.resolve();
    const session = this.sessionId;
    const abort = new AbortController();
    this.listenAbort = abort;
    // The session's stream keeps its last event ID across reopenings: sent
    // as Last-Event-ID, what the server sent while it was down comes now.
    if (!this.listenSse || this.listenSse.session !== session) this.listenSse = { session, sse: new binding.SseParser() };
    const { sse } = this.listenSse;
    const headers = this.headers('GET', session);
    if (sse.lastEventId) headers[binding.httpLastEventId] = sse.lastEventId;
    let answered;
    const settled = new Promise((resolve) => (answered = resolve));
    (async () => {
      let opened = false;
      let status = 0;
      let body = '';
      try {
        const res = await request(this.target, { method: 'GET', headers, signal: abort.signal, headersTimeoutMs: binding.httpShortTimeoutMs });
        if (binding.httpBodyKind('GET', res.status, res.headers.get('content-type')) !== 'sse') {
          status = res.status;
          body = (await res.text(MAX_BODY)) ?? '';
        } else {
          opened = true;
          this.listening = session === this.sessionId;
          answered();
          await readSse(res.body, sse, (text) => this.receive(text), () => this.driver.touch());
        }
      } catch (err) {
        // Not reached, or the stream broke (or close() cut it); an oversize
        // event ends that parser.
        if (err instanceof SseTooLarge) this.listenSse = null;
      }
      answered();
      this.listenEnded(abort, session, sse, opened, status, body);
    })();
    return settled;
  }

  /**
   * The GET stream is over: C's rule says what follows (open it again after
   * a wait, at the pace its retry asks, never ask again, or initialize again).
   */
  listenEnded(abort, session, sse, opened, status, body) {
    if (this.listenAbort === abort) this.listenAbort = null;
    if (this.closed || session !== this.sessionId) return; // an older session's stream
    this.listening = false;
    if (!this.listenWanted) return;
    const next = sse.listenAfter(opened, status, body, this.relistenMs);
    this.relistenMs = next.waitMs;
    if (next.step === 'expired') this.sessionExpired('', session, status, body);
    else if (next.step === 'never') this.listenWanted = false;
    else if (!this.relistenTimer) {
      this.relistenTimer = setTimeout(() => {
        this.relistenTimer = null;
        this.listen();
      }, this.relistenMs);
      this.relistenTimer.unref();
    }
  }

  /** The engine's stale policy said close: the server is gone (no DELETE to send it). */
  closeStale() {
    this.lose(this.driver.staleReason(), binding.errorCodes.MCPP_ERR_STALE);
  }

  /** The session is over without a DELETE: the engine closes, and what waits is told why. */
  lose(reason, err = 0) {
    if (this.closed) return;
    this.closed = true;
    this.stopListening();
    for (const abort of this.posts) abort.abort();
    this.driver.close(reason, err);
    this.rpc.failAll(new ClosedError(reason));
  }

  stopListening() {
    if (this.relistenTimer) clearTimeout(this.relistenTimer);
    this.relistenTimer = null;
    if (this.listenAbort) this.listenAbort.abort();
    this.listenAbort = null;
    this.listening = false;
  }

  /**
   * A session of ours ended (C's verdict on the answer to frame): C's
   * renewal says whether the handshake runs again now, and whether the
   * frame goes again on the new session (waiting for it) or gets the
   * server's answer.
   * @param {string} frame @param {string|null} sentSession @param {number} status @param {string} body
   */
  sessionExpired(frame, sentSession, status, body) {
    if (this.closed) return;
    const current = sentSession !== null && sentSession === this.sessionId && this.initArgs !== null;
    const { renew, sendAgain } = this.renewal.expired(current, frame);
    if (renew) {
      this.sessionId = null;
      this.protocolVersion = null;
      this.stopListening();
      this.reinitialize();
    }
    if (sendAgain) {
      this.post(frame); // waits while the handshake runs
      return;
    }
    const answer = binding.httpErrorAnswer(status, body, frame);
    if (answer !== null) this.receive(answer);
  }

  async reinitialize() {
    try {
      await this.initialize(...this.initArgs);
    } catch (err) {
      this.renewal.done(false);
      this.held = [];
      this.connectError = err;
      this.lose(format(binding.httpReinitFailedFormat, err.message));
      return;
    }
    this.renewal.done(true);
    this.driver.recordReconnect();
    const held = this.held;
    this.held = [];
    for (const [frame, answer] of held) this.post(frame, answer);
  }

  /**
   * Reads a 2xx answer as C said: an SSE stream, one JSON message, or nothing (202).
   * @param {'sse'|'json'|'none'} kind
   * @param {string} frame the POSTed frame
   * @param {Resumable} [answer]
   * @param {string|null} [sentSession]
   */
  async readBody(res, kind, frame, answer, sentSession = null) {
    if (kind === 'sse') {
      await this.readStream(res, frame, answer);
      return;
    }
    let body;
    try {
      body = kind === 'json' ? await res.text(MAX_BODY) : await res.discard();
    } catch {
      // A broken body (an SSE stream has its own rule in readStream): with
      // no event ID to resume from, C's rule says the answer is lost, so
      // the engine answers in doubt now.
      if (kind === 'json' && answer && !answer.abort.signal.aborted && !this.closed
          && answer.sse.answerAfter(true, 0).step === 'lost') this.answerLost(answer);
      return;
    }
    if (kind === 'json') this.answered(kind, res, body, frame, sentSession);
  }

  /**
   * Reads the SSE answer to a POST; while it ends without the request's
   * answer after giving an event ID (SEP-1699: the server may close it and
   * be polled), resumes it with GET and Last-Event-ID (C's rule,
   * mcpp_http_answer_after) until the answer comes, the request is settled,
   * or the GET is refused: then the answer cannot come, so the engine
   * answers the request in doubt now (and a 404 renews the session). A
   * stream without an event ID that breaks (a server that died mid-call, a
   * proxy that cut it) is answered in doubt at once; one that ends cleanly
   * leaves the request to its deadline.
   * @param {Resumable} [answer] absent for a frame that is no request of ours
   */
  async readStream(res, frame, answer) {
    const sse = answer ? answer.sse : new binding.SseParser();
    const session = this.sessionId;
    // Whether the POSTed frame's answer came (a frame with no Resumable:
    // its answer still ends the stream).
    const seen = answer ?? { answered: false };
    const onData = (text) => {
      if (!seen.answered && frame !== undefined && binding.httpIsAnswer(frame, text)) seen.answered = true;
      this.receive(text);
    };
    let wait = 0;
    for (;;) {
      let broken = false;
      if (res) {
        try {
          // The answer ends its stream: a server that keeps it open after
          // it (a proxy's, or one that ignores the spec's SHOULD) would
          // hold a socket per request for good.
          await readSse(res.body, sse, onData, () => this.driver.touch(), () => seen.answered);
        } catch (err) {
          if (err instanceof SseTooLarge) return; // the stream is over for good
          broken = true; // reset, or cut mid-body: resumed below if it can be
        }
      }
      const { signal } = answer ? answer.abort : {};
      if (!answer || answer.answered || signal.aborted || this.closed) return;
      const next = sse.answerAfter(broken, wait);
      if (next.step === 'lost') {
        this.answerLost(answer);
        return;
      }
      if (next.step !== 'resume') return;
      try {
        await sleep(next.waitMs, undefined, { signal });
      } catch {
        return; // settled meanwhile
      }
      wait = next.waitMs;
      const headers = { ...this.headers('GET', session), [binding.httpLastEventId]: sse.lastEventId };
      try {
        res = await request(this.target, { method: 'GET', headers, signal, headersTimeoutMs: binding.httpShortTimeoutMs });
      } catch {
        res = null; // not reached (or settled meanwhile): checked above, then tried again
        continue;
      }
      if (binding.httpBodyKind('GET', res.status, res.headers.get('content-type')) !== 'sse') {
        // Refused: the answer has nowhere left to come.
        const body = (await res.text(MAX_BODY).catch(() => '')) ?? '';
        if (binding.httpClassify(res.status, body, session !== null) === 'session_expired') this.sessionExpired('', session, res.status, body);
        this.answerLost(answer);
        return;
      }
    }
  }

  /** Feeds one inbound message: the engine first, then our requests. */
  receive(text) {
    if (!this.driver.recv(text)) return;
    const answer = binding.unservedRequestAnswer(text);
    if (answer !== null) {
      // A request from the server (roots/list, sampling, elicitation): this
      // client serves none, and says so rather than leave the server waiting.
      this.driver.observeOutbound(answer);
      this.post(answer);
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
      // 2026-07-28: every request carries the _meta envelope (C writes it).
      frame = this.modern ? binding.envelope(check.json(message)) : check.json(message);
    } catch (err) {
      this.rpc.cancel(message.id); // params JSON cannot carry: nothing is left waiting
      throw err;
    }
    this.driver.observeOutbound(frame, timeoutMs);
    const answer = new Resumable(message.id);
    // Settled otherwise (timed out, closed): a resumed stream waiting for
    // an answer that will not come is cut.
    const settle = () => answer.answered || answer.abort.abort();
    promise.then(settle, settle);
    this.driver.holdUntil(promise); // its deadline holds the process (the CLI's run)
    this.post(frame, answer, direct);
    return promise;
  }

  /**
   * The engine's frame. A ping or probe the engine no longer waits for (it
   * timed out) has no answer left to come: its POST is cut, so a server
   * that takes requests and never answers holds no socket per ping.
   * @param {string} frame @param {number} kind
   */
  engineSend(frame, kind) {
    this.cutEngineRequests();
    if (kind !== binding.frameKinds.ping && kind !== binding.frameKinds.probe) {
      this.post(frame);
      return;
    }
    const request = new Resumable(undefined, frame);
    this.engineRequests.push(request);
    this.post(frame, request);
  }

  /**
   * A request's answer cannot come any more: the engine answers it in doubt
   * (an engine's own ping or probe, with no id here, is left to its timeout).
   * @param {Resumable} answer
   */
  answerLost(answer) {
    if (answer.id !== undefined && !this.closed) this.driver.failRequest(answer.id);
  }

  /** Cuts the POSTs of the engine's requests it no longer waits for (C's mcpp_engine_awaits). */
  cutEngineRequests() {
    this.engineRequests = this.engineRequests.filter((r) => this.driver.awaits(r.frame) || void r.abort.abort());
  }

  /** @param {string} method @param {boolean} [direct] sent even while the session is renewed */
  notify(method, direct = false) {
    const frame = JSON.stringify({ jsonrpc: '2.0', method });
    this.driver.observeOutbound(frame);
    return this.post(frame, undefined, direct);
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
      isTimeout: (err) => err instanceof RpcError && err.answerKind === 'timeout',
      // A POST that could not reach the server: its error is said as it is.
      isLost: () => this.connectError !== null,
      unreadable: () => this.driver.unreadable(),
      done: (o) => {
        this.serverInfo = o.serverInfo;
        this.protocolVersion = o.version;
        this.modern = o.modern;
      },
    });
    const result = out.result;
    this.opened = true;
    // Wait for the GET's answer (bounded), so `listening` is true on return.
    let timer;
    await Promise.race([this.listen(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    return result;
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
    this.stopListening();
    for (const abort of this.posts) abort.abort();
    if (this.sessionId) {
      try {
        const res = await request(this.target, {
          method: 'DELETE',
          headers: this.headers('DELETE', this.sessionId),
          signal: AbortSignal.timeout(binding.httpShortTimeoutMs),
        });
        await res.discard();
      } catch {
        // The server may be gone; nothing to clean up then.
      }
    }
    this.driver.close(binding.closedByAppReason);
    this.rpc.failAll(new ClosedError(binding.closedByAppReason));
  }
}

/**
 * One request's SSE answer across its resumptions (SEP-1699): the parser,
 * which keeps the last event ID, whether the answer came, and the abort
 * that cuts a resumed stream once the request is settled otherwise.
 */
class Resumable {
  /**
   * @param {string|undefined} id the application request's (undefined: the engine's own)
   * @param {string} [frame] the engine's own request, asked of mcpp_engine_awaits
   */
  constructor(id, frame) {
    this.id = id;
    this.frame = frame;
    this.sse = new binding.SseParser();
    this.answered = false;
    this.abort = new AbortController();
  }
}

/** An SSE line or event past the bound: the stream is over for good. */
class SseTooLarge extends Error {}

/**
 * Reads an SSE body through the C parser (mcpp_sse): onData gets each
 * event's data, onComment each comment line (": keep-alive") or event with
 * empty data: no message, but proof that the server is alive (SEP-2575's
 * transport-layer liveness). An oversize event throws SseTooLarge, as a
 * too long line ends a stdio peer.
 * @param {AsyncIterable<Uint8Array>} body
 * @param {InstanceType<typeof binding.SseParser>} sse its last event ID carries over a resumption
 * @param {(data: string) => void} onData
 * @param {() => void} [onComment]
 */
async function readSse(body, sse, onData, onComment, done = () => false) {
  const deliver = (items) => {
    for (const item of items) {
      if (item !== null) onData(item);
      else if (onComment) onComment();
    }
  };
  const parse = (fn) => {
    try {
      return fn();
    } catch (err) {
      throw new SseTooLarge(err.message);
    }
  };
  for await (const chunk of body) {
    deliver(parse(() => sse.feed(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))));
    if (done()) return; // leaving the loop destroys the body, and its socket
  }
  deliver(parse(() => sse.finish()));
}

/** @param {Error} err @returns {string} the root cause, e.g. "ECONNREFUSED" */
function describe(err) {
  let e = err;
  while (e && e.cause) e = e.cause;
  // llhttp's HPE_* parse errors: C's one cause, as Python's http.client says it.
  if (e && typeof e.code === 'string' && e.code.startsWith('HPE_')) return binding.httpNotHttpCause;
  return (e && (e.code || e.message)) || String(err);
}

module.exports = { HttpSession, readSse, describe };
