/**
 * VirtualClock, unpaced (tests, sweeps: as fast as the CPU allows) and paced (the station on the
 * emulated cell: never ahead of the wall clock, slowed down rather than hurried when the machine is
 * busy). The paced checks are bounds that only a wrong clock can break: "not before" holds however
 * busy the machine is (a busy machine only makes things later), and the upper bounds are seconds
 * wide around milliseconds of work.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { VirtualClock } from '../../src/rig/clocks.js';

function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a long synchronous task on the main thread
  }
}

test('unpaced, ten seconds of 4 ms waits pass without waiting for the wall clock', async () => {
  const clock = new VirtualClock();
  const t0 = performance.now();
  for (let i = 1; i <= 2500; i++) await clock.waitUntil(i * 0.004);
  assert.equal(clock.nowS(), 10);
  assert.ok(
    performance.now() - t0 < 9000,
    `ten virtual seconds took ${(performance.now() - t0).toFixed(0)} ms of wall time`,
  );
});

test('paced, an event never fires before its time has passed on the wall clock', async () => {
  const clock = new VirtualClock(0, { paced: true });
  const t0 = performance.now();
  for (const tS of [0.05, 0.12, 0.2]) {
    await clock.waitUntil(tS);
    assert.equal(clock.nowS(), tS);
    assert.ok(
      performance.now() - t0 >= tS * 1000 - 1,
      `virtual ${tS} s reached after only ${(performance.now() - t0).toFixed(1)} ms`,
    );
  }
});

test('paced, a main thread blocked for 300 ms slows time down: what follows is not rushed through to catch up', async () => {
  const clock = new VirtualClock(0, { paced: true });
  await clock.waitUntil(0.01);
  busyWait(300);
  // 20 cycles of 10 ms after the stall: on the wall clock they still take their 200 ms (a clock
  // that caught up would fire the first 30 at once), and virtual time shows no jump.
  const t0 = performance.now();
  for (let i = 2; i <= 21; i++) await clock.waitUntil(i * 0.01);
  assert.ok(
    performance.now() - t0 >= 180,
    `20 cycles of 10 ms after the stall took ${(performance.now() - t0).toFixed(0)} ms`,
  );
  assert.ok(Math.abs(clock.nowS() - 0.21) < 1e-9);
});

test('paced, an event scheduled while the clock sleeps toward a later one fires at its own time', async () => {
  const clock = new VirtualClock(0, { paced: true });
  let late = false;
  const far = clock.waitUntil(3).then(() => (late = true));
  await new Promise((r) => setTimeout(r, 20));
  const t0 = performance.now();
  await clock.waitUntil(clock.nowS() + 0.05);
  const took = performance.now() - t0;
  assert.equal(late, false, 'the later event has not fired');
  assert.ok(took < 2500, `a 50 ms wait behind a 3 s one took ${took.toFixed(0)} ms`);
  await far;
  assert.equal(clock.nowS(), 3);
});

test('time stands still while a piece of work runs (standStill), however long it takes, and moves on once it settles', async () => {
  const clock = new VirtualClock();
  // A loop that keeps time moving, as a rig's control loop does between takes.
  let running = true;
  const loop = (async () => {
    while (running) await clock.waitUntil(clock.nowS() + 0.004);
  })();
  try {
    await clock.waitUntil(1);
    const before = clock.nowS();
    // Work that takes wall time (a file opened on a slow disk).
    const seenWhileStill = await clock.standStill(
      new Promise<number>((resolve) => setTimeout(() => resolve(clock.nowS()), 50)),
    );
    assert.equal(seenWhileStill, before, 'no virtual time passed while the work ran');
    await clock.waitUntil(clock.nowS() + 0.5);
    assert.ok(clock.nowS() >= before + 0.5, 'time moves again after the work settled');
    // A rejected piece of work releases the clock too.
    await assert.rejects(clock.standStill(Promise.reject(new Error('disk full'))), /disk full/);
    await clock.waitUntil(clock.nowS() + 0.1);
  } finally {
    running = false;
    await loop;
  }
});
