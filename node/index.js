'use strict';
/**
 * mcpping: the liveness layer for Model Context Protocol connections.
 *
 * The exports are one object literal of plain identifiers: that is the
 * shape Node's cjs-module-lexer detects, so `import { connect } from
 * 'mcpping'` works from ESM with the same objects `require` gives.
 */
const { binding } = require('./runtime');
const { Peer, connect, PROTOCOL_VERSION } = require('./peer');
const { StdioClientTransport } = require('./transport');
const { guard, GuardedTransport } = require('./guard');
const {
  McppError,
  PingTimeoutError,
  PingError,
  PingInvalidError,
  PingUnsupportedError,
  ClosedError,
} = require('./errors');
const { RpcError } = require('./rpc');
const metrics = require('./metrics');

const version = binding.version;

module.exports = {
  version,
  PROTOCOL_VERSION,
  connect,
  Peer,
  StdioClientTransport,
  guard,
  GuardedTransport,
  McppError,
  PingTimeoutError,
  PingError,
  PingInvalidError,
  PingUnsupportedError,
  ClosedError,
  RpcError,
  metrics: {
    registerPrometheus: metrics.registerPrometheus,
    instrumentOtel: metrics.instrumentOtel,
    METRICS: metrics.METRICS,
    RTT_BUCKETS: metrics.RTT_BUCKETS,
    STATES: metrics.STATES,
    FAILURE_REASONS: metrics.FAILURE_REASONS,
  },
};
