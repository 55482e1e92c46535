import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { medianPeriodS, resample } from '../../src/record/resample.js';

/** Ascending times from positive steps. */
const timesArb = (minStep: number, maxStep: number) =>
  fc
    .tuple(
      fc.double({ min: 0, max: 0.2, noNaN: true }),
      fc.array(fc.double({ min: minStep, max: maxStep, noNaN: true }), { minLength: 2, maxLength: 300 }),
    )
    .map(([t0, steps]) => {
      const out = new Float64Array(steps.length + 1);
      out[0] = t0;
      steps.forEach((s, i) => (out[i + 1] = out[i] + s));
      return out;
    });

test('every tick takes the newest sample at or before it, never a later one, and no sample staler than the gap limit', () => {
  fc.assert(
    fc.property(
      timesArb(0.002, 0.006),
      timesArb(0.02, 0.12),
      fc.integer({ min: 5, max: 60 }),
      fc.double({ min: 0.05, max: 0.5, noNaN: true }),
      (joints, camera, fps, maxGapS) => {
        const r = resample(
          [
            { name: 'joints', timesS: joints, lateAfterS: 2 * medianPeriodS(joints) },
            { name: 'camera', timesS: camera, lateAfterS: 1.5 * medianPeriodS(camera) },
          ],
          fps,
          maxGapS,
        );
        assert.ok(r.startS >= joints[0] && r.startS >= camera[0]);
        for (const [s, times] of [joints, camera].entries()) {
          const index = r.streams[s].index;
          assert.equal(index.length, r.ticks);
          for (let k = 0; k < r.ticks; k++) {
            const t = r.startS + k / fps;
            const i = index[k];
            assert.ok(times[i] <= t + 1e-9, 'never a sample from after the tick');
            assert.ok(i + 1 >= times.length || times[i + 1] > t + 1e-9, 'the newest one at or before it');
            assert.ok(t - times[i] <= maxGapS + 1e-9, 'no tick inside a gap longer than the limit');
          }
        }
        const end = Math.min(joints[joints.length - 1], camera[camera.length - 1]);
        if (r.cut === undefined)
          assert.equal(
            r.ticks,
            Math.max(0, Math.floor((end - r.startS) * fps + 1e-6) + 1),
            'without a gap the episode runs to the end of its shortest stream',
          );
        else assert.ok(r.cut.gapS > maxGapS, 'a cut names a gap longer than the limit');
      },
    ),
    { numRuns: 300 },
  );
});

test('a long gap ends the episode before the stale ticks; a short one repeats the sample and counts it', () => {
  const camera = Float64Array.from({ length: 90 }, (_, n) => 0.01 + n / 30);
  // Frames 30..59 missing: a one-second silence from t = 0.977 s.
  const withGap = camera.filter((_, n) => n < 30 || n >= 60);
  const joints = Float64Array.from({ length: 750 }, (_, i) => i / 250);
  const r = resample(
    [
      { name: 'joints', timesS: joints, lateAfterS: 0.008 },
      { name: 'camera', timesS: withGap, lateAfterS: 0.05 },
    ],
    30,
    0.25,
  );
  assert.ok(r.cut);
  assert.equal(r.cut.stream, 'camera');
  assert.ok(Math.abs(r.cut.gapS - 31 / 30) < 1e-9);
  assert.equal(r.streams[1].lateTicks, 0, 'the stale ticks of the gap are not exported');
  assert.equal(r.streams[1].index[r.ticks - 1], 29, 'the last tick takes the last frame before the gap');

  const oneMissing = camera.filter((_, n) => n !== 40);
  const short = resample(
    [
      { name: 'joints', timesS: joints, lateAfterS: 0.008 },
      { name: 'camera', timesS: oneMissing, lateAfterS: 0.05 },
    ],
    30,
    0.25,
  );
  assert.equal(short.cut, undefined);
  assert.equal(
    short.streams[1].lateTicks,
    0,
    'one missing frame on a 30 fps grid leaves every tick within 1.5 periods',
  );
  const twoMissing = camera.filter((_, n) => n !== 40 && n !== 41);
  const late = resample(
    [
      { name: 'joints', timesS: joints, lateAfterS: 0.008 },
      { name: 'camera', timesS: twoMissing, lateAfterS: 0.05 },
    ],
    30,
    0.25,
  );
  assert.equal(late.cut, undefined);
  assert.equal(late.streams[1].lateTicks, 1, 'two missing frames leave one tick whose newest frame is 2 periods old');
});
