'use strict';
/**
 * The client handshake, run by the C machine (mcpp_client_hs: initialize,
 * the server/discover fallback for 2026-07-28, era detection and every
 * sentence); this only carries its requests and answers and keeps its
 * clock. Used by the stdio Peer and the Streamable HTTP session alike.
 */
const { binding } = require('./runtime');
const { McppError, RequestInDoubtError } = require('./errors');
const { RpcError } = require('./rpc');

/**
 * @param {{request: (method: string, params: object, timeoutMs: number) => Promise<object>,
 *   notify: (method: string) => unknown, timeoutMs: number,
 *   isTimeout: (err: unknown) => boolean, isLost: (err: unknown) => boolean,
 *   done: (out: object) => void,
 *   closedWhy?: (err: unknown) => Promise<[string|null, number, number]|null>,
 *   unreadable?: () => string|null}} io
 *   request resolves with a result or rejects (an RpcError is an answer);
 *   isLost: the connection is gone (the error is passed on as it is,
 *   unless closedWhy tells how it ended: then C words the close);
 *   done: takes the session before the notification is sent;
 *   notify: what it returns (a POST's end) is awaited, within timeoutMs;
 *   unreadable: what the server wrote instead, added to a timeout's sentence
 * @returns {Promise<{version: string, modern: boolean, serverName: string,
 *   serverInfo: object|null, result: object}>}
 */
async function runHandshake(io) {
  const hs = new binding.ClientHandshake(io.timeoutMs);
  const end = Date.now() + io.timeoutMs;
  let req;
  while ((req = hs.request()) !== null) {
    const [id, text] = req;
    const msg = JSON.parse(text);
    const left = io.timeoutMs === 0 ? 0 : Math.max(1, end - Date.now());
    try {
      const result = await io.request(msg.method, msg.params, left);
      hs.answer(JSON.stringify({ jsonrpc: '2.0', id, result }));
    } catch (err) {
      if (io.isTimeout(err)) hs.timedOut(io.unreadable ? io.unreadable() : null);
      // The server failed under the request (a stream cut mid-answer, a
      // process that died and was started again): no refusal.
      else if (err instanceof RequestInDoubtError) hs.closed(null, -1, 0);
      else if (io.isLost(err) || !(err instanceof RpcError)) {
        const why = io.closedWhy ? await io.closedWhy(err) : null;
        if (why === null) throw err;
        hs.closed(...why);
      }
      else hs.answer(JSON.stringify({ jsonrpc: '2.0', id, error: { code: err.code, message: err.message } }));
    }
  }
  const out = hs.outcome();
  if (out.state !== 'done') {
    const err = new McppError(out.error, { code: 'HANDSHAKE' });
    err.kind = out.kind; // timed_out, refused, version_mismatch, closed, malformed
    throw err;
  }
  out.result = JSON.parse(out.result);
  out.serverInfo = out.serverInfo ? JSON.parse(out.serverInfo) : null;
  // The session is known before the notification goes (its headers name it).
  io.done(out);
  const note = hs.notification();
  if (note !== null) {
    // A POST is through before the session is used, within the handshake's
    // time: sent, its answer may still come after.
    const sent = io.notify(JSON.parse(note).method);
    let timer;
    const left = io.timeoutMs === 0 ? sent // no bound, as for the requests
      : new Promise((resolve) => (timer = setTimeout(resolve, Math.max(1, end - Date.now()))));
    await Promise.race([sent, left]);
    clearTimeout(timer);
  }
  return out;
}

module.exports = { runHandshake };
