/**
 * The sim's scene as MJCF (MuJoCo's XML): the same scene `SimScene` builds from a layout — both
 * arms, table, floor, fixtures and objects — so MuJoCo can step the same work (bench/sim.bench.ts)
 * and anyone can check the twin's model in a tool they know.
 *
 * The scene is built first and its geometry read back from Rapier (every collider's shape, pose in
 * its body, mass, friction, collision groups), so the export cannot drift from what the sim
 * simulates; a layout the sim cannot build is refused with the same `SceneError` sentence. Only the
 * arms' tree (joint frames, axes, limits) comes from the rig model's chain (src/rig/yam.ts), because
 * MJCF nests bodies where Rapier keeps them flat and joined.
 *
 * What maps how (docs/sim.md "MJCF export"):
 * - joints: hinge per arm joint, `range` = where the sim's end stops sit (each limit widened by the
 *   vendor's 0.15 rad clamping buffer), `damping`/`frictionloss`/`armature` from the calibration;
 * - motors: a position servo (`general` actuator) per joint at the rig model's kp (kp) and kd (kv), `forcerange` the
 *   motor's torque limit and `ctrlrange` the joint limits the safety supervisor clamps commands to —
 *   the MIT law τ = kp(q*−q) − kd·dq with τff = 0 and dq* = 0;
 * - fingers: slide joints whose coordinate is the opening per finger (m), each driven like the sim's
 *   gripper motor (its kp, kd through the transmission, force limited to the calibration's squeeze);
 * - what system identification fits (docs/sysid.md): a joint's `motorTorqueScale` s scales every term
 *   of its servo (kp·s, kd·s; the clamp stays the motor's torque, as in the sim); the gripper rotor's
 *   reflected mass rides on each finger body as the sim carries it (Rapier spreads a body's extra
 *   mass like its collider's: here, the finger geom's mass) and, as in the sim, has no weight of its
 *   own: `gravcomp` cancels exactly that share of the finger's gravity (MuJoCo ≥ 2.3; written only
 *   when the record has the mass, so the built-in record's file still loads in Debian's 2.2.2);
 * - contacts: MuJoCo's contype/conaffinity bits reproduce the sim's groups (an arm never collides with
 *   itself, everything else collides);
 * - the integrator is `implicit` (damping and the motors' kv implicit, as Rapier's velocity motors
 *   make them in the sim) at the calibration's physics step.
 * Not carried over: Rapier averages two surfaces' frictions where MuJoCo takes the larger; Rapier's
 * solver substeps and sleeping have no MuJoCo counterpart; the vendor driver's gravity feed-forward
 * is the rig's command, not the scene's; the record's `commandLatencyS` is a delay of the commands
 * (SimRig holds each back that long), which MuJoCo's actuators have no attribute for: it is written
 * as a comment, for whoever drives the file to delay `ctrl` by.
 */
import type { Collider, RigidBody } from '@dimforge/rapier3d-deterministic-compat';
import type { RigModel } from '../rig/contract.js';
import { LINK_NAMES, rotationToQuaternion, rpyToRotation } from '../rig/kinematics.js';
import { YAM_CHAIN, YAM_LIMIT_BUFFER_RAD } from '../rig/yam.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import { motorTorqueScales, type SimCalibration } from './calibration.js';
import { GROUP } from './colliders.js';
import { quatConj, quatMul, quatRotate } from '../pose/quaternion.js';
import { loadRapier } from './rapier.js';
import { SimScene } from './scene.js';
import type { SimArm } from './arm/sim-arm.js';

type Vec3 = readonly [number, number, number];
type Quat = readonly [number, number, number, number];

export interface MjcfExportOptions {
  readonly rigModel: RigModel;
  readonly task: TaskDefinition;
  readonly layout: Layout;
  readonly calibration: SimCalibration;
}

/** What a user of the file needs to drive it: actuator order and the objects' bodies. */
export interface MjcfScene {
  readonly xml: string;
  /** Actuator names in MJCF order: left arm joints 1–6, left fingers, right arm, right fingers. */
  readonly actuators: readonly string[];
  /** Arm joint names in MJCF order (the rig model's, left then right). */
  readonly armJoints: readonly string[];
  /** Object body names (the layout's object ids) and fixture body names. */
  readonly objects: readonly string[];
  readonly fixtures: readonly string[];
}

/** Builds the layout's sim scene (refusing what the sim refuses) and writes it as MJCF. */
export async function exportMjcf(opts: MjcfExportOptions): Promise<MjcfScene> {
  const R = await loadRapier();
  const scene = new SimScene(R, {
    rigModel: opts.rigModel,
    task: opts.task,
    layout: opts.layout,
    calibration: opts.calibration,
  });
  try {
    return sceneToMjcf(scene, `${opts.task.id} layout ${opts.layout.index}`);
  } finally {
    scene.free();
  }
}

/** A freshly built scene (arms at their start pose, nothing stepped) as MJCF. */
export function sceneToMjcf(scene: SimScene, title: string): MjcfScene {
  const cal = scene.opts.calibration;
  const w = new XmlWriter();
  const actuators: string[] = [];
  const armJoints: string[] = [];
  w.line(`<mujoco model="${esc(title)}">`);
  w.indent(() => {
    w.line(`<!-- tandem sim scene: ${esc(title)}; sim calibration ${esc(cal.name)} v${cal.version} -->`);
    if ((cal.commandLatencyS ?? 0) > 0)
      w.line(
        `<!-- command latency ${num(cal.commandLatencyS ?? 0)} s: apply each ctrl that long after it is computed (the sim's SimRig does) -->`,
      );
    w.line('<compiler angle="radian"/>');
    // Elliptic friction cones with impratio 10: friction as stiff as the finger pads' normal
    // contact below, so a squeezed bottle does not creep down the fingers. multiccd: several
    // contact points between convex shapes, where one point let a lying bottle walk across the
    // table by itself and pivot out of a pinch (docs/sim.md).
    w.line(
      `<option timestep="${num(cal.physicsStepS)}" gravity="0 0 ${num(scene.world.gravity.z)}" integrator="implicit" cone="elliptic" impratio="10"><flag multiccd="enable"/></option>`,
    );
    w.line('<worldbody>');
    w.indent(() => {
      const owned = new Set<number>();
      for (const arm of scene.arms) for (const b of [...arm.links, ...arm.fingers]) owned.add(b.handle);
      for (const t of [...scene.objects, ...scene.fixtures]) owned.add(t.body.handle);
      // The table and the floor: fixed bodies the scene keeps to itself, created first and in that
      // order (Rapier's body set iterates in creation order).
      let n = 0;
      scene.world.forEachRigidBody((b) => {
        if (owned.has(b.handle)) return;
        const name = n === 0 ? 'table' : n === 1 ? 'floor' : `static_${n}`;
        n += 1;
        w.body(name, poseOfBody(b), () => geomsOf(w, b, name));
      });
      for (const f of scene.fixtures) {
        w.body(f.id, poseOfBody(f.body), () => {
          if (f.body.isDynamic()) w.line(`<freejoint name="${esc(f.id)}_free"/>`);
          geomsOf(w, f.body, f.id);
        });
      }
      for (const o of scene.objects) {
        w.body(o.id, poseOfBody(o.body), () => {
          w.line(`<freejoint name="${esc(o.id)}_free"/>`);
          geomsOf(w, o.body, o.id);
        });
      }
      const reflected = scene.opts.fingerReflectedMassKg ?? cal.fingerReflectedMassKg ?? 0;
      for (const arm of scene.arms) writeArm(w, arm, cal, reflected, armJoints);
    });
    w.line('</worldbody>');
    w.line('<actuator>');
    w.indent(() => {
      for (const arm of scene.arms) {
        const side = arm.model.side;
        const torqueScale = motorTorqueScales(cal);
        arm.model.joints.forEach((j, i) => {
          // A motor whose torque constant is off by s delivers s times every term of its law (arm/sim-arm.ts applyDrive).
          const s = torqueScale[i];
          w.line(motor(`${j.name}_motor`, j.name, j.kp * s, j.kd * s, j.maxTorqueNm, [j.minRad, j.maxRad]));
        });
        const g = arm.model.gripper;
        const halfStroke = g.strokeM / 2;
        // The sim's finger drive (arm/sim-arm.ts applyDrive): the gripper motor's gains seen at one
        // finger through the transmission, force limited to the calibration's squeeze.
        const ratio = g.motorTravelRad / halfStroke;
        const kp = (g.kp * ratio * ratio) / 2;
        const kd = (g.kd * ratio * ratio) / 2;
        const maxForce = Math.min((g.maxTorqueNm * ratio) / 2, cal.gripperMaxForceN);
        for (const f of FINGERS) {
          w.line(motor(`${side}_finger_${f}_motor`, `${side}_finger_${f}`, kp, kd, maxForce, [0, halfStroke]));
        }
        actuators.push(
          ...arm.model.joints.map((j) => `${j.name}_motor`),
          ...FINGERS.map((f) => `${side}_finger_${f}_motor`),
        );
      }
    });
    w.line('</actuator>');
  });
  w.line('</mujoco>');
  return {
    xml: w.text(),
    actuators,
    armJoints,
    objects: scene.objects.map((o) => o.id),
    fixtures: scene.fixtures.map((f) => f.id),
  };
}

const FINGERS = ['a', 'b'] as const;

/**
 * A position servo as MuJoCo's `general` actuator (τ = kp·ctrl − kp·q − kv·dq, clamped): the same
 * as `<position kp kv>`, written this way because MuJoCo 2.x (Debian's) has no `kv` on `position`.
 */
function motor(
  name: string,
  joint: string,
  kp: number,
  kv: number,
  maxForce: number,
  ctrlRange: readonly [number, number],
): string {
  return `<general name="${esc(name)}" joint="${esc(joint)}" gaintype="fixed" gainprm="${num(kp)}" biastype="affine" biasprm="0 ${num(-kp)} ${num(-kv)}" forcelimited="true" forcerange="${num(-maxForce)} ${num(maxForce)}" ctrllimited="true" ctrlrange="${num(ctrlRange[0])} ${num(ctrlRange[1])}"/>`;
}

/**
 * One arm as a nested body tree: base_link fixed where the sim put it, each link at its chain
 * joint's origin in its parent (q = 0), fingers on slide joints in the gripper body.
 */
function writeArm(w: XmlWriter, arm: SimArm, cal: SimCalibration, reflectedMassKg: number, armJoints: string[]): void {
  const side = arm.model.side;
  const name = (i: number): string => `${side}_${LINK_NAMES[i]}`;
  const q0 = Array.from(arm.q);
  const open = (i: number): void => {
    const pose: { position: Vec3; quaternion: Quat } =
      i === 0
        ? poseOfBody(arm.links[0])
        : { position: YAM_CHAIN[i - 1].xyz, quaternion: rotationToQuaternion(rpyToRotation(YAM_CHAIN[i - 1].rpy)) };
    w.body(name(i), pose, () => {
      if (i > 0) {
        const spec = arm.model.joints[i - 1];
        const jc = cal.joints[i - 1];
        const a = YAM_CHAIN[i - 1].axis;
        // ref = the angle the bodies were built at, so qpos reads the joint angle the sim reads.
        w.line(
          `<joint name="${esc(spec.name)}" type="hinge" axis="${vec(a)}" ref="${num(q0[i - 1])}" limited="true" range="${num(spec.minRad - YAM_LIMIT_BUFFER_RAD)} ${num(spec.maxRad + YAM_LIMIT_BUFFER_RAD)}" damping="${num(jc.dampingNms)}" frictionloss="${num(jc.frictionNm)}" armature="${num(jc.armatureKgM2)}"/>`,
        );
        armJoints.push(spec.name);
      }
      geomsOf(w, arm.links[i], name(i), 0, arm.bodyToLinkRotation(i));
      if (i < 6) open(i + 1);
      else writeFingers(w, arm, reflectedMassKg, cal.physicsStepS);
    });
  };
  if (q0.some((q) => Math.abs(q) > 1e-9)) {
    // The chain below writes link frames at q = 0; a scene built elsewhere would need them posed.
    throw new Error(
      `MJCF export writes arms built at their zero pose; ${side} was built at [${q0.map((q) => q.toFixed(3)).join(', ')}].`,
    );
  }
  open(0);
}

function writeFingers(w: XmlWriter, arm: SimArm, reflectedMassKg: number, physicsStepS: number): void {
  const side = arm.model.side;
  const gripper = arm.links[6];
  const halfStroke = arm.model.gripper.strokeM / 2;
  const opening = arm.fingerOpeningM;
  arm.fingers.forEach((finger, k) => {
    const sign = k === 0 ? 1 : -1;
    // In link frames: a multibody arm's gripper body is turned about its joint axis (SimArm
    // bodyToLink), and the fingers' bodies with it; the slide axis below is in the link's frame.
    const toLink = arm.bodyToLinkRotation(6);
    const rel = relativePose(gripper, finger);
    const fromLink = quatConj(toLink);
    const local = {
      position: quatRotate(fromLink, rel.position),
      quaternion: quatMul(quatMul(fromLink, rel.quaternion), toLink),
    };
    const name = `${side}_finger_${FINGERS[k]}`;
    // The gripper rotor's reflected mass: what the sim adds to the finger body beyond its collider
    // (arm/sim-arm.ts setAdditionalMass; Rapier folds it into body.mass() only at the first step, so
    // it is read where the scene took it). The sim gives it no weight (the rotor's weight is the
    // gripper's), so gravcomp takes back exactly its share of the finger's gravity.
    const extra = reflectedMassKg;
    const total = colliderMass(finger) + extra;
    const weightless = extra > 0 ? ` gravcomp="${num(extra / total)}"` : '';
    w.body(
      name,
      local,
      () => {
        // Coordinate = this finger's opening (m): ref is the opening it was built at.
        w.line(
          `<joint name="${name}" type="slide" axis="0 ${sign} 0" ref="${num(opening)}" limited="true" range="0 ${num(halfStroke + 0.002)}"/>`,
        );
        geomsOf(w, finger, name, extra, toLink, fingerPadContact(physicsStepS));
      },
      weightless,
    );
  });
}

/**
 * The finger pads' contacts, as stiff as Rapier's: MuJoCo's default (time constant 0.02 s,
 * impedance 0.9–0.95) scales a contact's stiffness by the bodies' mass, so the 15 N squeeze of a
 * 70 g finger sank it centimetres into a bottle. Impedance 0.99–0.999 and the shortest time
 * constant MuJoCo integrates stably (two physics steps) hold it to ≈ 0.1 mm; priority 1 makes
 * the pad's settings, not a mix with the object's, govern every pad contact.
 */
function fingerPadContact(physicsStepS: number): string {
  return ` priority="1" solref="${num(2 * physicsStepS)} 1" solimp="0.99 0.999 0.001"`;
}

function colliderMass(body: RigidBody): number {
  let m = 0;
  for (let i = 0; i < body.numColliders(); i++) m += body.collider(i).mass();
  return m;
}

/**
 * The body's colliders as geoms in its frame: shape, size, pose, mass, friction, contact bits.
 * `extraMassKg` (the body's mass beyond its colliders') goes onto its one collider, as Rapier
 * spreads it: by the collider's shape.
 */
function geomsOf(
  w: XmlWriter,
  body: RigidBody,
  owner: string,
  extraMassKg = 0,
  bodyToLink: Quat = [0, 0, 0, 1],
  contact = '',
): void {
  const fromLink = quatConj(bodyToLink);
  const fixed = body.isFixed();
  if (extraMassKg > 0 && body.numColliders() !== 1)
    throw new Error(
      `MJCF export can put extra mass only on a body with one collider; '${owner}' has ${body.numColliders()}.`,
    );
  for (let i = 0; i < body.numColliders(); i++) {
    const c = body.collider(i);
    const name = `${owner}_g${i}`;
    const t = c.translationWrtParent() ?? { x: 0, y: 0, z: 0 };
    const r = c.rotationWrtParent() ?? { x: 0, y: 0, z: 0, w: 1 };
    // In the frame the MJCF body is written in (the link's, where the Rapier body is turned from it).
    const pos: Vec3 = quatRotate(fromLink, [t.x, t.y, t.z]);
    const rot: Quat = quatMul(fromLink, [r.x, r.y, r.z, r.w]);
    const mass = fixed ? '' : ` mass="${num(c.mass() + extraMassKg)}"`;
    const common = `${contactBits(c)} friction="${num(c.friction())} 0.005 0.0001"${contact}${mass}`;
    const type = c.shapeType();
    if (type === SHAPE_CUBOID) {
      const h = c.halfExtents()!;
      w.line(
        `<geom name="${name}" type="box" size="${vec([h.x, h.y, h.z])}" pos="${vec(pos)}" quat="${quat(rot)}"${common}/>`,
      );
    } else if (type === SHAPE_CYLINDER || type === SHAPE_CAPSULE) {
      // Rapier's cylinders and capsules stand on their own y axis, MuJoCo's on z: turn z onto y.
      const q = quatMul(rot, Z_TO_Y);
      w.line(
        `<geom name="${name}" type="${type === SHAPE_CYLINDER ? 'cylinder' : 'capsule'}" size="${num(c.radius())} ${num(c.halfHeight())}" pos="${vec(pos)}" quat="${quat(q)}"${common}/>`,
      );
    } else if (type === SHAPE_BALL) {
      w.line(`<geom name="${name}" type="sphere" size="${num(c.radius())}" pos="${vec(pos)}"${common}/>`);
    } else {
      throw new Error(`MJCF export has no geom for collider shape ${type} on '${owner}'.`);
    }
  }
}

// Rapier's ShapeType numbers (geometry/shape.d.ts); a const enum is not importable at run time here.
const SHAPE_BALL = 0;
const SHAPE_CUBOID = 1;
const SHAPE_CAPSULE = 2;
const SHAPE_CYLINDER = 10;
/** Rotation about x by −90°: takes MuJoCo's geom axis (z) to Rapier's (y). */
const Z_TO_Y: Quat = [-Math.SQRT1_2, 0, 0, Math.SQRT1_2];

/**
 * The sim's interaction groups as MuJoCo contact bits: bit 0 the world (table, fixtures, objects),
 * bit 1 the left arm, bit 2 the right. MuJoCo collides two geoms when either's contype meets the
 * other's conaffinity, so an arm (type = its own bit, affinity = the other arm's) touches the world
 * and the other arm, never itself.
 */
function contactBits(c: Collider): string {
  const member = c.collisionGroups() >>> 16;
  const left = GROUP.leftArm | GROUP.leftHand;
  const right = GROUP.rightArm | GROUP.rightHand;
  if (member & left) return ' contype="2" conaffinity="4"';
  if (member & right) return ' contype="4" conaffinity="2"';
  return ' contype="1" conaffinity="7"';
}

function poseOfBody(b: RigidBody): { position: Vec3; quaternion: Quat } {
  const t = b.translation();
  const r = b.rotation();
  return { position: [t.x, t.y, t.z], quaternion: [r.x, r.y, r.z, r.w] };
}

/** `child`'s pose in `parent`'s frame. */
function relativePose(parent: RigidBody, child: RigidBody): { position: Vec3; quaternion: Quat } {
  const p = poseOfBody(parent);
  const c = poseOfBody(child);
  const inv = quatConj(p.quaternion);
  return {
    position: quatRotate(inv, [
      c.position[0] - p.position[0],
      c.position[1] - p.position[1],
      c.position[2] - p.position[2],
    ]),
    quaternion: quatMul(inv, c.quaternion),
  };
}

function num(x: number): string {
  if (!Number.isFinite(x)) throw new Error(`MJCF export met a non-finite number (${x}).`);
  // Seven significant digits: what the sim's 32-bit floats hold, well below a micrometre.
  return Number(x.toPrecision(7)).toString();
}
const vec = (v: readonly number[]): string => v.map(num).join(' ');
/** MuJoCo writes quaternions w first. */
const quat = (q: Quat): string => vec([q[3], q[0], q[1], q[2]]);

function esc(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/--/g, '- -');
}

class XmlWriter {
  private readonly lines: string[] = [];
  private depth = 0;
  line(s: string): void {
    this.lines.push(`${'  '.repeat(this.depth)}${s}`);
  }
  indent(f: () => void): void {
    this.depth += 1;
    f();
    this.depth -= 1;
  }
  body(name: string, pose: { position: Vec3; quaternion: Quat }, inside: () => void, attributes = ''): void {
    this.line(`<body name="${esc(name)}" pos="${vec(pose.position)}" quat="${quat(pose.quaternion)}"${attributes}>`);
    this.indent(inside);
    this.line('</body>');
  }
  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}
