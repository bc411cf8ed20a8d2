'use strict';
// Records cost a text per event and a crossing each: a peer or transport
// with no records sink gets them only while it has a 'record' listener.
const test = require('node:test');
const assert = require('node:assert/strict');
const mcpping = require('../../node');
const h = require('./helpers');

test('records reach a peer only while a record listener is there, when no sink is set', async () => {
  const peer = await mcpping.connect(h.peer('echo.py'));
  try {
    const handed = [];
    const onRecord = peer.onRecord.bind(peer);
    peer.onRecord = (json) => {
      handed.push(JSON.parse(json).event);
      onRecord(json);
    };
    await peer.ping();
    await peer.ping();
    assert.deepEqual(handed, [], 'no listener, no sink: the runtime makes none');
    const seen = [];
    const listener = (r) => seen.push(r.event);
    peer.on('record', listener);
    await peer.ping();
    assert.ok(seen.includes('ping_ok'), `records once listened to: ${seen}`);
    peer.off('record', listener);
    handed.length = 0;
    await peer.ping();
    assert.deepEqual(handed, [], 'off again with the last listener');
  } finally {
    await peer.close();
  }
});

test('a records sink gets every record, listener or not', async () => {
  const records = [];
  const peer = await mcpping.connect(h.peer('echo.py'), { records: (r) => records.push(r.event) });
  try {
    await peer.ping();
    assert.ok(records.includes('ping_ok'), `records: ${records}`);
  } finally {
    await peer.close();
  }
});
