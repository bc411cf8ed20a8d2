'use strict';
/**
 * The worker half of the block protocol (bench/method.py), for Node clients.
 *
 * A client connects however it does, then hands serve() an async function
 * that runs one block: it gets the command object and returns {ops: N, ...}
 * (plus samples_us etc. as it measures them). serve() times each block
 * (wall clock, the process's CPU over all its threads, its context switches)
 * and answers one JSON line per command until stdin ends; a command with
 * samples: false gets its answer without the per-op lists (a profiled block
 * should not spend its time printing them).
 */
const readline = require('node:readline');

function usage() {
  const cpu = process.cpuUsage();
  const ru = process.resourceUsage();
  return { cpuS: (cpu.user + cpu.system) / 1e6, csw: ru.voluntaryContextSwitches + ru.involuntaryContextSwitches };
}

const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

async function serve(block, readyInfo = {}) {
  say({ ready: true, pid: process.pid, ...readyInfo });
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    const cmd = JSON.parse(line);
    const u0 = usage();
    const t0 = process.hrtime.bigint();
    const res = await block(cmd);
    const t1 = process.hrtime.bigint();
    const u1 = usage();
    if (cmd.samples === false) {
      delete res.samples_us;
      delete res.native_us;
    }
    say({ ...res, wall_s: Number(t1 - t0) / 1e9, cpu_s: u1.cpuS - u0.cpuS, csw: u1.csw - u0.csw });
  }
}

/**
 * Runs op() n times with depth in flight; one latency per op (µs) when
 * sequential. Returns the block result and the ops' own return values
 * (sequential only).
 */
async function timed(op, n, depth = 1) {
  const clock = process.hrtime.bigint;
  if (depth === 1) {
    const samples = new Array(n);
    const values = new Array(n);
    for (let i = 0; i < n; i++) {
      const a = clock();
      values[i] = await op();
      samples[i] = Number(clock() - a) / 1e3;
    }
    return [{ ops: n, samples_us: samples }, values];
  }
  let left = n;
  const worker = async () => {
    while (left > 0) {
      left--;
      await op();
    }
  };
  await Promise.all(Array.from({ length: Math.min(depth, n) }, worker));
  return [{ ops: n }, []];
}

/** Runs main() and turns a failure into exit status 1 with the error on stderr. */
function run(main) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

module.exports = { serve, timed, run };
