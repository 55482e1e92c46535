// The rig thread keeps the motors commanded whatever the station's main thread does — judged by
// the emulated motors themselves (in a thread of their own, over socat ptys): a main thread that
// blocks for 500 ms at a time, under `rig hold`'s loop or a policy rollout, never lets a motor's own
// 400 ms watchdog trip (the 20 ms figure is the bench's: bench/rig-isolation.bench.ts); a stalled
// rollout ends by its policy deadline, never by a starved motor; a rig thread that is killed
// or hangs leaves the motors uncommanded, so they damp by that watchdog, and the main thread says so
// in one sentence; a pulled adapter reads as the same RigFault sentences as with the rig in-thread.
import { test, after, before } from 'node:test';
import { Worker } from 'node:worker_threads';
import assert from 'node:assert/strict';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { ControlLoop } from '../../src/rig/control-loop.js';
import {
  ARM_SIDES,
  type InterlockReading,
  type CellInterlock,
  type Rig,
  type RigCommand,
  type RigFault,
} from '../../src/rig/contract.js';
import type { RigConfig } from '../../src/rig/registry.js';
import { createThreadedYamCanRig, createYamCanRig, type YamRigThreadInit } from '../../drivers/yam/register.js';
import { RigThreadProxy } from '../../src/rig/rig-thread-proxy.js';
import { yamRigModel } from '../../src/rig/yam.js';
import type { ActionChunk, EpisodeContext, Observation, Policy } from '../../src/policy/contract.js';
import { OpenpiClientPolicy } from '../../src/policy/openpi/client.js';
import { blackImage } from '../../src/policy/image.js';
import { runRigRollout } from '../../src/rollout/rig-rollout.js';
import type { CameraSource } from '../../src/rollout/run-episode.js';
import { BOTTLES_IN_THE_BIN } from '../../src/tasks/index.js';
import type { Layout } from '../../src/tasks/types.js';
import { startFakeOpenpiServer } from '../policy/openpi-fakes.js';
import { until } from '../helpers/until.js';
import { startEmulatorThread, type EmulatorStatus, type EmulatorThread } from '../helpers/emulator-thread.js';

let emu: EmulatorThread;
before(async () => {
  emu = await startEmulatorThread();
});
after(async () => {
  await emu.stop();
});

function busyMs(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

function motors(st: EmulatorStatus) {
  return ARM_SIDES.flatMap((side) => (st.motors[side] ?? []).map((m) => ({ side, ...m })));
}

test('a main thread blocked 500 ms at a time (as `rig hold` runs) never starves the motors: none damps by its own watchdog', async () => {
  await emu.reset();
  const clock = new RealtimeClock();
  const rig = createThreadedYamCanRig(
    { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 },
    { clock },
  );
  try {
    await rig.configure();
    await rig.activate();
    await emu.resetRecords();
    const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
    // `rig hold`'s loop on this thread, which blocks 500 ms three times, 0.2 s apart.
    const startS = clock.nowS();
    let blocks = 0;
    const loop = new ControlLoop({
      rig,
      clock,
      source: (_state, _cycle, nowS) => {
        if (blocks < 3 && nowS - startS > 0.2 + blocks * 0.7) {
          blocks++;
          busyMs(500);
        }
        return hold;
      },
    });
    await loop.run({ untilS: startS + 2.4 });
    assert.equal(blocks, 3);
    const st = await emu.status();
    for (const m of motors(st)) {
      assert.equal(
        m.everLost,
        false,
        `the ${m.side} motor ${m.id} damped by its own watchdog: it went ${m.longestGapMs.toFixed(0)} ms without a command`,
      );
      assert.equal(m.status, 1, `the ${m.side} motor ${m.id} is still enabled`);
      assert.ok(m.kp > 0, `the ${m.side} motor ${m.id} still holds stiffly`);
    }
    const state = rig.read();
    assert.deepEqual(state.faults, [], 'no fault');
    assert.equal(state.mode, 'active', 'back to following commands after the last block');
    // The blocks were real, and the supervisor saw the commands go stale: it held, as designed.
    const stats = await rig.loopStats();
    assert.ok(stats.watchdogHolds >= 3, `the supervisor held at each block (${stats.watchdogHolds} holds)`);
    await rig.deactivate();
  } finally {
    await rig.close();
  }
});

/**
 * A policy answering over a websocket (an openpi server), while the station's main thread gets busy
 * for 500 ms at chosen inferences — a GC pause, a big synchronous request, a slow client.
 */
class MainThreadBusyAt implements Policy {
  inferences = 0;
  blocks = 0;
  constructor(
    private readonly inner: Policy,
    /** Busy once the answer is in: the steps go on, half a second late. */
    private readonly withAnswerInHand: readonly number[],
    /** Busy while the answer is on its way: the deadline comes due during the block, and its timer is served before the socket is read. */
    private readonly whileAwaitingAnswer: number,
  ) {}
  get info() {
    return this.inner.info;
  }
  reset(ctx: EpisodeContext): Promise<void> {
    return this.inner.reset(ctx);
  }
  async infer(obs: Observation): Promise<ActionChunk> {
    const n = this.inferences++;
    if (n === this.whileAwaitingAnswer) {
      setImmediate(() => {
        this.blocks++;
        busyMs(500);
      });
    }
    const chunk = await this.inner.infer(obs);
    if (this.withAnswerInHand.includes(n)) {
      this.blocks++;
      busyMs(500);
    }
    return chunk;
  }
}

test('a rig rollout whose main thread is blocked 500 ms at a time: every motor stays commanded (none damps by its own watchdog), the supervisor holds at each block, and the rollout ends by its policy deadline, not by a starved motor', async () => {
  await emu.reset();
  const clock = new RealtimeClock();
  const server = await startFakeOpenpiServer('answer', 10);
  const rig = createThreadedYamCanRig(
    { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 },
    { clock },
  );
  const remote = await OpenpiClientPolicy.connect({ url: server.url });
  // Chunks of 10 at 50 Hz: inference n at step 10·n. Busy after answers 1 and 3, then during inference 5.
  const policy = new MainThreadBusyAt(remote, [1, 3], 5);
  try {
    await emu.resetRecords();
    const layout: Layout = {
      index: 0,
      tier: 1,
      fixtures: [{ id: 'bin', kind: 'bin', pose: { x: 0, y: -0.3, yawRad: 0 } }],
      objects: [],
    };
    // openpi always carries the cameras: black frames, as `tandem rig rollout --blank-cameras` feeds.
    const cameras: CameraSource = {
      capture: async (names) => Object.fromEntries(names.map((n) => [n, blackImage(224, 224)])),
    };
    const r = await runRigRollout({
      rig,
      policy,
      cameras,
      task: BOTTLES_IN_THE_BIN,
      layout,
      episodeSeconds: 2,
      controlHz: 50,
      seed: 0,
      deadlineMs: 400,
      clock,
    });
    assert.equal(r.episode.outcome, 'policy-unavailable', `${r.episode.outcome}: ${r.episode.reason ?? ''}`);
    assert.equal(policy.blocks, 3, 'the main thread was blocked three times');
    assert.match(r.episode.reason ?? '', /did not answer within 400 ms \(chunk 5, observed at step 50\)/);
    assert.equal(r.episode.trajectory.steps, 50, 'the two blocks with the answer in hand cost no step');
    assert.equal(r.finalMode, 'damped');
    assert.equal(r.loop.measuredBy, 'rig thread');
    assert.ok(r.loop.watchdogHolds >= 3, `the supervisor held at each block (${r.loop.watchdogHolds} holds)`);
    const st = await emu.status();
    for (const m of motors(st)) {
      assert.ok(m.mits > 0, `the ${m.side} motor ${m.id} was commanded`);
      assert.equal(
        m.everLost,
        false,
        `the ${m.side} motor ${m.id} damped by its own watchdog: it went ${m.longestGapMs.toFixed(0)} ms without a command`,
      );
      assert.ok(
        m.longestGapMs < 400,
        `the ${m.side} motor ${m.id} went ${m.longestGapMs.toFixed(0)} ms without a command`,
      );
    }
  } finally {
    await remote.close();
    await server.close();
    await rig.close();
  }
});

test('the rig thread killed mid-hold: the motors damp by their own watchdog and the main thread says so in one sentence', async () => {
  await emu.reset();
  const clock = new RealtimeClock();
  const rig = createThreadedYamCanRig(
    { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 },
    { clock },
  );
  try {
    await rig.configure();
    await rig.activate();
    const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
    const loop = new ControlLoop({ rig, clock, source: () => hold });
    await loop.run({ untilS: clock.nowS() + 0.3 });
    await emu.resetRecords();
    assert.ok(
      motors(await emu.status()).every((m) => m.status === 1),
      'every motor enabled before the kill',
    );
    await rig.worker.terminate();
    // The main thread goes on writing, as a rollout would; nothing reaches the motors any more.
    await loop.run({ untilS: clock.nowS() + 0.2 });
    const end = performance.now() + 3000;
    let st = await emu.status();
    while (!motors(st).every((m) => m.everLost) && performance.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
      st = await emu.status();
    }
    for (const m of motors(st))
      assert.equal(m.everLost, true, `the ${m.side} motor ${m.id} damped by its own watchdog (status ${m.status})`);
    const state = rig.read();
    assert.equal(state.mode, 'fault');
    assert.equal(state.faults.length, 1, 'one fault');
    const sentence = state.faults[0].message;
    assert.match(sentence, /^The rig thread stopped .*damp by their own watchdog.*\.$/);
    assert.equal(sentence.split(/[.!?]\s+[A-Z]/).length, 1, `one sentence: ${sentence}`);
    // Bringing the rig up again is refused with the same sentence; putting it away does not hang.
    await assert.rejects(rig.activate(), (e: Error) => e.message === sentence);
    await rig.deactivate();
  } finally {
    await rig.close();
  }
});

test('a rig thread that hangs mid-hold: within about a second the main thread says so in one sentence and ends it; the motors damp by their own watchdog', async () => {
  await emu.reset();
  const clock = new RealtimeClock();
  const config: RigConfig = { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 };
  const model = yamRigModel();
  const init: YamRigThreadInit = { config, model, extras: {} };
  const rig = new RigThreadProxy({
    model,
    entry: new URL('../helpers/hanging-rig-thread-entry.mjs', import.meta.url),
    init,
    rateHz: 250,
    clock,
  });
  try {
    await rig.configure();
    await rig.activate();
    const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
    await new ControlLoop({ rig, clock, source: () => hold }).run({ untilS: clock.nowS() + 0.3 });
    await emu.resetRecords();
    rig.worker.postMessage({ op: 'hang' });
    const hungAtS = clock.nowS();
    // The main thread goes on as a rollout would, until the rig reads as faulted.
    const loop = new ControlLoop({
      rig,
      clock,
      source: (state) => {
        if (state.mode === 'fault') loop.stop();
        return hold;
      },
    });
    await loop.run({ untilS: clock.nowS() + 5 });
    const state = rig.read();
    assert.equal(
      state.mode,
      'fault',
      `still ${state.mode} ${(clock.nowS() - hungAtS).toFixed(1)} s after the rig thread hung`,
    );
    assert.equal(state.faults.length, 1, 'one fault');
    const sentence = state.faults[0].message;
    assert.match(
      sentence,
      /^The rig thread has not run its motor loop for \d+ ms \(it hangs\), so the motors get no more commands and damp by their own watchdog; bring the rig up again to continue\.$/,
    );
    assert.equal(sentence.split(/[.!?]\s+[A-Z]/).length, 1, `one sentence: ${sentence}`);
    const st = await emu.status();
    for (const m of motors(st))
      assert.equal(m.everLost, true, `the ${m.side} motor ${m.id} damped by its own watchdog (status ${m.status})`);
    await assert.rejects(rig.activate(), (e: Error) => e.message === sentence);
  } finally {
    await rig.close();
  }
});

test('an e-stop from another thread (a foot pedal) reaches the rig thread through shared memory and damps the arms while the main thread is blocked', async () => {
  await emu.reset();
  const clock = new RealtimeClock();
  const rig = createThreadedYamCanRig(
    { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 },
    { clock },
  );
  const go = new SharedArrayBuffer(4);
  const pedal = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     (async () => {
       (await import('tsx/esm/api')).register();
       const { RigThreadMemory } = await import(workerData.memoryUrl);
       const memory = new RigThreadMemory(workerData.buffer);
       parentPort.postMessage('ready');
       Atomics.wait(new Int32Array(workerData.go), 0, 0);
       memory.requestEstop('the foot pedal was pressed');
     })();`,
    {
      eval: true,
      workerData: {
        buffer: rig.sharedMemory,
        go,
        memoryUrl: new URL('../../src/rig/rig-thread-memory.js', import.meta.url).href,
      },
    },
  );
  try {
    await new Promise((resolve) => pedal.once('message', resolve));
    await rig.configure();
    await rig.activate();
    const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
    await new ControlLoop({ rig, clock, source: () => hold }).run({ untilS: clock.nowS() + 0.2 });
    await emu.resetRecords();
    await clock.waitUntil(clock.nowS() + 0.05);
    // Press the pedal, then block this thread: the stop must not wait for it.
    const blockStart = performance.timeOrigin + performance.now();
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    busyMs(400);
    const blockEnd = performance.timeOrigin + performance.now();
    const st = await emu.status();
    for (const m of motors(st)) {
      assert.ok(
        m.dampedAtEpochMs > blockStart && m.dampedAtEpochMs < blockEnd,
        `the ${m.side} motor ${m.id} was damped while this thread was blocked (${(m.dampedAtEpochMs - blockStart).toFixed(0)} ms into a 400 ms block)`,
      );
    }
    assert.equal(rig.read().mode, 'estopped');
    assert.ok(
      rig.takeSafetyEvents().some((e) => e.kind === 'estop' && /the foot pedal was pressed/.test(e.message)),
      'the e-stop event carries the pedal’s reason',
    );
  } finally {
    await pedal.terminate();
    await rig.close();
  }
});

test('the cell interlock reaches the rig thread: opening it stops and damps the arms with its reason; an interlock the station cannot vouch for (main thread blocked over 1 s) reads open', async () => {
  await emu.reset();
  const clock = new RealtimeClock();
  // The PLC client's contract (drivers/cell-io): the latest reading, synchronous.
  let reading: InterlockReading = { open: false };
  const interlock: CellInterlock = { current: () => reading };
  const bringUp = async () => {
    const rig = createThreadedYamCanRig(
      { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 },
      { clock, interlock },
    );
    await rig.configure();
    await rig.activate();
    rig.takeSafetyEvents();
    return rig;
  };
  let rig = await bringUp();
  try {
    const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
    const loop = new ControlLoop({ rig, clock, source: () => hold });
    await loop.run({ untilS: clock.nowS() + 0.2 });
    reading = { open: true, reason: 'The cell door is open.' };
    await loop.run({ untilS: clock.nowS() + 0.2 });
    assert.equal(rig.read().mode, 'estopped');
    const stop = rig.takeSafetyEvents().find((e) => e.kind === 'interlock-stop');
    assert.match(stop?.message ?? '', /^The cell door is open\. Arms stopped/);
    const st = await emu.status();
    assert.ok(
      motors(st).every((m) => m.status === 1 && m.kp === 0),
      'every motor only damps',
    );
    await rig.close();

    reading = { open: false };
    await emu.reset();
    rig = await bringUp();
    busyMs(1300);
    await clock.waitUntil(clock.nowS() + 0.05);
    assert.equal(rig.read().mode, 'estopped', 'a stale interlock reading stopped the arms');
    assert.ok(
      rig
        .takeSafetyEvents()
        .some((e) => e.kind === 'interlock-stop' && /has not confirmed the cell's interlock/.test(e.message)),
    );
  } finally {
    await rig.close();
  }
});

/** Holds with `rig` until the left arm's adapter, pulled mid-hold, shows as a fault; what an operator then reads. */
async function pullTheLeftAdapter(
  rig: Rig,
  clock: RealtimeClock,
): Promise<{ faults: RigFault[]; faultHold: string | undefined }> {
  await rig.configure();
  await rig.activate();
  rig.takeSafetyEvents();
  const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
  let cycles = 0;
  let pulled = false;
  const loop = new ControlLoop({
    rig,
    clock,
    source: (state) => {
      cycles++;
      if (pulled && state.faults.length > 0) loop.stop();
      return hold;
    },
  });
  const running = loop.run({ untilS: clock.nowS() + 10 });
  await until(() => cycles >= 50, 5000);
  await emu.unplug('left');
  pulled = true;
  await running;
  const faults = rig.read().faults.map((f) => ({ ...f }));
  const faultHold = rig.takeSafetyEvents().find((e) => e.kind === 'fault-hold')?.message;
  return { faults, faultHold };
}

/** Activates `rig` once its left adapter is back and the bus has reopened by itself. */
async function activateOnceReconnected(rig: Rig, clock: RealtimeClock): Promise<void> {
  const end = clock.nowS() + 5;
  for (;;) {
    try {
      await rig.activate();
      return;
    } catch (e) {
      if (clock.nowS() > end) throw e;
      await clock.waitUntil(clock.nowS() + 0.05);
    }
  }
}

test('an adapter pulled while the rig thread runs: the operator reads the same RigFault sentences as with the rig in-thread, and the rig activates again once it is back', async () => {
  await emu.reset();
  const clock = new RealtimeClock();
  const config: RigConfig = { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 };
  // Today's rig on this thread (the native serialport binding): what an operator reads.
  const inThread = createYamCanRig(config, { clock });
  let expected: Awaited<ReturnType<typeof pullTheLeftAdapter>>;
  try {
    expected = await pullTheLeftAdapter(inThread, clock);
    await emu.replug('left');
    await activateOnceReconnected(inThread, clock);
    await inThread.deactivate();
  } finally {
    await inThread.close();
  }
  assert.equal(expected.faults.length, 1, JSON.stringify(expected.faults));
  assert.match(
    expected.faults[0].message,
    /^The SLCAN adapter on \S+left disconnected \(unplugged or closed\); motors without commands fall back to their own watchdog\. Plug it back in; the station reconnects by itself, then activate the rig again\.$/,
  );

  await emu.reset();
  const rig = createThreadedYamCanRig(config, { clock });
  try {
    const got = await pullTheLeftAdapter(rig, clock);
    assert.deepEqual(got.faults, expected.faults);
    assert.equal(got.faultHold, expected.faultHold);
    assert.equal(rig.read().mode, 'fault');
    await emu.replug('left');
    await activateOnceReconnected(rig, clock);
    assert.equal(rig.read().mode, 'active');
    assert.deepEqual(rig.read().faults, []);
    await rig.deactivate();
  } finally {
    await rig.close();
  }
});
