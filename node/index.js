'use strict';
/**
 * mcpping: the liveness layer for Model Context Protocol connections.
 *
 * The exports are one object literal of plain identifiers (no `a: b.c`,
 * no nested literal): that is the shape Node's cjs-module-lexer detects, so `import { connect } from
 * 'mcpping'` works from ESM with the same objects `require` gives.
 */
const { binding, runtimeMode, hostStats } = require('./runtime');
const { Peer, connect, PROTOCOL_VERSION } = require('./peer');
const { StdioClientTransport } = require('./transport');
const { guard, GuardedTransport } = require('./guard');
const { instrument, uninstrument, instrumentedTransports } = require('./instrument');
const { SessionReaper } = require('./reaper');
const {
  McppError,
  PingTimeoutError,
  PingError,
  PingInvalidError,
  PingUnsupportedError,
  ClosedError,
  RequestInDoubtError,
} = require('./errors');
const { RpcError } = require('./rpc');
const fleet = require('./metrics');
const check = require('./validate');

// A plain identifier below, not an inline object: the lexer skips those.
const metrics = {
  registerPrometheus: fleet.registerPrometheus,
  instrumentOtel: fleet.instrumentOtel,
  exposition: fleet.exposition,
  METRICS: fleet.METRICS,
  RTT_BUCKETS: fleet.RTT_BUCKETS,
  STATES: fleet.STATES,
  FAILURE_REASONS: fleet.FAILURE_REASONS,
  PROBE_RESULTS: fleet.PROBE_RESULTS,
};

const version = binding.version;

/**
 * Sets the retry budget every reconnecting connection of this process
 * shares: at most `burst` servers respawned at once, then `perSecond`.
 * @param {{burst?: number, perSecond?: number}} [budget] defaults 10 and 2
 */
function setRetryBudget(budget) {
  const { burst, perSecond } = check.retryBudget(budget);
  binding.setRetryBudget(burst, perSecond);
}

module.exports = {
  version,
  PROTOCOL_VERSION,
  connect,
  Peer,
  StdioClientTransport,
  guard,
  GuardedTransport,
  instrument,
  uninstrument,
  instrumentedTransports,
  SessionReaper,
  McppError,
  PingTimeoutError,
  PingError,
  PingInvalidError,
  PingUnsupportedError,
  ClosedError,
  RequestInDoubtError,
  RpcError,
  metrics,
  setRetryBudget,
  runtimeMode,
  hostStats,
};
