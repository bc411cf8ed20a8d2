'use strict';
/**
 * mcpping: the liveness layer for Model Context Protocol connections.
 *
 * The exports are one object literal of plain identifiers (no `a: b.c`,
 * no nested literal): that is the shape Node's cjs-module-lexer detects, so `import { connect } from
 * 'mcpping'` works from ESM with the same objects `require` gives.
 */
const { binding } = require('./runtime');
const { Peer, connect, PROTOCOL_VERSION } = require('./peer');
const { StdioClientTransport } = require('./transport');
const { guard, GuardedTransport } = require('./guard');
const { SessionReaper } = require('./reaper');
const {
  McppError,
  PingTimeoutError,
  PingError,
  PingInvalidError,
  PingUnsupportedError,
  ClosedError,
} = require('./errors');
const { RpcError } = require('./rpc');
const fleet = require('./metrics');

// A plain identifier below, not an inline object: the lexer skips those.
const metrics = {
  registerPrometheus: fleet.registerPrometheus,
  instrumentOtel: fleet.instrumentOtel,
  METRICS: fleet.METRICS,
  RTT_BUCKETS: fleet.RTT_BUCKETS,
  STATES: fleet.STATES,
  FAILURE_REASONS: fleet.FAILURE_REASONS,
};

const version = binding.version;

module.exports = {
  version,
  PROTOCOL_VERSION,
  connect,
  Peer,
  StdioClientTransport,
  guard,
  GuardedTransport,
  SessionReaper,
  McppError,
  PingTimeoutError,
  PingError,
  PingInvalidError,
  PingUnsupportedError,
  ClosedError,
  RpcError,
  metrics,
};
