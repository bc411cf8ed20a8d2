#!/usr/bin/env node
/**
 * The bundled demo MCP server (stdio, stdlib only), so `mcpping --demo`
 * needs no Python. Real MCP: initialize (serverInfo name "mcpping-demo",
 * like the Python demo), tools/list, tools/call echo/add, ping, and -32601
 * for anything else. Notifications are accepted silently.
 */
'use strict';
const readline = require('node:readline');

const SUPPORTED = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const TOOLS = [
  {
    name: 'echo',
    description: 'Returns its text argument.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
];

/** @param {object} msg */
function write(msg) {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

/**
 * @param {string} name
 * @param {object} args
 * @returns {object} a CallToolResult
 */
function callTool(name, args) {
  if (name === 'echo') return { content: [{ type: 'text', text: String(args.text ?? '') }] };
  if (name === 'add') {
    const sum = Number(args.a) + Number(args.b);
    return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } };
  }
  return { content: [{ type: 'text', text: `unknown tool: ${name}` }], isError: true };
}

/**
 * @param {object} req a JSON-RPC request
 * @returns {{result?: object, error?: object}}
 */
function answer(req) {
  const params = req.params || {};
  switch (req.method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      return {
        result: {
          protocolVersion: SUPPORTED.includes(asked) ? asked : SUPPORTED[0],
          capabilities: { tools: {} },
          serverInfo: { name: 'mcpping-demo', version: '0.1.0' },
        },
      };
    }
    case 'ping':
      return { result: {} };
    case 'tools/list':
      return { result: { tools: TOOLS } };
    case 'tools/call':
      return { result: callTool(params.name, params.arguments || {}) };
    default:
      return { error: { code: -32601, message: 'Method not found' } };
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    return;
  }
  if (!msg || typeof msg.method !== 'string' || msg.id === undefined) return; // notification or response
  write({ jsonrpc: '2.0', id: msg.id, ...answer(msg) });
});
rl.on('close', () => process.exit(0));
