'use strict';
/**
 * idle_binding.js: idle_binding.py's measure from Node: N connections to the
 * responder, keepalive every 1 s (jitter 10%), no listener; after 2.5 s to
 * settle, WINDOWS windows of WINDOW_S s each print one JSON line (CPU % of
 * one core, context switches of all threads per pong, keepalive pongs).
 *
 *   node idle_binding.js N WINDOWS WINDOW_S RESPONDER
 */
const fs = require('node:fs');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

function csw() {
  let n = 0;
  for (const t of fs.readdirSync('/proc/self/task')) {
    try {
      for (const line of fs.readFileSync(`/proc/self/task/${t}/status`, 'utf8').split('\n')) {
        if (line.includes('ctxt_switches')) n += Number(line.split(/\s+/)[1]);
      }
    } catch {
      // The thread ended meanwhile.
    }
  }
  return n;
}

function cpu() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function main() {
  const [n, windows, windowS, responder] = process.argv.slice(2);
  const mcpping = require(process.env.MCPPING_ROOT || path.resolve(__dirname, '..', '..'));
  const keepalive = { intervalMs: 1000, timeoutMs: 5000, jitterPct: 10 };
  const peers = [];
  for (let i = 0; i < Number(n); i++) peers.push(await mcpping.connect({ command: responder, args: [] }, { keepalive }));
  const pongs = () => peers.reduce((sum, p) => sum + p.rttStats.received, 0);
  await sleep(2500);
  process.stderr.write('settled\n');
  for (let w = 0; w < Number(windows); w++) {
    // The pongs are summed outside the window: reading N peers' stats is
    // the benchmark's work, not keepalive's.
    const p0 = pongs();
    const c0 = cpu(), s0 = csw(), t0 = performance.now();
    await sleep(Number(windowS) * 1000);
    const c1 = cpu(), s1 = csw(), t1 = performance.now(), got = pongs() - p0;
    console.log(JSON.stringify({
      cpu_pct: Number((100 * (c1 - c0) / ((t1 - t0) / 1000)).toFixed(3)), pongs: got,
      cpu_us_per_ping: Number((1e6 * (c1 - c0) / Math.max(1, got)).toFixed(2)),
      csw_per_ping: Number(((s1 - s0) / Math.max(1, got)).toFixed(3)),
    }));
  }
  await Promise.all(peers.map((p) => p.close()));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
