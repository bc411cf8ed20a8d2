'use strict';
/**
 * User code (listeners, record sinks, SDK callbacks) runs inside mcpping's
 * delivery of a batch, and sometimes inside a native engine call. What it
 * throws must not lose the rest of the batch, another connection's
 * outcome or a close, and must not vanish either. The Node convention:
 * the error goes to the object's 'error' event if it has a listener, else
 * (a transport) to its `onerror` callback, else it is thrown again from a
 * fresh tick, where it is an 'uncaughtException', once delivery is done.
 */

/**
 * Reports an error from user code on `target`.
 * @param {import('node:events').EventEmitter & {onerror?: Function}} target
 * @param {unknown} err
 */
function reportError(target, err) {
  if (target.listenerCount('error') > 0) {
    try {
      target.emit('error', err);
      return;
    } catch (thrown) {
      err = thrown;
    }
  } else if (typeof target.onerror === 'function') {
    try {
      target.onerror(err instanceof Error ? err : new Error(String(err)));
      return;
    } catch (thrown) {
      err = thrown;
    }
  }
  process.nextTick(() => {
    throw err;
  });
}

/**
 * Calls user code; a throw or a rejected promise it returns is reported on
 * `target` instead of propagating.
 * @param {object} target where errors are reported (see reportError)
 * @param {Function} fn
 * @param {object} self `this` for fn
 * @param {unknown[]} args
 */
function callUser(target, fn, self, args) {
  try {
    const result = Reflect.apply(fn, self, args);
    if (result && typeof result.then === 'function') {
      result.then(undefined, (err) => reportError(target, err));
    }
  } catch (err) {
    reportError(target, err);
  }
}

/**
 * emitter.emit(name, ...args), each listener isolated: one that throws
 * does not skip the ones after it.
 * @param {import('node:events').EventEmitter} emitter
 * @param {string} name never 'error'
 * @param {...unknown} args
 * @returns {boolean} whether there were listeners
 */
function emitSafely(emitter, name, ...args) {
  // rawListeners keeps once() wrappers, which remove themselves when called.
  const listeners = emitter.rawListeners(name);
  for (const fn of listeners) callUser(emitter, fn, emitter, args);
  return listeners.length > 0;
}

/**
 * Wraps a record sink so a sink that throws (a full disk, a throwing
 * callback) is reported on `target` and the records after it still go out.
 * @param {{write: (json: string) => void, close: () => void}} sink
 * @param {object} target
 */
function guardSink(sink, target) {
  return {
    write(json) {
      callUser(target, sink.write, sink, [json]);
    },
    close() {
      callUser(target, sink.close, sink, []);
    },
  };
}

module.exports = { reportError, callUser, emitSafely, guardSink };
