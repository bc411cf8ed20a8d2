#!/usr/bin/env node
/**
 * The bundled demo MCP server (stdio), so `mcpping` with no target needs no
 * Python. Its answers are C's (mcpp_demo_answer, the same bytes as `python
 * -m mcpping.demo`): initialize (serverInfo "mcpping-demo"), ping,
 * tools/list, tools/call echo/add, -32601 for anything else; notifications
 * are ignored. This file only carries the lines.
 */
'use strict';
const readline = require('node:readline');
const binding = require('./binding');

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  const answer = binding.demoAnswer(line);
  if (answer !== null) process.stdout.write(`${answer}\n`);
});
rl.on('close', () => process.exit(0));
