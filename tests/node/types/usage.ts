// Compiled (not run) by types.test.js: the declarations in node/index.d.ts
// describe the API as documented, and mcpping's transports satisfy the
// official SDK's Transport interface.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as mcpping from '../../../node/index.js';
import type { MCPTransport } from '@ai-sdk/mcp';
import { createMCPClient } from '@ai-sdk/mcp';
import type { Transport as V2Transport } from '@modelcontextprotocol/client';

export async function usage(): Promise<void> {
  const peer: mcpping.Peer = await mcpping.connect(
    { command: 'python3', args: ['server.py'], env: { A: '1' }, cwd: '/tmp' },
    { keepalive: { intervalMs: 1000, timeoutMs: 500, failures: 3 }, records: 'records.jsonl' },
  );
  const rtt: number = await peer.ping({ timeoutMs: 100, signal: AbortSignal.timeout(1000) });
  peer.on('stale', (ev) => {
    const n: number = ev.failureCount;
    void n;
  });
  peer.on('closed', (info) => {
    const reason: string = info.reason;
    void reason;
  });
  const state: mcpping.State = peer.state;
  const sent: number | undefined = peer.stats.pingsSent;
  void rtt;
  void state;
  void sent;
  try {
    await peer.ping();
  } catch (err) {
    if (err instanceof mcpping.PingError) {
      const code: number = err.code;
      void code;
    } else if (err instanceof mcpping.PingUnsupportedError || err instanceof mcpping.PingTimeoutError) {
      // typed
    }
  }
  await peer.close();

  const stdio = new mcpping.StdioClientTransport({ command: 'node', args: ['server.js'] }, { keepalive: { intervalMs: 1000 }, reconnect: true });
  const again = await mcpping.connect({ command: 'node' }, { reconnect: { initialMs: 500, maxDelayMs: 10000, multiplier: 2, jitter: 0.2, maxAttempts: 5 } });
  again.on('reconnecting', (ev) => {
    const attempt: number | undefined = ev.attempt;
    const delay: number | undefined = ev.delayMs;
    void attempt;
    void delay;
  });
  again.on('reconnected', (ev) => {
    const pid: number | undefined = ev.pid;
    void pid;
  });
  try {
    await again.request('tools/call', { name: 'x' });
  } catch (err) {
    if (err instanceof mcpping.RequestInDoubtError) {
      const d: 'in_doubt' | 'cancelled' = err.disposition;
      const m: string = err.method;
      void d;
      void m;
    }
  }
  mcpping.setRetryBudget({ burst: 5, perSecond: 1 });
  const mode: mcpping.RuntimeMode = mcpping.runtimeMode();
  const hosted: boolean = mode.mode === 'host' && mode.why.length > 0;
  const taken: number = mcpping.hostStats().takeovers + mcpping.hostStats().hostTurns + mcpping.hostStats().inlineCommands;
  void hosted;
  void taken;
  const asTransport: Transport = stdio;
  const client = new Client({ name: 'c', version: '1' });
  await client.connect(stdio);

  const guarded = mcpping.guard(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:1/mcp')), {
    role: 'client',
    keepalive: { intervalMs: 1000 },
    records: (r) => {
      const e: string = r.event;
      void e;
    },
  });
  const asTransport2: Transport = guarded;
  await client.connect(guarded);

  const reaper = new mcpping.SessionReaper({ keepalive: { intervalMs: 10000, timeoutMs: 5000, failures: 3 }, streamGraceMs: 60000 });
  const watched: mcpping.GuardedTransport = reaper.watch(new StreamableHTTPServerTransport({ sessionIdGenerator: () => 'id' }));
  await new McpServer({ name: 's', version: '1' }).connect(watched);
  reaper.on('stale', (sessionId) => {
    const id: string | null = sessionId;
    void id;
  });
  const reaped: number = reaper.reaped;
  const open: number = reaper.sessions.size;
  void reaped;
  void open;
  void asTransport;
  void asTransport2;

  const other = await mcpping.connect({ command: 'node', args: ['server.js'] });
  other.on('invalid_message', (text) => {
    const t: string = text;
    void t;
  });
  try {
    await other.request('tools/call', {});
  } catch (err) {
    if (err instanceof mcpping.RpcError) {
      const code: number = err.code;
      void code;
    }
  }
}

export function metricsUsage(register: unknown, provider: unknown): void {
  const registered: object[] = mcpping.metrics.registerPrometheus(register);
  mcpping.metrics.instrumentOtel(provider);
  const text: string = mcpping.metrics.exposition();
  const [kind, help] = mcpping.metrics.METRICS['mcpping_pings_sent_total'];
  const k: 'counter' | 'histogram' | 'gauge' = kind;
  const bounds: readonly number[] = mcpping.metrics.RTT_BUCKETS;
  const state: 'alive' | 'suspect' | 'stale' | 'closed' = mcpping.metrics.STATES[0];
  void registered;
  void text;
  void k;
  void help;
  void bounds;
  void state;
}

// The frameworks' transport interfaces: the Vercel AI SDK's MCPTransport
// and the v2 client's Transport (the OpenAI Agents SDK's) take mcpping's.
export async function frameworksUsage(): Promise<void> {
  const transport = new mcpping.StdioClientTransport({ command: 'node', args: ['server.js'] }, { keepalive: { intervalMs: 1000 } });
  const asAiSdk: MCPTransport = transport;
  const asV2: V2Transport = transport;
  const client = await createMCPClient({ transport });
  await client.close();
  const files: string[] = mcpping.instrument({ keepalive: { intervalMs: 10000 }, records: 'records.jsonl', paths: ['.'], reconnect: { maxAttempts: 3 } });
  const live: mcpping.StdioClientTransport[] = mcpping.instrumentedTransports();
  mcpping.uninstrument();
  void asAiSdk;
  void asV2;
  void files;
  void live;
}
