// The terminal operator of `tandem session run --leader`: while a rollout runs, the line `e` takes
// over with the leader (or gives back) and is never taken for an object-done mark; with no rollout
// running it says so. Other lines stay marks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { terminalOperator } from '../../src/app/session-operators.js';
import type { OperatorStep } from '../../src/session/ports.js';

test('while a session rollout runs, the terminal line e toggles the takeover and is not a mark', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let said = '';
  output.on('data', (d: Buffer) => (said += d.toString()));
  let toggles = 0;
  let running = true;
  const op = terminalOperator(input, output, 'operator (terminal)', {
    marks: true,
    takeover: { toggle: () => (running ? (toggles++, true) : false) },
  });
  const marks: unknown[] = [];
  const stop = new AbortController();
  const step = { layout: { objects: [{ id: 'bottle-1' }] } } as unknown as OperatorStep;
  op.watchRun!(step, (m) => marks.push(m), stop.signal);
  assert.match(said, /e, then Enter: take over with the leader/);
  input.write('e\nbottle-1\nE\n');
  await new Promise((r) => setImmediate(r));
  assert.equal(toggles, 2);
  assert.deepEqual(marks, [{ objectId: 'bottle-1' }]);
  running = false;
  input.write('e\n');
  await new Promise((r) => setImmediate(r));
  assert.equal(toggles, 2);
  assert.match(said, /No rollout is running to take over\./);
  stop.abort();
  op.close();
});
