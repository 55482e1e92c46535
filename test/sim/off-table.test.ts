import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tickThrough } from '../rig/contract-suite.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { BOTTLES_IN_THE_BIN } from '../../src/tasks/index.js';
import { DEFAULT_SIM_CALIBRATION } from '../../src/sim/calibration.js';
import { createScene, HOME_START_POSITION, type SimScene } from '../../src/sim/scene.js';
import { SimRig } from '../../src/sim/sim-rig.js';
import type { Layout } from '../../src/tasks/types.js';

// A bottle knocked off the table is a policy failure (not in the bin), never an invalid rollout;
// a bottle through the table top or flung across it is a blow-up and stays invalid.

const LAYOUT: Layout = {
  index: 0,
  tier: 2,
  fixtures: [{ id: 'bin', kind: 'bin', pose: { x: -0.02, y: -0.3, yawRad: 0 } }],
  objects: [
    { id: 'bottle-0', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.42, y: 0.3, yawRad: 0 } },
    { id: 'bottle-1', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.1, y: 0.1, yawRad: 0 } },
  ],
};

async function rigOn(layout: Layout): Promise<{ scene: SimScene; rig: SimRig }> {
  const scene = await createScene({
    rigModel: yamRigModel(),
    task: BOTTLES_IN_THE_BIN,
    layout,
    calibration: DEFAULT_SIM_CALIBRATION,
  });
  const rig = new SimRig({ scene });
  await rig.configure();
  await rig.activate();
  return { scene, rig };
}

/** Ticks the rig for `seconds`, commanding the home pose every tick (as a policy holding still would). */
async function holdHome(rig: SimRig, seconds: number): Promise<void> {
  const position = Float64Array.from(HOME_START_POSITION);
  const end = rig.clock.nowS() + seconds - 1e-9;
  while (rig.clock.nowS() < end) {
    rig.write({ position });
    await tickThrough(rig, rig.clock, 1 / 250);
  }
}

function body(scene: SimScene, id: string) {
  const o = scene.objects.find((x) => x.id === id);
  assert.ok(o, `no object ${id}`);
  return o.body;
}

test('a bottle knocked hard off the table edge leaves a valid rollout with that bottle off the table and not in the bin', async () => {
  const { scene, rig } = await rigOn(LAYOUT);
  try {
    await holdHome(rig, 0.2);
    // Hard enough that it lands ~2 m out and keeps going: on the old 5 m floor it slid off and
    // fell until the speed check called the rollout a blow-up.
    body(scene, 'bottle-0').setLinvel({ x: 7, y: 0, z: 1 }, true);
    await holdHome(rig, 4);
    assert.deepEqual(rig.read().faults, [], 'a bottle off the table is not a sim fault');
    assert.deepEqual(scene.offTableIds(), ['bottle-0']);
    const ends = scene.endStates();
    const lost = ends.find((e) => e.id === 'bottle-0')!;
    assert.equal(lost.region, undefined);
    assert.equal(lost.offTable, true);
    assert.equal(body(scene, 'bottle-0').isEnabled(), false, 'a body off the table is frozen out of the solver');
    assert.equal(
      ends.find((e) => e.id === 'bottle-1')!.offTable,
      undefined,
      'the bottle still on the table is not off it',
    );
    const score = BOTTLES_IN_THE_BIN.scoreProgress(LAYOUT, ends);
    assert.equal(score.counts.inBin, 0);
    assert.equal(score.progress, 0);
  } finally {
    scene.free();
  }
});

test('a bottle knocked off the table and rolled under it is off the table, not through it', async () => {
  const { scene, rig } = await rigOn(LAYOUT);
  try {
    // Teleported just past the edge below the top, moving back under the table.
    const b = body(scene, 'bottle-0');
    b.setTranslation({ x: 0.52, y: 0.3, z: -0.2 }, true);
    b.setLinvel({ x: -1, y: 0, z: 0 }, true);
    await holdHome(rig, 1);
    assert.deepEqual(rig.read().faults, []);
    assert.deepEqual(scene.offTableIds(), ['bottle-0']);
  } finally {
    scene.free();
  }
});

test('a bottle that passes through the table top from above still makes the rollout invalid, with the reason', async () => {
  const { scene, rig } = await rigOn(LAYOUT);
  try {
    await holdHome(rig, 0.1);
    body(scene, 'bottle-1').setTranslation({ x: 0.1, y: 0.1, z: -0.1 }, true);
    await holdHome(rig, 0.1);
    const faults = rig.read().faults;
    assert.equal(faults.length, 1);
    assert.equal(faults[0].kind, 'sim-unstable');
    assert.match(faults[0].message, /'bottle-1' went through the table/);
    assert.deepEqual(scene.offTableIds(), []);
  } finally {
    scene.free();
  }
});

test('a bottle flung at absurd speed while still above the table makes the rollout invalid', async () => {
  const { scene, rig } = await rigOn(LAYOUT);
  try {
    await holdHome(rig, 0.1);
    body(scene, 'bottle-1').setLinvel({ x: 0, y: 0, z: 40 }, true);
    await holdHome(rig, 0.05);
    const faults = rig.read().faults;
    assert.equal(faults[0]?.kind, 'sim-unstable');
    assert.match(faults[0].message, /'bottle-1' flies at \d+ m\/s/);
  } finally {
    scene.free();
  }
});
