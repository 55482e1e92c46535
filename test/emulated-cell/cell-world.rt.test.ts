import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEmulatedCell, type EmulatedCell } from '../../src/emulated-cell/emulated-cell.js';
import { PLACEMENT_SIGMA_M } from '../../src/emulated-cell/cell-world.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { ControlLoop } from '../../src/rig/control-loop.js';
import type { CellGap } from '../../src/emulated-cell/cell-truth.js';
import type { FeedForwardSettings } from '../../src/rig/gravity.js';
import { until } from '../helpers/until.js';

const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 5], perTier: 1, seed: 21 });
const task = getTask(set.task);
// This machine's cores are shared: the longest reply deadline the driver accepts, so a starved
// test process does not read as a silent motor.
const REPLY_DEADLINE_MS = 350;

async function cell(
  opts: { gap?: CellGap; layout?: number; feedForward?: FeedForwardSettings | false; placementSeed?: number } = {},
): Promise<{ cell: EmulatedCell; clock: RealtimeClock }> {
  const clock = new RealtimeClock();
  const c = await createEmulatedCell({
    task,
    layout: set.layouts[opts.layout ?? 0],
    gap: opts.gap ?? { kind: 'none' },
    clock,
    replyDeadlineMs: REPLY_DEADLINE_MS,
    feedForward: opts.feedForward,
    placementSeed: opts.placementSeed,
  });
  return { cell: c, clock };
}

/** Holds a reaching pose (shoulder and elbow out, both arms) for `seconds` under the real control loop; returns the pose error per entry. */
async function holdReach(c: EmulatedCell, clock: RealtimeClock, seconds: number): Promise<number[]> {
  const rig = c.rig;
  await rig.configure();
  await rig.activate();
  const target = Float64Array.from(rig.read().position);
  const reach = [0.3, 1.0, 1.0, 0.2, 0, 0, 0.5];
  for (let j = 0; j < 7; j++) target[j] = target[7 + j] = reach[j];
  const loop = new ControlLoop({ rig, clock, rateHz: 250, source: () => ({ position: target }) });
  await loop.run({ untilS: clock.nowS() + seconds });
  const st = rig.read();
  assert.deepEqual(st.faults, [], 'no fault while holding');
  const err = Array.from(st.position, (p, k) => p - target[k]);
  await rig.deactivate();
  return err;
}

/** Activates the cell's rig and holds its pose under the control loop for `seconds`; resolves 0.3 s in, with the loop's end to await. */
async function holdUnderLoop(
  c: EmulatedCell,
  clock: RealtimeClock,
  seconds: number,
): Promise<{ running: Promise<unknown> }> {
  await c.rig.configure();
  await c.rig.activate();
  const hold = { position: Float64Array.from(c.rig.read().position) };
  const running = new ControlLoop({ rig: c.rig, clock, rateHz: 250, source: () => hold }).run({
    untilS: clock.nowS() + seconds,
  });
  await new Promise((r) => setTimeout(r, 300));
  return { running };
}

test('the real driver stack moves the cell: configure reads the resting arms, the loop drives them to a pose through the byte protocol', async () => {
  const { cell: c, clock } = await cell();
  try {
    await c.rig.configure();
    const rest = c.rig.read().position;
    // Unpowered at start, the arms rest folded on their stops, a hair inside the shoulder's and
    // elbow's lower limits (as a real YAM does), and the wrist has flopped down.
    assert.ok(
      rest[1] > 0 && rest[1] < 0.03 && rest[2] > 0 && rest[2] < 0.03,
      `resting shoulder/elbow ${rest[1]}, ${rest[2]}`,
    );
    const err = await holdReach(c, clock, 2.5);
    // The world's own joint angles agree with what the feedback frames said.
    const q = c.world.scene.arms[0].q;
    assert.ok(Math.abs(q[1] - 1.0) < 0.05 && Math.abs(q[2] - 1.0) < 0.05, `world shoulder/elbow ${q[1]}, ${q[2]}`);
    assert.ok(Math.abs(err[0]) < 0.05, 'joint 1 reached');
    assert.ok(c.emulated.devices.left!.bus.framesReceived > 1000, 'the rig spoke to the cell frame by frame');
  } finally {
    await c.close();
  }
});

test('gravity feed-forward on the cell: a held reaching pose stays within 0.01 rad with it, and sags measurably without it (gap none)', async () => {
  const withFf = await cell();
  let errWith: number[];
  try {
    errWith = await holdReach(withFf.cell, withFf.clock, 2.5);
  } finally {
    await withFf.cell.close();
  }
  const without = await cell({ feedForward: false });
  let errWithout: number[];
  try {
    errWithout = await holdReach(without.cell, without.clock, 2.5);
  } finally {
    await without.cell.close();
  }
  for (const k of [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12])
    assert.ok(Math.abs(errWith[k]) < 0.01, `with feed-forward, entry ${k} is off by ${errWith[k].toFixed(4)} rad`);
  // Elbow (kp 80) and wrist pitch (kp 10) carry the forearm and gripper: they sag by tens of mrad.
  assert.ok(errWithout[2] < -0.03, `without feed-forward the elbow sags (${errWithout[2].toFixed(4)} rad)`);
  assert.ok(Math.abs(errWithout[3]) > 0.05, `without feed-forward the wrist sags (${errWithout[3].toFixed(4)} rad)`);
});

test('objects in: the scripted operator places the layout within millimetres of its outlines, differently per placement seed', async () => {
  const layout = set.layouts[1];
  const poses = async (seed: number): Promise<Map<string, [number, number]>> => {
    const { cell: c } = await cell({ layout: 1, placementSeed: seed });
    try {
      return new Map(c.world.privilegedState().objects.map((o) => [o.id, [o.position[0], o.position[1]]]));
    } finally {
      await c.close();
    }
  };
  const a = await poses(1);
  const b = await poses(2);
  let moved = 0;
  for (const o of layout.objects) {
    const pa = a.get(o.id)!;
    const pb = b.get(o.id)!;
    const d = Math.hypot(pa[0] - o.pose.x, pa[1] - o.pose.y);
    // Placement noise (σ 2 mm per axis) plus settling: well under a centimetre, for an upright bottle.
    if (o.posture === undefined || o.posture === 'upright')
      assert.ok(d < 6 * PLACEMENT_SIGMA_M + 0.005, `${o.id} placed ${(d * 1000).toFixed(1)} mm from its outline`);
    if (Math.hypot(pa[0] - pb[0], pa[1] - pb[1]) > 1e-4) moved++;
  }
  assert.ok(moved > 0, 'another placement seed places differently');
});

test("end state out: what the cell reports is in the task's scoring terms, and a bottle put in the bin scores", async () => {
  const { cell: c } = await cell({ layout: 0 });
  try {
    const before = c.world.endStates();
    assert.deepEqual(before.map((e) => e.id).sort(), set.layouts[0].objects.map((o) => o.id).sort());
    assert.equal(task.scoreProgress(set.layouts[0], before).progress, 0);
    // Lift the first bottle into the bin by hand (as an operator might when testing the scorer).
    const scene = c.world.scene;
    const bin = scene.fixtures.find((f) => f.kind.includes('bin'))!;
    const t = bin.body.translation();
    const bottle = scene.objects[0].body;
    bottle.setTranslation({ x: t.x, y: t.y, z: 0.08 }, true);
    bottle.setRotation({ x: 0, y: 0, z: 0, w: 1 }, true);
    await new Promise((r) => setTimeout(r, 1000));
    const after = c.world.endStates();
    assert.equal(after[0].region, 'bin', JSON.stringify(after[0]));
    assert.ok(task.scoreProgress(set.layouts[0], after).progress > 0);
  } finally {
    await c.close();
  }
});

test('the interlock input damps the arms through the driver and refuses activation until it closes', async () => {
  const { cell: c, clock } = await cell();
  try {
    const rig = c.rig;
    const { running } = await holdUnderLoop(c, clock, 1.5);
    c.inputs.interlockOpen = true;
    await until(() => rig.read().mode === 'fault', 1000);
    await running;
    assert.match(
      rig
        .read()
        .faults.map((f) => f.message)
        .join(' '),
      /interlock is open/,
    );
    // What reaches the motors: no stiffness on a damped arm.
    for (let id = 1; id <= 6; id++) assert.equal(c.bus('left').motor(id).drive().kp, 0, `left motor ${id} kp`);
    await assert.rejects(rig.activate(), /interlock is open/);
    c.inputs.interlockOpen = false;
    await rig.activate();
    assert.equal(rig.read().mode, 'active');
    await rig.deactivate();
  } finally {
    await c.close();
  }
});

test('a world that falls behind real time says so as a fault, and the arms are damped', async () => {
  const { cell: c, clock } = await cell();
  try {
    const rig = c.rig;
    const { running } = await holdUnderLoop(c, clock, 1.5);
    // Starve the process for 0.8 s, as an overloaded machine would: the world cannot step meanwhile.
    const end = performance.now() + 800;
    while (performance.now() < end);
    await running;
    const faults = rig.read().faults;
    assert.ok(
      faults.some((f) => f.kind === 'emulation-behind' && /fell \d+ ms behind real time/.test(f.message)),
      JSON.stringify(faults),
    );
    assert.ok(c.world.timing().behindEvents >= 1);
    assert.notEqual(rig.read().mode, 'active');
    await rig.deactivate();
  } finally {
    await c.close();
  }
});
