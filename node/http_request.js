'use strict';
/**
 * The one part of fetch() that http_session.js uses, on node:http.
 *
 * Node's fetch() refuses the WHATWG "bad ports" (6000, 6665-6669, 10080,
 * ...) before it connects: a browser rule that made an MCP server on such a
 * port unreachable from Node while the Python command pinged it.
 */
const http = require('node:http');
const https = require('node:https');

/** Response headers, read as fetch's Headers#get reads them. */
class ResponseHeaders {
  /** @param {import('node:http').IncomingHttpHeaders} raw */
  constructor(raw) {
    this.raw = raw;
  }

  /** @param {string} name @returns {string|null} */
  get(name) {
    const v = this.raw[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(', ') : v;
  }
}

/**
 * @param {{https: boolean, host: string, port: number, target: string}} url the parts C's
 *   httpUrl made of the URL (no second parser here: WHATWG's refuses hosts C takes)
 * @param {{method?: string, headers?: Record<string, string>, body?: string, signal?: AbortSignal,
 *   connectTimeoutMs?: number, headersTimeoutMs?: number}} [init] connectTimeoutMs: how long
 *   a new connection (TLS included) may take to open; headersTimeoutMs: how long the connect
 *   and the response's headers may take (the body is unbounded); past either the request
 *   fails with an ETIMEDOUT error
 * @returns {Promise<{status: number, headers: ResponseHeaders, body: import('node:http').IncomingMessage}>}
 *   rejects with the socket's error (err.code: ECONNREFUSED...) or the signal's reason
 */
function request(url, init = {}) {
  return once(url, init).catch((err) => {
    // A kept-alive socket the server had already closed (its idle timeout
    // ran out as the request went): the request never reached it, so it
    // goes once more on a new connection, as Node's docs advise (and
    // Python's http.py does with its kept-alive connections). Not another
    // kept-alive one: the server may have closed those too.
    if (err && err.code === 'ECONNRESET' && err.reusedSocket) return once(url, init, false);
    throw err;
  });
}

/**
 * One attempt of request().
 * @param {false} [agent] false: on a connection of its own, not the agent's
 */
function once(url, init, agent) {
  const { method = 'GET', body, signal, connectTimeoutMs, headersTimeoutMs } = init;
  return new Promise((resolve, reject) => {
    const client = url.https ? https : http;
    const headers = { ...init.headers };
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const options = { hostname: url.host, port: url.port, path: url.target, method, headers, agent };
    const req = client.request(options, (res) => {
      const status = res.statusCode ?? 0;
      resolve({ status, headers: new ResponseHeaders(res.headers), body: res });
    });
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    if (headersTimeoutMs !== undefined) {
      // A server (or proxy) that takes the request and never answers it
      // would hold the caller for good: its headers get a bound.
      bound(req, headersTimeoutMs, 'no response headers', (done) => req.once('response', done));
    }
    if (connectTimeoutMs !== undefined) {
      // A host that drops our SYNs would hold the request for the kernel's
      // retries (about two minutes on Linux); a kept-alive socket is open.
      req.once('socket', (socket) => {
        if (socket.connecting) bound(req, connectTimeoutMs, 'no connection', (done) => socket.once(url.https ? 'secureConnect' : 'connect', done));
      });
    }
    if (signal) {
      // Not node:http's own signal option: it destroys the socket even when
      // the answer is complete and the socket back in the agent's pool,
      // where nothing listens for the error. Only what still waits is cut.
      const cut = () => {
        if (!req.res || !req.res.complete) req.destroy(signal.reason);
      };
      if (signal.aborted) cut();
      else {
        signal.addEventListener('abort', cut, { once: true });
        req.once('close', () => signal.removeEventListener('abort', cut));
      }
    }
    req.end(body);
  });
}

/**
 * Destroys req with an ETIMEDOUT error unless `until` reports, within ms, what it waits for.
 * @param {import('node:http').ClientRequest} req @param {number} ms @param {string} what
 * @param {(done: () => void) => void} until
 */
function bound(req, ms, what, until) {
  const timer = setTimeout(() => req.destroy(Object.assign(new Error(`${what} after ${ms} ms`), { code: 'ETIMEDOUT' })), ms);
  const done = () => clearTimeout(timer);
  until(done);
  req.once('close', done);
}

module.exports = { request };
