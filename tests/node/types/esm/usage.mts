// Compiled (not run) by types.test.js as an ES module under NodeNext: the
// package's own name resolves to node/index.d.ts through "exports", and
// every value it declares is importable by name, as Node allows at run time.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import mcpping, {
  version,
  PROTOCOL_VERSION,
  connect,
  Peer,
  StdioClientTransport,
  guard,
  GuardedTransport,
  McppError,
  RpcError,
  PingTimeoutError,
  PingError,
  PingInvalidError,
  PingUnsupportedError,
  ClosedError,
  instrument,
  uninstrument,
  instrumentedTransports,
} from 'mcpping';
import type { MCPTransport } from '@ai-sdk/mcp';
import type { State, KeepaliveOptions, Stats, CloseInfo } from 'mcpping';

export async function usage(): Promise<void> {
  const v: string = version + PROTOCOL_VERSION + mcpping.version;
  const keepalive: KeepaliveOptions = { intervalMs: 1000, timeoutMs: 500 };
  const peer: Peer = await connect({ command: 'node', args: ['server.js'] }, { keepalive });
  const rtt: number = await peer.ping({ timeoutMs: 100 });
  const state: State = peer.state;
  const stats: Stats = peer.stats;
  peer.on('error', (err: Error) => {
    void err;
  });
  try {
    await peer.request('tools/list', {}, { timeoutMs: 1000 });
  } catch (err) {
    if (err instanceof RpcError) {
      const code: number = err.code;
      void code;
    } else if (err instanceof PingTimeoutError || err instanceof PingError || err instanceof PingInvalidError) {
      // typed
    } else if (err instanceof PingUnsupportedError || err instanceof ClosedError || err instanceof McppError) {
      // typed
    }
  }
  const info: CloseInfo = await peer.close();
  const stdio: Transport = new StdioClientTransport({ command: 'node' });
  const guarded: GuardedTransport = guard(stdio, { role: 'client' });
  const asTransport: Transport = guarded;
  const forAiSdk: MCPTransport = new StdioClientTransport({ command: 'node' });
  const patched: string[] = instrument({ keepalive });
  const live: StdioClientTransport[] = instrumentedTransports();
  uninstrument();
  void [v, rtt, state, stats, info, asTransport, forAiSdk, patched, live];
}
