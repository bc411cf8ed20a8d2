'use strict';
/**
 * mcpping: the liveness layer for Model Context Protocol connections.
 */
const { binding } = require('./runtime');
const { Peer, connect, PROTOCOL_VERSION } = require('./peer');
const { StdioClientTransport } = require('./transport');
const { guard, GuardedTransport } = require('./guard');
const errors = require('./errors');
const { RpcError } = require('./rpc');
const metrics = require('./metrics');

module.exports = {
  version: binding.version,
  PROTOCOL_VERSION,
  connect,
  Peer,
  StdioClientTransport,
  guard,
  GuardedTransport,
  McppError: errors.McppError,
  PingTimeoutError: errors.PingTimeoutError,
  PingError: errors.PingError,
  PingInvalidError: errors.PingInvalidError,
  PingUnsupportedError: errors.PingUnsupportedError,
  ClosedError: errors.ClosedError,
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
