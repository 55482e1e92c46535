import { test } from 'node:test';
import assert from 'node:assert/strict';
import { yamRigModel } from '../../src/rig/yam.js';
import { SORT_FROM_TOTE, SORTER, BOLTS, NUTS, RINGS, SCREWS } from '../../src/tasks/index.js';
import { SortEventTracker, sortReturnFromEvents } from '../../src/tasks/sort-from-tote-events.js';
import { DEFAULT_SIM_CALIBRATION } from '../../src/sim/calibration.js';
import { createScene, HOME_START_POSITION, type SimScene } from '../../src/sim/scene.js';
import { SimRig } from '../../src/sim/sim-rig.js';
import { quatRotate } from '../../src/pose/quaternion.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import type { Layout, LayoutObject } from '../../src/tasks/types.js';

// sort-from-tote in the sim: the tote and the sorter's slots are collision geometry parts rest in
// and fall into, and the task's events and reward come out of the privileged state for
// hand-built end states (parts dropped into their slot, a wrong slot, onto the table, off it).

const SORTER_POSE = { x: -0.1, y: -0.105, yawRad: 0 };
const TOTE_POSE = { x: -0.05, y: 0.32, yawRad: 0 };
const fixtures = [
  { id: 'tote', kind: 'tote', pose: TOTE_POSE },
  { id: 'sorter', kind: 'sorter', pose: SORTER_POSE },
];

/** World centre of a slot region, and its floor height. */
function slot(category: string): { x: number; y: number } {
  const r = SORTER.regions.find((x) => x.id === `slot:${category}`)!;
  return { x: SORTER_POSE.x + r.centerM[0], y: SORTER_POSE.y + r.centerM[1] };
}

async function rigOn(
  layout: Layout,
): Promise<{ scene: SimScene; rig: SimRig; hold: (seconds: number, each?: (timeS: number) => void) => void }> {
  const scene = await createScene({
    rigModel: yamRigModel(),
    task: SORT_FROM_TOTE,
    layout,
    calibration: DEFAULT_SIM_CALIBRATION,
  });
  const rig = new SimRig({ scene, safety: { controlPeriodS: 1 / 50 } });
  await rig.configure();
  await rig.activate();
  const position = Float64Array.from(HOME_START_POSITION);
  let ticks = 0;
  const hold = (seconds: number, each?: (timeS: number) => void): void => {
    for (let k = 0; k < Math.round(seconds * 50); k++) {
      rig.write({ position });
      ticks += 1;
      void rig.clock.waitUntil(ticks / 50);
      rig.tick();
      each?.(ticks / 50);
    }
  };
  return { scene, rig, hold };
}

/** Puts a part's centre (of its bounding box) at (x, y, z), as it lies, with velocity v. */
function place(
  scene: SimScene,
  id: string,
  x: number,
  y: number,
  z: number,
  v: { x: number; y: number; z: number } = { x: 0, y: 0, z: 0 },
): void {
  const o = scene.objects.find((p) => p.id === id)!;
  const b = o.body;
  const r = b.rotation();
  const c = quatRotate([r.x, r.y, r.z, r.w], o.centreLocal);
  b.setTranslation({ x: x - c[0], y: y - c[1], z: z - c[2] }, true);
  b.setLinvel(v, true);
  b.setAngvel({ x: 0, y: 0, z: 0 }, true);
}

test('every part of every size dropped above its slot comes to rest in it, and each is +1 once; one in a wrong slot, one on the table, one off it', async () => {
  const kinds = [...SCREWS, ...BOLTS, ...NUTS, ...RINGS];
  const objects: LayoutObject[] = kinds.map((k, i) => ({
    id: `${k.category}-${i}`,
    kind: k.id,
    posture: k.restingPostures![0],
    pose: { x: -0.2 + 0.08 * (i % 4), y: 0.22 + 0.07 * Math.floor(i / 4), yawRad: 0 },
    inFixture: 'tote',
  }));
  objects.push({
    id: 'nut-wrong',
    kind: NUTS[1].id,
    posture: 'upright',
    pose: { x: 0.1, y: 0.42, yawRad: 0 },
    inFixture: 'tote',
  });
  objects.push({
    id: 'bolt-table',
    kind: BOLTS[1].id,
    posture: 'lying',
    pose: { x: 0.09, y: 0.22, yawRad: 0 },
    inFixture: 'tote',
  });
  objects.push({
    id: 'screw-off',
    kind: SCREWS[1].id,
    posture: 'lying',
    pose: { x: -0.2, y: 0.43, yawRad: 0 },
    inFixture: 'tote',
  });
  const layout: Layout = { index: 0, tier: 3, fixtures, objects };
  const { scene, rig, hold } = await rigOn(layout);
  try {
    hold(0.5);
    const tracker = new SortEventTracker(layout);
    tracker.observe(0, scene.sightings());
    assert.ok(
      scene.endStates().every((e) => e.region === 'tote'),
      `all parts start at rest in the tote: ${JSON.stringify(scene.endStates().filter((e) => e.region !== 'tote'))}`,
    );
    // Drop the 12 parts into their slots, a few centimetres apart so they do not land on each other.
    kinds.forEach((k, i) => {
      const s = slot(k.category!);
      place(scene, `${k.category}-${i}`, s.x, s.y - 0.03 + 0.03 * (i % 3), 0.08 + 0.03 * (i % 3));
    });
    const wrong = slot('screw');
    place(scene, 'nut-wrong', wrong.x + 0.03, wrong.y + 0.03, 0.09);
    place(scene, 'bolt-table', 0.25, 0.0, 0.02);
    place(scene, 'screw-off', 0.3, 0.0, 0.05, { x: 4, y: 0, z: 0 });
    hold(2, (t) => tracker.observe(t, scene.sightings()));
    assert.deepEqual(rig.read().faults, []);
    const ends = new Map(scene.endStates().map((e) => [e.id, e] as const));
    for (const [i, k] of kinds.entries())
      assert.equal(ends.get(`${k.category}-${i}`)?.region, `slot:${k.category}`, `${k.id} rests in its slot`);
    assert.equal(ends.get('nut-wrong')?.region, 'slot:screw');
    assert.equal(ends.get('bolt-table')?.region, undefined);
    assert.equal(ends.get('screw-off')?.offTable, true);
    const events = tracker.events();
    const of = (kind: string): string[] =>
      events
        .filter((e) => e.kind === kind)
        .map((e) => e.objectId)
        .sort();
    assert.deepEqual(of('in-correct-slot'), kinds.map((k, i) => `${k.category}-${i}`).sort());
    assert.deepEqual(of('in-wrong-slot'), ['nut-wrong']);
    assert.deepEqual(of('knocked-out'), ['bolt-table', 'screw-off']);
    assert.deepEqual(of('off-table'), ['screw-off']);
    assert.equal(
      events.reduce((s, e) => s + e.reward, 0),
      12 - 2,
    );
    assert.equal(sortReturnFromEvents(events), 10);
    // The task's own score agrees with where the parts lie.
    const score = SORT_FROM_TOTE.scoreProgress(layout, scene.endStates());
    assert.equal(score.counts.inCorrectSlot, 12);
    assert.equal(score.counts.inWrongSlot, 1);
  } finally {
    scene.free();
  }
});

test('tier-5 parts (45 small and medium) rest in the tote: none falls through its floor or walls', async () => {
  const set = sampleLayoutSet({ task: 'sort-from-tote', tiers: [5], perTier: 1, seed: 11 });
  const layout = set.layouts[0];
  const { scene, rig, hold } = await rigOn(layout);
  try {
    hold(1.5);
    assert.deepEqual(rig.read().faults, []);
    const outside = scene.endStates().filter((e) => e.region !== 'tote');
    assert.deepEqual(outside, [], 'every part is still in the tote');
    const fastest = Math.max(
      ...scene.objects.map((o) => Math.hypot(o.body.linvel().x, o.body.linvel().y, o.body.linvel().z)),
    );
    assert.ok(fastest < 0.05, `the parts have come to rest (fastest ${fastest.toFixed(3)} m/s)`);
  } finally {
    scene.free();
  }
});
