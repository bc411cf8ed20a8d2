// Type declarations for mcpping, the liveness layer for Model Context
// Protocol connections. The Transport shapes below match the official
// @modelcontextprotocol/sdk `Transport` interface structurally, so the SDK
// is not needed to use these types.

import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';

export const version: string;
/** The protocol version mcpping offers in `initialize`. */
export const PROTOCOL_VERSION: string;

/** Liveness state of a connection. */
export type State = 'alive' | 'suspect' | 'stale' | 'closed';

/** Keepalive and timing settings (all optional). */
export interface KeepaliveOptions {
  /** A ping after this long without any inbound byte; 0 turns keepalive off. Default 15000 (the C settings table's policy, as in Python and `mcpping wrap`); only an intervalMs given here keeps the process alive. */
  intervalMs?: number;
  /** Per-ping timeout for keepalive pings and the default for manual ones. Default 5000. */
  timeoutMs?: number;
  /** Consecutive failed keepalive pings that make the peer stale. Default 3. */
  failures?: number;
  /** Each keepalive ping may fire up to this percent early. Default 10. */
  jitterPct?: number;
  /** Floor on intervalMs (default 1000, never below 10); see clampInterval. */
  minIntervalMs?: number;
  /** Raise a too-short interval to the floor instead of failing. */
  clampInterval?: boolean;
  /** A wake-up later than this past its deadline means the host was paused. Default 1000. */
  pauseThresholdMs?: number;
  /** Timeout for the application's own requests; 0 (default) leaves them alone. */
  requestTimeoutMs?: number;
  /** What to do when the peer goes stale: close it (default, killing the server) or only report. */
  onStale?: 'close' | 'report';
  /** Manual pings outstanding at once. Default 1024. */
  maxOutstandingPings?: number;
  /** Longest accepted stdio line. Default 64 MiB. */
  maxLineBytes?: number;
}

/** One governance record (docs/design.md); unknown values are null. */
export interface GovernanceRecord {
  ts: string;
  event:
    | 'ping_ok' | 'ping_timeout' | 'ping_error' | 'ping_invalid' | 'ping_unsupported'
    | 'ping_answered' | 'suspect' | 'stale' | 'recovered' | 'reconnect' | 'closed'
    | 'probe_ok' | 'probe_error' | 'probe_timeout';
  direction: 'outbound' | 'inbound' | null;
  sender: 'client' | 'server' | null;
  receiver: 'client' | 'server' | null;
  peer: string | null;
  session_id: string | null;
  protocol_version: string | null;
  transport: 'stdio' | 'streamable-http' | 'custom' | null;
  ping_id: string | null;
  timeout_ms: number | null;
  latency_ms: number | null;
  failure_count: number | null;
  reconnect_attempt: number | null;
  in_flight: { count: number; disposition: Disposition } | null;
  /** The proof of life (or the missing one) behind this record: 'traffic', 'ping', 'probe:<method>', 'process'. */
  proof: Proof | null;
}

/** A kind of proof of life; 'probe:<method>' names the idle probe's method. */
export type Proof = 'traffic' | 'ping' | 'process' | `probe:${string}`;

/**
 * The idle probe keepalive sends on sessions without ping (2026-07-28, or a
 * server that refuses ping): 'auto' (default: server/discover on 2026-07-28,
 * tools/list where ping is refused), a method name, or null/'' for none.
 */
export type ProbeOption = 'auto' | string | null;

/** Where governance records go: a JSONL file path (appended), a callback, or a writable stream. */
export type RecordTarget = string | ((record: GovernanceRecord) => void) | { write(chunk: string): unknown };

export type Disposition = 'continued' | 'cancelled' | 'in_doubt';

/** An engine event, as emitted under its `type`. */
export interface LivenessEvent {
  type:
    | 'ping' | 'pong' | 'timeout' | 'ping_error' | 'unsupported' | 'ping_answered'
    | 'suspect' | 'stale' | 'recovered' | 'closed' | 'request_timeout' | 'initialized'
    | 'probe' | 'probe_ok' | 'probe_timeout' | 'request_cancelled'
    | 'reconnecting' | 'reconnected' | 'ping_deaf' | 'busy' | 'paused';
  /** The state after this event. */
  state: State;
  pingSeq: number;
  /** True for a manual ping, false for keepalive. */
  manual: boolean;
  /** Pong round-trip time in µs, measured on the native side. */
  rttUs: number;
  timeoutMs: number;
  /**
   * The peer's JSON-RPC error code: ping_error, unsupported, and a probe_ok
   * answered with an error; 0 otherwise. Never an MCPP_ERR_* code.
   */
  rpcCode: number;
  /**
   * Our own MCPP_ERR_* code (negative): closed (why we closed; 0 for a
   * requested close), timeout (MCPP_ERR_CLOSED when the close abandoned the
   * ping); 0 otherwise. Never a JSON-RPC code.
   */
  error: number;
  /** The one of rpcCode and error this event type carries (0 if none). */
  errorCode: number;
  invalid: boolean;
  message: string | null;
  /** Raw JSON text of the ping's (or request's) id. */
  id: string | null;
  failureCount: number;
  inFlight: number;
  disposition: Disposition;
  /**
   * The proof of life, or the missing one, that decided a state change
   * (suspect, stale, recovered); what a ping or probe outcome proves.
   * null where none applies.
   */
  proof: Proof | null;
  /**
   * How a ping ended, on its final event (the C core's verdict): 'closed'
   * means abandoned because the connection closed, never a timeout, and
   * not lost. null on other events.
   */
  outcome: 'pong' | 'timeout' | 'error' | 'invalid' | 'unsupported' | 'closed' | null;
  /** reconnecting, reconnected: the attempt, 1 for the first after a failure. */
  attempt?: number;
  /** reconnecting: the wait before the attempt, ms (backoff and retry budget). */
  delayMs?: number;
  /** reconnected: the new server's process id. */
  pid?: number;
}

/**
 * Respawn a stdio server that went stale, exited or closed its pipes.
 * Requests in flight then reject with RequestInDoubtError (never sent
 * again); the first initialize is replayed (its answer not delivered
 * again), then notifications/initialized; messages sent meanwhile wait (a
 * request's timeoutMs runs while it waits: past it, the -32001 timeout
 * error, and it is never sent).
 * `true` takes every default.
 */
export interface ReconnectOptions {
  /** The first delay, ms: 1..2147483647, default 1000. */
  initialMs?: number;
  /** The longest delay, ms: initialMs..2147483647, default 30000. */
  maxDelayMs?: number;
  /** Each delay is the previous one's times this: 1..1000, default 2. */
  multiplier?: number;
  /** Each delay is spread over delay * [1 - jitter, 1 + jitter]: 0..1, default 0.2. */
  jitter?: number;
  /** Failed attempts in a row before the connection closes: 1..1000000, default 10. */
  maxAttempts?: number;
}

/** Why and how a stdio connection ended. */
export interface CloseInfo {
  /** MCPP_ERR_* name (e.g. "MCPP_ERR_STALE"), null for a requested close. */
  error: string | null;
  reason: string;
  /** The server's exit status, -1 if killed by a signal or unknown. */
  exitStatus: number;
  termSignal: number;
  /** Application requests that were awaiting answers, and what became of them. */
  inFlight: number;
  disposition: Disposition;
}

/** Counters and state from the engine, plus RTT figures. */
export interface Stats {
  state: State;
  healthy: boolean;
  unsupported?: boolean;
  initialized?: boolean;
  protocolVersion?: string | null;
  peerName?: string | null;
  failureCount?: number;
  inFlight?: number;
  oldestInFlightUs?: number;
  appTimeouts?: number;
  lastRxUs?: number;
  pingsSent?: number;
  pongsReceived?: number;
  pingTimeouts?: number;
  pingErrors?: number;
  pingsAnswered?: number;
  framesIn?: number;
  framesOut?: number;
  /** Proof of life: when the engine last had each kind (monotonic µs, 0: never). */
  lastTrafficUs?: number;
  lastPingUs?: number;
  lastProbeUs?: number;
  lastProcessUs?: number;
  /** The latest kind of proof, null before any. */
  freshestProof?: 'traffic' | 'ping' | 'probe' | 'process' | null;
  /** The idle probe keepalive sends now (engine-driven sessions; null over stdio). */
  probeMethod?: string | null;
  /** The stdio server process as last observed. */
  processState?: 'unknown' | 'running' | 'stopped' | 'exited';
  /** False while mcpping has stopped reading (backpressure). */
  reading?: boolean;
  probesSent?: number;
  probesAnswered?: number;
  probeTimeouts?: number;
  appCancels?: number;
  /** RTT figures over this connection's pongs, manual and keepalive. */
  rtt: RttSummary;
  /** Lost (timeouts and errors) of the pings that finished, in percent; 0 before any. */
  lossPct: number;
}

/**
 * Round-trip times in ms; null before the first pong. min/avg/max/mdev cover
 * every pong; p50/p99 (nearest rank) cover the most recent 10,000.
 */
export interface RttSummary {
  /** Pongs received. */
  count: number;
  minMs: number | null;
  avgMs: number | null;
  maxMs: number | null;
  /** Standard deviation, as ping(8) prints it. */
  mdevMs: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface PingOptions {
  /**
   * An integer 1..2147483647 ms; default keepalive.timeoutMs, else 5000.
   * Anything else throws a RangeError/TypeError with code ERR_MCPPING_INVALID_ARG.
   */
  timeoutMs?: number;
  /** Aborting rejects the ping with the signal's reason. */
  signal?: AbortSignal;
}

export interface ServerParams {
  /** Program, looked up in PATH. */
  command: string;
  args?: string[];
  /** Added to the inherited environment. */
  env?: Record<string, string>;
  cwd?: string;
  /** The server's stderr: ours (default), delivered as 'stderr' events / a stream, or dropped. */
  stderr?: 'inherit' | 'pipe' | 'ignore';
  /** SIGTERM-to-SIGKILL grace on close, ms: 1..2147483647, default 2000; 0: SIGKILL at once, no SIGTERM. */
  killGraceMs?: number;
}

export interface ConnectOptions {
  keepalive?: KeepaliveOptions;
  records?: RecordTarget;
  /** Perform the MCP handshake (default true). */
  initialize?: boolean;
  /** Default 30000. */
  initializeTimeoutMs?: number;
  /** Pass our whole environment (default true); false passes the SDK's safe subset. */
  inheritEnv?: boolean;
  /** The idle probe on sessions without ping. */
  probe?: ProbeOption;
  /** Backpressure per connection, bytes (default 16 MiB). */
  maxPendingBytes?: number;
  /** The longest line accepted from the server, bytes (default 64 MiB). */
  maxLineBytes?: number;
  /** Respawn a server that fails (default off). */
  reconnect?: ReconnectOptions | boolean;
}

export interface LivenessEvents {
  ping: [LivenessEvent];
  pong: [LivenessEvent];
  timeout: [LivenessEvent];
  ping_error: [LivenessEvent];
  unsupported: [LivenessEvent];
  ping_answered: [LivenessEvent];
  suspect: [LivenessEvent];
  stale: [LivenessEvent];
  recovered: [LivenessEvent];
  request_timeout: [LivenessEvent];
  initialized: [LivenessEvent];
  probe: [LivenessEvent];
  probe_ok: [LivenessEvent];
  probe_timeout: [LivenessEvent];
  request_cancelled: [LivenessEvent];
  reconnecting: [LivenessEvent];
  reconnected: [LivenessEvent];
  record: [GovernanceRecord];
}

/**
 * What Peer, StdioClientTransport and GuardedTransport have alike; Closed
 * is what their 'closed' event carries. A declaration only: not exported,
 * and no class of that name at run time.
 */
declare class Watched<Closed> extends EventEmitter {
  readonly state: State;
  readonly stats: Stats;
  /** Resolves with the RTT in ms. */
  ping(options?: PingOptions): Promise<number>;
  on<K extends keyof LivenessEvents>(event: K, listener: (...args: LivenessEvents[K]) => void): this;
  on(event: 'closed', listener: (info: Closed) => void): this;
  /** What a listener, record sink or callback threw (without a listener: onerror, else an uncaughtException). */
  on(event: 'error', listener: (error: unknown) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

/** An MCP server over stdio, watched by mcpping. Create with connect(). */
export class Peer extends Watched<CloseInfo> {
  constructor(params: ServerParams, options?: ConnectOptions);
  readonly id: number;
  /** The server's process id (its process group id too); null once closed. */
  readonly pid: number | null;
  /** serverInfo.name once the handshake is done. */
  readonly name: string | null;
  serverInfo: { name: string; version?: string; [k: string]: unknown } | null;
  protocolVersion: string | null;
  capabilities: Record<string, unknown> | null;
  closeInfo: CloseInfo | null;
  /** Timed by the engine: past timeoutMs (0 (none of its own) or 1..2147483647, default 30000, C's MCPP_REQUEST_TIMEOUT_MS) notifications/cancelled goes out and this rejects with an RpcError (code -32001); an abort through signal does the same and rejects with its reason. */
  request(method: string, params?: object, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<unknown>;
  /** One JSON-RPC message as it is (an object, or its JSON text on one line): the answer to a 'request' event, say. Waits in order while the server does not keep up; never dropped. */
  send(message: object | string): void;
  notify(method: string, params?: object): void;
  /**
   * The handshake: initialize, or, when the server refuses it, server/discover
   * (a 2026-07-28 session, which has no ping); the C core's handshake.
   * Rejects with McppError code 'HANDSHAKE' (one sentence from C; `kind`).
   */
  initialize(options?: { timeoutMs?: number }): Promise<unknown>;
  /** Terminates and reaps the server's process group. */
  close(): Promise<CloseInfo>;
  /** Keep the process alive while keepalive runs (the default with keepalive). */
  ref(): this;
  /** Let the process exit although keepalive runs. */
  unref(): this;

  on<K extends keyof LivenessEvents>(event: K, listener: (...args: LivenessEvents[K]) => void): this;
  on(event: 'closed', listener: (info: CloseInfo) => void): this;
  on(event: 'message', listener: (message: JsonRpcMessage) => void): this;
  on(event: 'request', listener: (request: JsonRpcMessage) => void): this;
  /** A server line that is not JSON, as received. */
  on(event: 'invalid_message', listener: (text: string) => void): this;
  on(event: 'stderr', listener: (chunk: Buffer) => void): this;
  /** What a listener or record sink of this peer threw (else it is an uncaughtException). */
  on(event: 'error', listener: (error: unknown) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  once<K extends keyof LivenessEvents>(event: K, listener: (...args: LivenessEvents[K]) => void): this;
  once(event: 'closed', listener: (info: CloseInfo) => void): this;
  once(event: string | symbol, listener: (...args: any[]) => void): this;
}

/** Spawns a stdio MCP server, performs the handshake, starts keepalive if asked. */
export function connect(params: ServerParams, options?: ConnectOptions): Promise<Peer>;

/** A JSON-RPC 2.0 message, as the SDK's JSONRPCMessage. */
export type JsonRpcMessage = { jsonrpc: '2.0'; [key: string]: unknown };

/** The SDK's Transport interface, structurally (loose, so every SDK transport fits). */
export interface Transport {
  start(): Promise<void>;
  send(message: any, options?: any): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  sessionId?: string | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
}

/**
 * The SDK's StdioClientTransport, with pings answered and timed in C.
 * `client.connect(new StdioClientTransport(params))` works unchanged. An
 * open transport keeps the process alive, as the SDK's does; unref() opts out.
 */
export class StdioClientTransport extends Watched<CloseInfo> implements Transport {
  constructor(params: ServerParams, options?: StdioClientTransportOptions);
  start(): Promise<void>;
  send(message: JsonRpcMessage): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  sessionId?: string | undefined;
  /** The version the SDK negotiated, once it called setProtocolVersion (the Vercel AI SDK's MCPTransport reads it). */
  protocolVersion?: string | undefined;
  setProtocolVersion(version: string): void;
  /** The server's stderr when params.stderr is 'pipe'. */
  readonly stderr: PassThrough | null;
  /** The server's process id; null before start and once closed. */
  readonly pid: number | null;
  /** The engine's live counters, state and the session learned from the handshake (protocolVersion, peerName); null before start and once closed. */
  info(): Omit<Stats, 'rtt' | 'lossPct'> | null;
  ref(): this;
  unref(): this;
}

/** StdioClientTransport's options. */
export interface StdioClientTransportOptions {
  keepalive?: KeepaliveOptions;
  records?: RecordTarget;
  probe?: ProbeOption;
  /** The engine's deadline for every request the SDK sends (0 or absent: none). */
  requestTimeoutMs?: number;
  /** Backpressure per connection, bytes (default 16 MiB). */
  maxPendingBytes?: number;
  /** Respawn a server that fails, under the same Client (default off). */
  reconnect?: ReconnectOptions | boolean;
}

/** The options of instrument(): StdioClientTransport's, plus where to find the SDK. */
export interface InstrumentOptions extends StdioClientTransportOptions {
  /** More directories to resolve the SDK from (default: the main module's, the current directory, mcpping's). */
  paths?: string[];
}

/**
 * Makes the SDK's CommonJS StdioClientTransport exports
 * (`@modelcontextprotocol/sdk/client/stdio.js`, `@modelcontextprotocol/client/stdio`)
 * build mcpping's transport with these options, so that frameworks loaded
 * with require() (LangChain's MultiServerMCPClient, the OpenAI Agents SDK's
 * MCPServerStdio) go through mcpping. ES module namespaces cannot be
 * patched. Idempotent; returns the module files patched.
 */
export function instrument(options?: InstrumentOptions): string[];
/** Restores the SDK's own StdioClientTransport; open transports stay as they are. */
export function uninstrument(): void;
/** The open transports made while instrumented. */
export function instrumentedTransports(): StdioClientTransport[];

/** Any SDK Transport wrapped with the mcpping engine; itself a Transport. */
export class GuardedTransport extends Watched<LivenessEvent> implements Transport {
  constructor(inner: Transport, options?: GuardOptions);
  readonly inner: Transport;
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: { relatedRequestId?: string | number; [k: string]: unknown }): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  readonly sessionId: string | undefined;
  setProtocolVersion(version: string): void;
}

export interface GuardOptions {
  /** Our role on this transport (default 'client'). */
  role?: 'client' | 'server';
  keepalive?: KeepaliveOptions;
  records?: RecordTarget;
  /** Printed in records; guessed from the inner transport's class by default. */
  transport?: 'stdio' | 'streamable-http' | 'custom';
  /** The peer's name for records until serverInfo/clientInfo is learned. */
  peerName?: string;
  /** The idle probe on sessions without ping. */
  probe?: ProbeOption;
}

export interface SessionReaperOptions {
  /** Each session's keepalive (default intervalMs 15000, timeoutMs 5000, failures 3, onStale 'close'). */
  keepalive?: KeepaliveOptions;
  /** Every session's governance records, each naming its session_id. */
  records?: RecordTarget;
  /** How long a new client has to open its GET listening stream before it is 'unsupported' (default intervalMs + timeoutMs × failures). */
  streamGraceMs?: number;
}

/** The server role over Streamable HTTP: pings each client session, closes the stale ones. */
export class SessionReaper extends EventEmitter {
  constructor(options?: SessionReaperOptions);
  /** The sessions watched now, by session id. */
  readonly sessions: Map<string, GuardedTransport>;
  /** How many sessions it closed because their client went stale. */
  readonly reaped: number;
  /** Wraps a StreamableHTTPServerTransport in a guard in the server role; give it to server.connect(). */
  watch(transport: Transport & { handleRequest(...args: any[]): Promise<void> }): GuardedTransport;
  on(event: keyof LivenessEvents | 'closed' | 'record', listener: (sessionId: string | null, event: any) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

/** Wraps an SDK Transport (Streamable HTTP included) with the engine, in either role. */
export function guard(transport: Transport, options?: GuardOptions): GuardedTransport;

/**
 * Every mcpping error. `code` names what failed: 'HANDSHAKE' (connect's
 * initialize), 'PARSE' (a server line
 * that is not JSON-RPC, reported through onerror), 'PING_TIMEOUT',
 * 'PING_INVALID', 'PING_UNSUPPORTED', an MCPP_ERR_* name, or, on the
 * subclasses below, a JSON-RPC error code.
 */
export class McppError extends Error {
  code?: string | number;
  errno?: number;
  /** On a failed handshake (code 'HANDSHAKE'), why, as the C core names it. */
  kind?: 'timed_out' | 'refused' | 'version_mismatch' | 'closed' | 'malformed';
}
/** The peer answered peer.request() with a JSON-RPC error. */
export class RpcError extends McppError {
  code: number;
  data?: unknown;
  /** null: the server's answer; else mcpping's own: 'timeout' (code -32001) or 'abandoned' (-32800). */
  answerKind: 'timeout' | 'abandoned' | null;
}
/** No answer within the ping's timeout. */
export class PingTimeoutError extends McppError {
  timeoutMs: number;
}
/** The peer answered with a JSON-RPC error; `code` is its code. */
export class PingError extends McppError {
  code: number;
  /** The peer's own message (`message` is C's sentence: `code=-32000 busy`). */
  rpcMessage: string;
}
/** The pong's result was missing or not an object. */
export class PingInvalidError extends McppError {}
/** The peer does not support ping; the connection stays usable. */
export class PingUnsupportedError extends McppError {
  rpcCode: number | null;
  rpcMessage: string;
}
/** The connection is closed or closing. */
export class ClosedError extends McppError {}
/** The server failed while this request was in flight (reconnect); it is never sent again. */
export class RequestInDoubtError extends McppError {
  method: string;
  /** 'in_doubt': it may have run; 'cancelled': it has no side effects. */
  disposition: 'in_doubt' | 'cancelled';
  /** The engine's answer to the request: its JSON-RPC code (-32003) and sentence. */
  rpcCode: number | null;
  rpcMessage: string;
}

/** The retry budget every reconnecting connection of this process shares (defaults 10 at once, then 2 per second). */
export function setRetryBudget(budget?: { burst?: number; perSecond?: number }): void;

/** How this JavaScript environment's native runtime runs its connections. */
export interface RuntimeMode {
  /**
   * 'host': this environment's libuv loop runs the runtime's loop (a ping
   * costs no thread hop) and the runtime's thread answers the server's
   * pings only while the JavaScript thread is busy; 'thread': the runtime's
   * own thread runs everything (MCPPING_HOST_MODE=0).
   */
  mode: 'host' | 'thread';
  /** One line saying why, e.g. "thread mode: MCPPING_HOST_MODE=0 is set". */
  why: string;
}
/** The mode of this environment's runtime (creates the runtime if no connection has yet). */
export function runtimeMode(): RuntimeMode;

/** Host mode's counters for this environment, for tests and benchmarks (all 0 in thread mode). */
export interface HostStats {
  /** Times the runtime's thread took the loop over from a busy JavaScript thread. */
  takeovers: number;
  /** Turns of the runtime's loop on the JavaScript thread, inline commands included. */
  hostTurns: number;
  /** Commands (send, ping, close, ...) run inside the call on the JavaScript thread. */
  inlineCommands: number;
  /** Reads of a connection's stdout by the JavaScript thread itself (its own poll on the fd, no turn of the runtime's loop). */
  hostReads: number;
}
export function hostStats(): HostStats;

/** A metric's type and help text, as exported. */
export type MetricKind = 'counter' | 'histogram' | 'gauge';

/**
 * Prometheus and OpenTelemetry figures for every connection of this process
 * (docs/node.md "Metrics"). Labels: peer, transport (and reason, state, le).
 */
export const metrics: {
  /**
   * Registers mcpping's nine metrics with a prom-client Registry (default:
   * prom-client's global `register`); they read the tally at each scrape.
   * Throws McppError code 'ERR_MCPPING_MISSING_PACKAGE' without prom-client,
   * 'ERR_MCPPING_DUPLICATE_METRIC' if the registry has them already.
   * Returns the registered metric objects.
   */
  registerPrometheus(register?: unknown): object[];
  /**
   * Creates mcpping's instruments on an OpenTelemetry MeterProvider
   * (default: the global one). Throws 'ERR_MCPPING_MISSING_PACKAGE' without
   * @opentelemetry/api, 'ERR_MCPPING_DUPLICATE_METRIC' for the same provider twice.
   */
  instrumentOtel(meterProvider?: unknown): void;
  /**
   * Every connection's figures as Prometheus text (format 0.0.4), rendered
   * by the C core as `mcpping wrap --metrics` serves them; needs no package.
   */
  exposition(): string;
  /** Every metric name -> [type, help]. */
  readonly METRICS: Readonly<Record<string, readonly [MetricKind, string]>>;
  /** Upper bounds (seconds) of mcpping_ping_rtt_seconds' buckets. */
  readonly RTT_BUCKETS: readonly number[];
  /** Values of mcpping_peer_state's `state` label. */
  readonly STATES: readonly ['alive', 'suspect', 'stale', 'closed'];
  /** Values of mcpping_ping_failures_total's `reason` label. */
  readonly FAILURE_REASONS: readonly ['timeout', 'error', 'invalid', 'unsupported'];
  /** Values of mcpping_probes_total's `result` label. */
  readonly PROBE_RESULTS: readonly ['ok', 'timeout'];
};

// Only what is exported above is mcpping's (Watched is not).
export {};
