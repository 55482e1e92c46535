import { test } from 'node:test';
import assert from 'node:assert/strict';
import load from 'mujoco-js';
import { yamRigModel, YAM_LIMIT_BUFFER_RAD } from '../../src/rig/yam.js';
import { linkFramesTable, LINK_NAMES } from '../../src/rig/kinematics.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { DEFAULT_SIM_CALIBRATION, withCalibration, type SimCalibration } from '../../src/sim/calibration.js';
import { exportMjcf, type MjcfScene } from '../../src/sim/mjcf-export.js';
import { createScene, SceneError } from '../../src/sim/scene.js';
import { newMotorCommand } from '../../src/sim/arm/motor-command.js';
import type { Layout, TaskDefinition } from '../../src/tasks/types.js';

// The exported MJCF loaded in real MuJoCo 3 (WebAssembly): what someone stepping the twin's scene
// in MuJoCo depends on — the same bodies, joints in the rig's order with the sim's limits, the
// catalogue's masses, objects that rest on the table, and arms that hold a pose as the sim's do.

const mj = await load();
const rig = yamRigModel();
const bottles = getTask('bottles-in-the-bin');
const tier5 = sampleLayoutSet({ task: bottles.id, tiers: [5], perTier: 1, seed: 2026 }).layouts[0];

type Mj = typeof mj;
type Model = InstanceType<Mj['MjModel']>;
type Data = InstanceType<Mj['MjData']>;

let fileNo = 0;
function loadXml(xml: string): { m: Model; d: Data } {
  const path = `/tandem-${fileNo++}.xml`;
  mj.FS.writeFile(path, xml);
  const m = mj.MjModel.loadFromXML(path);
  return { m, d: new mj.MjData(m) };
}
const id = (m: Model, type: { value: number }, name: string): number => mj.mj_name2id(m, type.value, name);
const JOINT = mj.mjtObj.mjOBJ_JOINT;
const BODY = mj.mjtObj.mjOBJ_BODY;
const ACTUATOR = mj.mjtObj.mjOBJ_ACTUATOR;

async function exported(
  task: TaskDefinition,
  layout: Layout,
  calibration = DEFAULT_SIM_CALIBRATION,
): Promise<MjcfScene> {
  return exportMjcf({ rigModel: rig, task, layout, calibration });
}

test('the tier-5 bottles scene loads in MuJoCo with every body, joint and motor the sim has', async () => {
  const s = await exported(bottles, tier5);
  const { m } = loadXml(s.xml);
  const movableFixtures = tier5.fixtures.filter(
    (f) => bottles.fixtureKinds.find((k) => k.id === f.kind)!.movable,
  ).length;
  // world + table + floor + per arm (base, 5 links, gripper, 2 fingers) + fixtures + objects
  assert.equal(m.nbody, 1 + 2 + 2 * 9 + tier5.fixtures.length + tier5.objects.length);
  // per arm 6 hinges + 2 finger slides, one free joint per object and movable fixture
  assert.equal(m.njnt, 2 * 8 + tier5.objects.length + movableFixtures);
  assert.equal(m.nu, 2 * 8);
  for (const o of tier5.objects) assert.ok(id(m, BODY, o.id) >= 0, `body ${o.id}`);
  for (const f of tier5.fixtures) assert.ok(id(m, BODY, f.id) >= 0, `body ${f.id}`);
});

test("the arms' joints come in the rig's order, with the sim's end stops as range and the rig's limits as command range", async () => {
  const s = await exported(bottles, tier5);
  const { m } = loadXml(s.xml);
  const names = rig.arms.flatMap((a) => a.joints.map((j) => j.name));
  assert.deepEqual(s.armJoints, names);
  let lastAddr = -1;
  for (const arm of rig.arms) {
    for (const j of arm.joints) {
      const jid = id(m, JOINT, j.name);
      assert.ok(jid >= 0, j.name);
      assert.equal(m.jnt_type[jid], mj.mjtJoint.mjJNT_HINGE.value, `${j.name} is a hinge`);
      const addr = m.jnt_qposadr[jid];
      assert.ok(addr > lastAddr, `${j.name} comes after the previous arm joint in qpos`);
      lastAddr = addr;
      assert.ok(Math.abs(m.jnt_range[2 * jid] - (j.minRad - YAM_LIMIT_BUFFER_RAD)) < 1e-6, `${j.name} lower stop`);
      assert.ok(Math.abs(m.jnt_range[2 * jid + 1] - (j.maxRad + YAM_LIMIT_BUFFER_RAD)) < 1e-6, `${j.name} upper stop`);
      const aid = id(m, ACTUATOR, `${j.name}_motor`);
      assert.ok(aid >= 0, `${j.name}_motor`);
      assert.ok(
        Math.abs(m.actuator_ctrlrange[2 * aid] - j.minRad) < 1e-6 &&
          Math.abs(m.actuator_ctrlrange[2 * aid + 1] - j.maxRad) < 1e-6,
        `${j.name} command range`,
      );
      assert.ok(Math.abs(m.actuator_gainprm[10 * aid] - j.kp) < 1e-9, `${j.name} kp`);
      assert.ok(Math.abs(m.actuator_biasprm[10 * aid + 2] + j.kd) < 1e-9, `${j.name} kd`);
    }
  }
});

test("MuJoCo's forward kinematics of the exported arms is the rig model's, at a pose away from home", async () => {
  const s = await exported(bottles, tier5);
  const { m, d } = loadXml(s.xml);
  const q = [0.3, 1.2, 1.0, -0.4, 0.5, 0.7, -0.5, 0.8, 0.6, 0.3, -0.2, 1.1];
  rig.arms.forEach((arm, a) =>
    arm.joints.forEach((j, i) => (d.qpos[m.jnt_qposadr[id(m, JOINT, j.name)]] = q[a * 6 + i])),
  );
  mj.mj_forward(m, d);
  rig.arms.forEach((arm, a) => {
    const frames = linkFramesTable(arm, q.slice(a * 6, a * 6 + 6));
    LINK_NAMES.forEach((link, i) => {
      const b = id(m, BODY, `${arm.side}_${link}`);
      const got = [d.xpos[3 * b], d.xpos[3 * b + 1], d.xpos[3 * b + 2]];
      const want = frames[i].position;
      const err = Math.hypot(got[0] - want[0], got[1] - want[1], got[2] - want[2]);
      assert.ok(
        err < 1e-5,
        `${arm.side}_${link} at [${got.map((x) => x.toFixed(4))}], the rig model says [${Array.from(want, (x) => x.toFixed(4))}]`,
      );
    });
  });
});

test("objects and fixtures weigh what the catalogue says (times the calibration's mass scale)", async () => {
  const cal = withCalibration(DEFAULT_SIM_CALIBRATION, { objectMassScale: 1.5 });
  const s = await exported(bottles, tier5, cal);
  const { m } = loadXml(s.xml);
  for (const o of tier5.objects) {
    const want = bottles.objectKinds.find((k) => k.id === o.kind)!.massKg * 1.5;
    const got = m.body_mass[id(m, BODY, o.id)];
    assert.ok(
      Math.abs(got - want) < 1e-5 * want,
      `${o.id} weighs ${got} kg in MuJoCo, the catalogue × 1.5 says ${want}`,
    );
  }
  for (const f of tier5.fixtures) {
    const kind = bottles.fixtureKinds.find((k) => k.id === f.kind)!;
    if (!kind.movable) continue;
    const got = m.body_mass[id(m, BODY, f.id)];
    assert.ok(Math.abs(got - kind.massKg * 1.5) < 1e-5 * kind.massKg, `${f.id} weighs ${got} kg`);
  }
});

test('after a second of MuJoCo stepping every object still rests on the table (none sinks into it or falls through)', async () => {
  for (const task of [bottles, getTask('mug-flipping'), getTask('sort-from-tote')]) {
    const layout = sampleLayoutSet({ task: task.id, tiers: [3], perTier: 1, seed: 5 }).layouts[0];
    const s = await exported(task, layout);
    const { m, d } = loadXml(s.xml);
    mj.mj_forward(m, d);
    const start = new Map(s.objects.map((o) => [o, d.xpos[3 * id(m, BODY, o) + 2]] as const));
    const steps = Math.round(1 / DEFAULT_SIM_CALIBRATION.physicsStepS);
    for (let k = 0; k < steps; k++) mj.mj_step(m, d);
    for (const o of s.objects) {
      const z = d.xpos[3 * id(m, BODY, o) + 2];
      const z0 = start.get(o)!;
      // Built 0.5 mm above their rest, objects settle onto the top; MuJoCo's soft contact sinks ≈1 mm.
      assert.ok(
        Math.abs(z - z0) < 0.004,
        `${task.id} ${o}: body origin went from z = ${z0.toFixed(4)} to ${z.toFixed(4)} m in 1 s`,
      );
    }
  }
});

/**
 * Both arms hold `target` under their MIT motors (kp, kd, no feed-forward) for a second, in the sim
 * (by default) and in MuJoCo on the exported file: gravity pulls each joint off its target until kp·Δq carries
 * the weight, so the sag measures the link masses, centres of mass, motor gains and joint friction
 * together. Returns both sets of angles and the sim's sag.
 */
async function holdInBoth(
  cal: SimCalibration,
  seconds = 1,
): Promise<{ simQ: number[]; mjQ: number[]; sag: number[]; rows: string[] }> {
  const layout: Layout = {
    index: 0,
    tier: 1,
    fixtures: [{ id: 'bin', kind: 'bin', pose: { x: 0.1, y: -0.3, yawRad: 0 } }],
    objects: [],
  };
  const target = HOLD_TARGET;

  const scene = await createScene({
    rigModel: rig,
    task: bottles,
    layout,
    calibration: cal,
    startPosition: [...target.slice(0, 6), 1, ...target.slice(6), 1],
  });
  const cmds = rig.arms.map((arm, a) => {
    const c = newMotorCommand();
    arm.joints.forEach((j, i) => {
      c.q[i] = target[a * 6 + i];
      c.kp[i] = j.kp;
      c.kd[i] = j.kd;
    });
    c.gripper = 1;
    c.gripperKp = arm.gripper.kp;
    c.gripperKd = arm.gripper.kd;
    return c;
  });
  for (let k = 0; k < Math.round(seconds / cal.physicsStepS); k++) scene.step(cmds);
  const simQ = scene.arms.flatMap((arm) => Array.from(arm.q));
  scene.free();

  const s = await exported(bottles, layout, cal);
  const { m, d } = loadXml(s.xml);
  const jointNames = rig.arms.flatMap((a) => a.joints.map((j) => j.name));
  jointNames.forEach((n, i) => {
    d.qpos[m.jnt_qposadr[id(m, JOINT, n)]] = target[i];
    d.ctrl[id(m, ACTUATOR, `${n}_motor`)] = target[i];
  });
  for (const side of ['left', 'right'])
    for (const f of ['a', 'b']) d.ctrl[id(m, ACTUATOR, `${side}_finger_${f}_motor`)] = rig.arms[0].gripper.strokeM / 2;
  for (let k = 0; k < Math.round(seconds / cal.physicsStepS); k++) mj.mj_step(m, d);
  const mjQ = jointNames.map((n) => d.qpos[m.jnt_qposadr[id(m, JOINT, n)]]);

  const sag = simQ.map((q, i) => Math.abs(q - target[i]));
  const rows = jointNames.map(
    (n, i) => `${n} target ${target[i].toFixed(3)} sim ${simQ[i].toFixed(4)} MuJoCo ${mjQ[i].toFixed(4)}`,
  );
  return { simQ, mjQ, sag, rows };
}

const HOLD_TARGET = [0.3, 1.2, 1.0, -0.4, 0.5, 0.7, -0.5, 0.8, 0.6, 0.3, -0.2, 1.1];
const HOLD_TOLERANCE_RAD = 0.005;

function assertSameHold(r: { simQ: number[]; mjQ: number[]; sag: number[]; rows: string[] }): void {
  // The hold must actually load the joints, or agreement would say nothing.
  assert.ok(Math.max(...r.sag) > 0.02, `largest sag in the sim only ${Math.max(...r.sag).toFixed(4)} rad`);
  const worst = Math.max(...r.mjQ.map((q, i) => Math.abs(q - r.simQ[i])));
  assert.ok(
    worst < HOLD_TOLERANCE_RAD,
    `MuJoCo and the sim differ by up to ${worst.toFixed(4)} rad:\n${r.rows.join('\n')}`,
  );
}

test('an arm holding a pose under its MIT motors (kp, kd, no feed-forward) sags to the same angles in MuJoCo as in the sim', async () => {
  assertSameHold(await holdInBoth(DEFAULT_SIM_CALIBRATION));
});

test("a record fitted by sysid (weaker motors, the gripper rotor's reflected mass) holds the same in MuJoCo as in the sim", async () => {
  // What `tandem sysid fit` writes: torque scales below 1 on the shoulder and elbow (they sag
  // more) and 0.6 kg of rotor mass at each finger that moves with the hand but weighs nothing.
  const fitted = withCalibration(DEFAULT_SIM_CALIBRATION, {
    motorTorqueScale: [1, 0.75, 0.8, 0.9, 1, 1],
    fingerReflectedMassKg: 0.6,
  });
  // Three seconds: the heavier hand is still swinging slightly at one (the two engines' transients
  // then differ by a few mrad); the settled hold is what the masses, gains and gravity decide.
  const r = await holdInBoth(fitted, 3);
  const plain = await holdInBoth(DEFAULT_SIM_CALIBRATION, 3);
  // The fitted fields change the hold, or the comparison would not test them.
  const moved = Math.max(...r.simQ.map((q, i) => Math.abs(q - plain.simQ[i])));
  assert.ok(moved > 0.01, `the fitted record moves the sim's hold by only ${moved.toFixed(4)} rad`);
  assertSameHold(r);
  const s = await exported(bottles, { index: 0, tier: 1, fixtures: [], objects: [] }, fitted);
  const { m } = loadXml(s.xml);
  const finger = id(m, BODY, 'left_finger_a');
  const plainFinger = loadXml((await exported(bottles, { index: 0, tier: 1, fixtures: [], objects: [] })).xml);
  // The rotor's mass rides on the finger (so the hand is as heavy to turn as in the sim).
  assert.ok(
    Math.abs(m.body_mass[finger] - plainFinger.m.body_mass[id(plainFinger.m, BODY, 'left_finger_a')] - 0.6) < 1e-4,
    `finger mass ${m.body_mass[finger]}`,
  );
});

test('a layout the sim cannot build is refused with the sim’s own sentence, not exported', async () => {
  const bad: Layout = {
    ...tier5,
    objects: [
      ...tier5.objects,
      {
        id: 'teapot-1',
        kind: 'teapot',
        pose: { x: 0, y: 0, yawRad: 0 },
        posture: 'upright',
      } as Layout['objects'][number],
    ],
  };
  await assert.rejects(
    exported(bottles, bad),
    (e: unknown) => e instanceof SceneError && /object kind 'teapot'/.test(e.message),
  );
});
