// A queued rollout's recording travels packed and deflated through Redis: what the coordinator
// unpacks must be what the worker's rollout recorded, call for call and bit for bit, and what is
// too big, of another rollout or not a recording at all is refused in one sentence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { Packr } from 'msgpackr';
import {
  decodeRecording,
  encodeRecording,
  RECORDING_FORMAT,
  RecordingBlobError,
} from '../../src/sim/queue/recording-blob.js';
import type { RecordedCall } from '../../src/sim/recording-relay.js';

const id = { sweepId: 'sweep-a', layoutIndex: 2, repeat: 1 };
const f = (...v: number[]) => Float64Array.from(v);
const calls: RecordedCall[] = [
  {
    k: 'event',
    timeS: 0,
    kind: 'chunk',
    source: 'policy',
    message: 'Chunk 0 took over at step 0.',
    detail: { chunk_index: 0, step: 0 },
  },
  {
    k: 'state',
    state: {
      timeS: 0,
      mode: 'active',
      position: f(-2.6767342115687197e-24, -0, 0.9999997193365919, Number.MIN_VALUE),
      velocity: f(0, 1e308, -1.5),
      effort: f(NaN, Infinity),
      faults: [],
    },
  },
  { k: 'command', timeS: 0.02, applied: { position: f(0.1, 0.2), velocity: undefined, torqueNm: f(3) } },
  { k: 'safety', event: { timeS: 0.04, kind: 'velocity-clamp', joint: 3, message: 'clamped' } as never },
  { k: 'event', timeS: 0.04, kind: 'phase', source: 'loop', message: 'no detail', detail: undefined },
  {
    k: 'state',
    state: {
      timeS: 0.04,
      mode: 'fault',
      position: f(1),
      velocity: f(2),
      effort: f(3),
      faults: [{ kind: 'motor-fault', arm: 'left', joint: 3, message: 'over temperature' }],
    },
  },
];

test('a recording unpacks to the calls its rollout made, float64 for float64 (-0, NaN, subnormals), undefined fields and all', async () => {
  const bytes = await encodeRecording(id, calls);
  const back = await decodeRecording(bytes, id);
  assert.deepStrictEqual(back, calls);
  assert.ok(
    back[1].k === 'state' && back[1].state.position instanceof Float64Array && Object.is(back[1].state.position[1], -0),
  );
});

test('a recording over the limit, of another rollout, or not one at all: one sentence each', async () => {
  await assert.rejects(
    encodeRecording(id, calls, 100),
    (e: unknown) =>
      e instanceof RecordingBlobError &&
      /^its recording packs to 0\.0 MiB, over the 0\.0 MiB a queued rollout may carry; run it in a sweep on one machine \(--workers\) to record it, or shorten --seconds\.$/.test(
        e.message,
      ),
  );
  const bytes = await encodeRecording(id, calls);
  await assert.rejects(
    decodeRecording(bytes, { ...id, repeat: 0 }),
    /^RecordingBlobError: the recording its result names is of sweep sweep-a layout 2 repeat 1, not of this rollout\.$/,
  );
  await assert.rejects(decodeRecording(bytes, id, 64), /^RecordingBlobError: its recording does not inflate/);
  await assert.rejects(
    decodeRecording(Buffer.from('not deflated'), id),
    /^RecordingBlobError: its recording does not inflate/,
  );
  const packr = new Packr({ moreTypes: true, useRecords: true, structuredClone: false });
  const odd = deflateRawSync(
    packr.pack({ format: RECORDING_FORMAT, ...id, calls: [{ k: 'state', state: { timeS: 0, position: [1, 2] } }] }),
  );
  await assert.rejects(
    decodeRecording(odd, id),
    /^RecordingBlobError: its recording holds calls of a shape no rollout makes\.$/,
  );
});
