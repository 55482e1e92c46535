import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControlLoop } from '../../src/rig/control-loop.js';
import { ManualClock, RealtimeClock, SteppedClock } from '../../src/rig/clocks.js';
import { MirrorRig } from '../../src/rig/mirror-rig.js';
import { stateIndex, type Clock, type RigCommand } from '../../src/rig/contract.js';
import { yamRigModel } from '../../src/rig/yam.js';

async function activeMirror(clock: Clock): Promise<MirrorRig> {
  const rig = new MirrorRig({ model: yamRigModel(), clock });
  await rig.configure();
  await rig.activate();
  return rig;
}

/** A clock that wakes each wait late by a scripted amount and lets the work take scripted time. */
class ScriptedClock implements Clock {
  t = 0;
  private i = 0;
  constructor(private readonly lateS: (i: number) => number) {}
  nowS(): number {
    return this.t;
  }
  async waitUntil(tS: number): Promise<void> {
    this.t = Math.max(this.t, tS + this.lateS(this.i++));
  }
}

test('the loop runs at its rate on a stepped clock, calls the source every cycle and writes its commands', async () => {
  const clock = new SteppedClock();
  const rig = await activeMirror(clock);
  const j = stateIndex('left', 0);
  const seen: number[] = [];
  const target = Float64Array.from(rig.read().position);
  const command: RigCommand = { position: target };
  const loop = new ControlLoop({
    rig,
    clock,
    rateHz: 500,
    source: (state, cycle, nowS) => {
      seen.push(cycle);
      assert.ok(Math.abs(nowS - cycle / 500) < 1e-9);
      assert.equal(state.mode, 'active');
      target[j] = 0.5 * Math.min(1, nowS);
      return command;
    },
  });
  const stats = await loop.run({ cycles: 1000 });
  assert.equal(stats.cycles, 1000);
  assert.deepEqual(seen.slice(0, 3), [0, 1, 2]);
  assert.equal(seen.length, 1000);
  assert.equal(stats.lateCycles, 0);
  assert.equal(stats.overruns, 0);
  assert.equal(stats.jitterMaxMs, 0);
  assert.ok(Math.abs(stats.achievedHz - 500) < 1e-6);
  assert.ok(Math.abs(clock.nowS() - 999 / 500) < 1e-9);
  assert.ok(Math.abs(rig.read().position[j] - 0.5) < 0.02, `followed the ramp: ${rig.read().position[j]}`);
});

test('the loop ticks the rig when the source goes silent, so the watchdog holds', async () => {
  const clock = new SteppedClock();
  const rig = await activeMirror(clock);
  const pose = Float64Array.from(rig.read().position);
  const loop = new ControlLoop({ rig, clock, source: (_s, cycle) => (cycle < 10 ? { position: pose } : undefined) });
  await loop.run({ untilS: 0.5 });
  assert.equal(rig.read().mode, 'holding');
  assert.deepEqual(
    rig.takeSafetyEvents().map((e) => e.kind),
    ['watchdog-hold'],
  );
});

test('jitter percentiles, late cycles and overruns are measured from the clock', async () => {
  // Every 10th wake is 3 ms late at 250 Hz (late: > 2 ms); the rest 0.1 ms.
  const clock = new ScriptedClock((i) => (i % 10 === 9 ? 0.003 : 0.0001));
  const rig = await activeMirror(clock);
  const loop = new ControlLoop({ rig, clock, rateHz: 250 });
  const stats = await loop.run({ cycles: 200 });
  assert.equal(stats.cycles, 200);
  assert.equal(stats.lateCycles, 20);
  assert.ok(Math.abs(stats.jitterP50Ms - 0.1) < 1e-9, `p50 ${stats.jitterP50Ms}`);
  assert.ok(Math.abs(stats.jitterP99Ms - 3) < 1e-9, `p99 ${stats.jitterP99Ms}`);
  assert.ok(Math.abs(stats.jitterMaxMs - 3) < 1e-9);
  assert.equal(stats.overruns, 0);
});

test('a cycle whose work runs past the next deadline is an overrun and missed deadlines are skipped', async () => {
  const clock = new ScriptedClock(() => 0);
  const rig = await activeMirror(clock);
  const starts: number[] = [];
  const loop = new ControlLoop({
    rig,
    clock,
    rateHz: 100,
    source: (_s, cycle, nowS) => {
      starts.push(nowS);
      if (cycle === 3) clock.t += 0.025; // 2.5 periods of work
      return undefined;
    },
  });
  const stats = await loop.run({ cycles: 6 });
  assert.equal(stats.overruns, 1);
  // Deadlines at 0.04 and 0.05 were missed; the loop resumes on the grid at 0.06, not in a burst.
  assert.deepEqual(
    starts.map((t) => Math.round(t * 1000)),
    [0, 10, 20, 30, 60, 70],
  );
});

test('an error in the command source puts the rig in a safe hold and reaches the caller', async () => {
  const clock = new SteppedClock();
  const rig = await activeMirror(clock);
  const loop = new ControlLoop({
    rig,
    clock,
    source: (_s, cycle) => {
      if (cycle === 5) throw new Error('policy crashed');
      return undefined;
    },
  });
  await assert.rejects(loop.run({ cycles: 100 }), /policy crashed/);
  assert.equal(rig.read().mode, 'holding');
});

test('stop(), an abort signal and the rate bounds', async () => {
  const clock = new SteppedClock();
  const rig = await activeMirror(clock);
  const ac = new AbortController();
  const loop = new ControlLoop({ rig, clock, source: (_s, c) => (c === 9 ? (ac.abort(), undefined) : undefined) });
  assert.equal((await loop.run({ signal: ac.signal })).cycles, 10);
  const loop2: ControlLoop = new ControlLoop({
    rig,
    clock,
    rateHz: 1000,
    source: (_s, c): undefined => (c === 4 ? (loop2.stop(), undefined) : undefined),
  });
  assert.equal((await loop2.run()).cycles, 5);
  assert.throws(() => new ControlLoop({ rig, clock, rateHz: 2000 }), /from 1 to 1000 Hz, not 2000/);
  assert.throws(() => new ControlLoop({ rig, clock, rateHz: 0 }), RangeError);
});

test('a manual clock only lets the loop run when the test advances time', async () => {
  const clock = new ManualClock();
  const rig = await activeMirror(clock);
  let calls = 0;
  const loop = new ControlLoop({ rig, clock, rateHz: 100, source: () => (calls++, undefined) });
  const running = loop.run({ cycles: 3 });
  await new Promise((r) => setImmediate(r));
  assert.equal(calls, 1, 'the first cycle runs at t = 0');
  assert.equal(clock.pending, 1);
  clock.advance(0.005);
  await new Promise((r) => setImmediate(r));
  assert.equal(calls, 1, 'not before the deadline');
  clock.advance(0.005);
  await new Promise((r) => setImmediate(r));
  assert.equal(calls, 2);
  clock.advance(0.01);
  assert.equal((await running).cycles, 3);
  assert.throws(() => clock.set(0), /cannot go back in time/);
});

test('the realtime clock never wakes before the deadline', async () => {
  const clock = new RealtimeClock();
  for (const aheadS of [0, 0.0005, 0.003, 0.01]) {
    const target = clock.nowS() + aheadS;
    await clock.waitUntil(target);
    assert.ok(clock.nowS() >= target, `woke early for a ${aheadS * 1000} ms wait`);
  }
});
