/**
 * The sim scene on MuJoCo 3 (calibration `engine: 'mujoco'`): the layout is built exactly as the
 * Rapier scene builds it (same catalogue, same seeded placement noise), written as MJCF by the
 * exporter (src/sim/mjcf-export.ts) and compiled by mujoco-js, so the file `tandem sim export-mjcf`
 * writes is the world this engine steps.
 *
 * Drive: the exported servos are re-parameterised every physics step so each one is the motor's
 * MIT law for the command in force, τ = s·(kp(q*−q) + kd(dq*−dq) + τff), clamped to the motor's
 * torque by the actuator's force range — an affine bias with gain 0: bias = s·(kp·q* + kd·dq* + τff)
 * − s·kp·q − s·kd·dq. The integrator is implicit, so the kd term (and the joint damping) is
 * implicit as in the Rapier path's velocity motor. Joint damping, Coulomb friction (frictionloss),
 * armature, the end stops (joint range) and the finger drive come from the exported model; the
 * gravity feed-forward is in τff as SimRig sends it; command latency is SimRig's, engine-neutral.
 * Unlike the Rapier arms, MuJoCo's carry their own weight (gravity is not moved into joint space:
 * a reduced-coordinate chain has no joint error for it to cause).
 */
import type { ArmModel } from '../../rig/contract.js';
import { LINK_NAMES } from '../../rig/kinematics.js';
import type { Pose3 } from '../../tasks/geometry.js';
import { STATION_ARMS, TABLE_SIZE_M, type StationArm } from '../../tasks/station.js';
import type { ObjectSighting } from '../../tasks/task-events.js';
import type { FixtureKind, ObjectEndState } from '../../tasks/types.js';
import { motorTorqueScales, MUJOCO_SCENE_VERSION } from '../calibration.js';
import { quatConj, quatRotate } from '../../pose/quaternion.js';
import { sceneToMjcf } from '../mjcf-export.js';
import type { PhysicsArm, PhysicsScene, PrivilegedThing, SceneOptions } from '../physics-scene.js';
import { loadRapier } from '../rapier.js';
import type { SceneSnapshot } from '../render/scene-snapshot.js';
import {
  armInstability,
  boundsCentre,
  FLOOR_Z_M,
  HOME_START_POSITION,
  MAX_OBJECT_SPEED_MS,
  NEAR_HAND_M,
  OFF_TABLE_BELOW_M,
  SCENE_HALF_M,
  SceneError,
  SimScene,
  THROUGH_TABLE_M,
  UPRIGHT_TILT_RAD,
} from '../scene.js';
import type { MotorCommand } from '../arm/motor-command.js';
import { compileMjcf, loadMujoco, type MjData, type MjModel, type Mujoco } from './mujoco-runtime.js';

const FINGERS = ['a', 'b'] as const;
/** Finger damping floor, as the Rapier path's position motor (arm/sim-arm.ts). */
const MIN_FINGER_KD = 1e-3;

/** Builds the layout's scene in MuJoCo; a layout the sim or the MJCF writer cannot express is a SceneError (one sentence). */
export async function createMujocoScene(opts: SceneOptions): Promise<MujocoScene> {
  const start = opts.startPosition ?? HOME_START_POSITION;
  if (start.length !== 14)
    throw new SceneError(`The start position needs 14 entries (2 × 6 joints + gripper), not ${start.length}.`);
  if (opts.calibration.engineVersion !== MUJOCO_SCENE_VERSION)
    throw new SceneError(
      `The sim calibration names MuJoCo scene ${opts.calibration.engineVersion ?? '(none)'}; this tandem builds scene ${MUJOCO_SCENE_VERSION} (withEngine writes it).`,
    );
  if (opts.lowerStopsRad !== undefined)
    throw new SceneError(
      "The mujoco engine takes its end stops from the joint limits; moved lower stops (the emulated cell's) need the rapier engine.",
    );
  const [R, mj] = await Promise.all([loadRapier(), loadMujoco()]);
  // The exporter writes arms at their zero pose with open grippers; the start pose is set below.
  const built = new SimScene(R, { ...opts, startPosition: HOME_START_POSITION });
  let xml: string;
  try {
    xml = sceneToMjcf(built, `${opts.task.id} layout ${opts.layout.index}`).xml;
  } catch (e) {
    throw new SceneError(
      `Layout ${opts.layout.index} cannot be written as MJCF for the mujoco engine: ${(e as Error).message.replace(/\.$/, '')}.`,
    );
  } finally {
    built.free();
  }
  let model: MjModel;
  try {
    model = compileMjcf(mj, xml);
  } catch (e) {
    // mujoco-js throws MuJoCo's error as an object whose text is only its type (mjXError).
    throw new SceneError(
      `MuJoCo cannot compile the scene of layout ${opts.layout.index} (${String(e).replace(/\s+/g, ' ').slice(0, 200)}).`,
    );
  }
  return new MujocoScene(mj, model, opts, start);
}

interface MujocoArrays {
  readonly qpos: Float64Array;
  readonly qvel: Float64Array;
  readonly xpos: Float64Array;
  readonly xquat: Float64Array;
  readonly bias: Float64Array;
}

interface Thing {
  readonly id: string;
  readonly kind: string;
  readonly body: number;
  /** qpos / qvel address of its free joint, or -1 for a fixed fixture. */
  readonly qposAdr: number;
  readonly dofAdr: number;
  readonly centreLocal: readonly [number, number, number];
}

export class MujocoScene implements PhysicsScene {
  readonly arms: MujocoArm[] = [];
  readonly objects: Thing[] = [];
  readonly fixtures: Thing[] = [];
  readonly data: MjData;
  steps = 0;
  timeS = 0;
  private readonly fixtureKinds = new Map<string, FixtureKind>();
  private readonly tableHalf: readonly [number, number] = [TABLE_SIZE_M[0] / 2, TABLE_SIZE_M[1] / 2];
  private readonly offTable = new Set<string>();
  /** Frozen bodies (off the table): the qpos they are held at. */
  private readonly frozen = new Map<Thing, Float64Array>();
  /** Static poses of fixed fixtures (body id → pose). */
  private readonly staticPose = new Map<number, Pose3>();
  private readonly geomBody: Int32Array;
  private arrays: MujocoArrays | undefined;
  private readonly bodyObject = new Map<number, number>();

  constructor(
    private readonly mj: Mujoco,
    readonly model: MjModel,
    readonly opts: SceneOptions,
    start: ArrayLike<number>,
  ) {
    const m = model;
    this.data = new mj.MjData(m);
    const id = (type: number, name: string): number => {
      const i = mj.mj_name2id(m, type, name);
      if (i < 0)
        throw new SceneError(
          `The MJCF scene has no ${type === mj.mjtObj.mjOBJ_BODY.value ? 'body' : type === mj.mjtObj.mjOBJ_JOINT.value ? 'joint' : 'actuator'} '${name}'.`,
        );
      return i;
    };
    const BODY = mj.mjtObj.mjOBJ_BODY.value;
    const JOINT = mj.mjtObj.mjOBJ_JOINT.value;
    const ACT = mj.mjtObj.mjOBJ_ACTUATOR.value;
    for (const k of opts.task.fixtureKinds) this.fixtureKinds.set(k.id, k);
    const objectKinds = new Map(opts.task.objectKinds.map((k) => [k.id, k] as const));
    const jntAdr = m.body_jntadr as Int32Array;
    const qposAdr = m.jnt_qposadr as Int32Array;
    const dofAdr = m.jnt_dofadr as Int32Array;
    const thing = (tid: string, kind: string, parts: Parameters<typeof boundsCentre>[0]): Thing => {
      const body = id(BODY, tid);
      const j = jntAdr[body];
      return {
        id: tid,
        kind,
        body,
        qposAdr: j >= 0 ? qposAdr[j] : -1,
        dofAdr: j >= 0 ? dofAdr[j] : -1,
        centreLocal: boundsCentre(parts),
      };
    };
    for (const f of opts.layout.fixtures) this.fixtures.push(thing(f.id, f.kind, this.fixtureKinds.get(f.kind)!.parts));
    for (const o of opts.layout.objects) this.objects.push(thing(o.id, o.kind, objectKinds.get(o.kind)!.parts));
    this.objects.forEach((o, i) => this.bodyObject.set(o.body, i));
    this.geomBody = Int32Array.from(m.geom_bodyid as Int32Array);
    // Every servo is driven through its bias alone (see the header).
    const gain = m.actuator_gainprm as Float64Array;
    for (let a = 0; a < m.nu; a++) gain[a * 10] = 0;
    const qpos = this.data.qpos as Float64Array;
    for (let a = 0; a < 2; a++) {
      const armModel = opts.rigModel.arms[a];
      const side = armModel.side;
      const arm = new MujocoArm(
        armModel,
        opts,
        armModel.joints.map((j) => qposAdr[id(JOINT, j.name)]),
        armModel.joints.map((j) => dofAdr[id(JOINT, j.name)]),
        armModel.joints.map((j) => id(ACT, `${j.name}_motor`)),
        FINGERS.map((f) => qposAdr[id(JOINT, `${side}_finger_${f}`)]),
        FINGERS.map((f) => dofAdr[id(JOINT, `${side}_finger_${f}`)]),
        FINGERS.map((f) => id(ACT, `${side}_finger_${f}_motor`)),
        LINK_NAMES.map((n) => id(BODY, `${side}_${n}`)),
        FINGERS.map((f) => id(BODY, `${side}_finger_${f}`)),
      );
      arm.setStart(qpos, start, a * 7);
      this.arms.push(arm);
    }
    mj.mj_forward(m, this.data);
    const xpos = this.data.xpos as Float64Array;
    const xquat = this.data.xquat as Float64Array;
    for (const f of this.fixtures) if (f.qposAdr < 0) this.staticPose.set(f.body, poseAt(xpos, xquat, f.body));
    this.measure();
  }

  step(commands: readonly MotorCommand[]): void {
    const bias = this.views().bias;
    for (let a = 0; a < this.arms.length; a++) this.arms[a].applyDrive(commands[a], bias);
    this.mj.mj_step(this.model, this.data);
    if (this.frozen.size > 0) this.holdFrozen();
    this.measure();
    this.retireFallen();
    this.steps += 1;
    this.timeS = this.steps * this.opts.calibration.physicsStepS;
  }

  /**
   * Typed views on MuJoCo's arrays. Each embind getter builds a new view (microseconds and garbage,
   * several times a step), so they are kept; WebAssembly memory that grows detaches them (length
   * 0), and then they are taken again.
   */
  private views(): MujocoArrays {
    if (this.arrays === undefined || this.arrays.qpos.length === 0) {
      const d = this.data;
      const m = this.model;
      this.arrays = {
        qpos: d.qpos as Float64Array,
        qvel: d.qvel as Float64Array,
        xpos: d.xpos as Float64Array,
        xquat: d.xquat as Float64Array,
        bias: m.actuator_biasprm as Float64Array,
      };
    }
    return this.arrays;
  }

  private measure(): void {
    const { qpos, qvel } = this.views();
    for (const arm of this.arms) arm.read(qpos, qvel);
  }

  /** Like the Rapier scene's: a body that left the table is frozen where it left and collides with nothing. */
  private retireFallen(): void {
    const { qpos } = this.views();
    for (const things of [this.objects, this.fixtures]) {
      for (const o of things) {
        if (o.qposAdr < 0 || this.offTable.has(o.id)) continue;
        const x = qpos[o.qposAdr];
        const y = qpos[o.qposAdr + 1];
        const z = qpos[o.qposAdr + 2];
        const outsideFootprint = Math.abs(x) > this.tableHalf[0] || Math.abs(y) > this.tableHalf[1];
        const fellOff = outsideFootprint && z < -OFF_TABLE_BELOW_M;
        const leftScene = Math.abs(x) > SCENE_HALF_M || Math.abs(y) > SCENE_HALF_M || z < FLOOR_Z_M - 0.1;
        if (fellOff || leftScene) {
          this.offTable.add(o.id);
          this.frozen.set(o, Float64Array.from(qpos.subarray(o.qposAdr, o.qposAdr + 7)));
          const contype = this.model.geom_contype as Int32Array;
          const conaffinity = this.model.geom_conaffinity as Int32Array;
          for (let g = 0; g < this.geomBody.length; g++) {
            if (this.geomBody[g] === o.body) contype[g] = conaffinity[g] = 0;
          }
          this.holdFrozen();
        }
      }
    }
  }

  private holdFrozen(): void {
    const { qpos, qvel } = this.views();
    for (const [o, pose] of this.frozen) {
      qpos.set(pose, o.qposAdr);
      qvel.fill(0, o.dofAdr, o.dofAdr + 6);
    }
  }

  offTableIds(): string[] {
    return [...this.offTable];
  }

  instability(): string | undefined {
    // On a NaN or huge acceleration MuJoCo warns and resets the data to the model's initial
    // state, time included: a clock that fell behind the steps taken is a blown-up world.
    const dt = this.opts.calibration.physicsStepS;
    if (Math.abs(this.data.time - this.steps * dt) > dt / 2)
      return 'MuJoCo met a NaN or huge acceleration and reset the state';
    for (const arm of this.arms) {
      const why = armInstability(arm);
      if (why) return why;
    }
    const { qpos, qvel } = this.views();
    for (const things of [this.objects, this.fixtures]) {
      const why = this.thingInstability(things, qpos, qvel);
      if (why) return why;
    }
    return undefined;
  }

  private thingInstability(things: readonly Thing[], qpos: Float64Array, qvel: Float64Array): string | undefined {
    for (const o of things) {
      if (o.qposAdr < 0) continue;
      const x = qpos[o.qposAdr];
      const y = qpos[o.qposAdr + 1];
      const z = qpos[o.qposAdr + 2];
      const vx = qvel[o.dofAdr];
      const vy = qvel[o.dofAdr + 1];
      const vz = qvel[o.dofAdr + 2];
      if (
        !(
          Number.isFinite(x) &&
          Number.isFinite(y) &&
          Number.isFinite(z) &&
          Number.isFinite(vx) &&
          Number.isFinite(vy) &&
          Number.isFinite(vz)
        )
      )
        return `'${o.id}' has a NaN pose`;
      if (this.offTable.has(o.id)) continue;
      const overTable = Math.abs(x) < this.tableHalf[0] - 0.02 && Math.abs(y) < this.tableHalf[1] - 0.02;
      if (overTable && z < -THROUGH_TABLE_M) return `'${o.id}' went through the table (z = ${z.toFixed(3)} m)`;
      const speed = Math.hypot(vx, vy, vz);
      if (speed > MAX_OBJECT_SPEED_MS) return `'${o.id}' flies at ${speed.toFixed(0)} m/s`;
    }
    return undefined;
  }

  /** A body's pose: a free body's from its coordinates, a fixed one's as built. */
  private poseOf(t: Thing): Pose3 {
    if (t.qposAdr < 0) return this.staticPose.get(t.body)!;
    const q = this.views().qpos;
    const a = t.qposAdr;
    // MuJoCo's quaternions are w first; the scene's are x, y, z, w.
    return { position: [q[a], q[a + 1], q[a + 2]], quaternion: [q[a + 4], q[a + 5], q[a + 6], q[a + 3]] };
  }

  privilegedState(): { objects: PrivilegedThing[]; fixtures: PrivilegedThing[] } {
    const priv = (t: Thing): PrivilegedThing => {
      const p = this.poseOf(t);
      return { id: t.id, kind: t.kind, position: p.position, quaternion: p.quaternion };
    };
    return { objects: this.objects.map(priv), fixtures: this.fixtures.map(priv) };
  }

  /** Link frames from MuJoCo's forward kinematics of the current state (the MJCF bodies are the link frames). */
  snapshot(): SceneSnapshot {
    this.mj.mj_kinematics(this.model, this.data);
    const { xpos, xquat } = this.views();
    const links: { name: string; pose: Pose3 }[] = [];
    const grippers: Partial<Record<'left' | 'right', number>> = {};
    for (const arm of this.arms) {
      arm.linkBodies.forEach((b, i) =>
        links.push({ name: `${arm.model.side}_${LINK_NAMES[i]}`, pose: poseAt(xpos, xquat, b) }),
      );
      grippers[arm.model.side] = arm.gripperPosition();
    }
    return {
      task: this.opts.task,
      links,
      grippers,
      objects: this.objects.map((o) => ({ id: o.id, kind: o.kind, pose: this.poseOf(o) })),
      fixtures: this.fixtures.map((o) => ({ id: o.id, kind: o.kind, pose: this.poseOf(o) })),
    };
  }

  /** The whole state: time, every coordinate and velocity. */
  fingerprint(): Float64Array {
    const { qpos, qvel } = this.views();
    const out = new Float64Array(1 + qpos.length + qvel.length);
    out[0] = this.data.time;
    out.set(qpos, 1);
    out.set(qvel, 1 + qpos.length);
    return out;
  }

  endStates(): ObjectEndState[] {
    return this.objects.map((o) => {
      if (this.offTable.has(o.id)) return { id: o.id, upright: false, offTable: true };
      const p = this.poseOf(o);
      const c = quatRotate(p.quaternion, o.centreLocal);
      const centre: [number, number, number] = [p.position[0] + c[0], p.position[1] + c[1], p.position[2] + c[2]];
      const upright = quatRotate(p.quaternion, [0, 0, 1])[2] >= Math.cos(UPRIGHT_TILT_RAD);
      const region = this.regionContaining(centre);
      return region === undefined ? { id: o.id, upright } : { id: o.id, region, upright };
    });
  }

  sightings(): ObjectSighting[] {
    const holders = this.holders();
    return this.endStates().map((e, i) => {
      const heldBy = e.offTable ? undefined : holders[i];
      return {
        id: e.id,
        ...(e.region !== undefined ? { region: e.region } : {}),
        upright: e.upright === true,
        offTable: e.offTable === true,
        ...(heldBy ? { heldBy } : {}),
      };
    });
  }

  /** Per object, the arm both of whose fingers touch it (MuJoCo's contacts of the last step). */
  private holders(): (StationArm | undefined)[] {
    const out: (StationArm | undefined)[] = this.objects.map(() => undefined);
    // Reading contacts costs an object per contact: skip it when no object is near a hand (finger
    // positions from the last step's kinematics, well inside the margin).
    const { qpos, xpos } = this.views();
    const near = this.arms.some((arm) => {
      const f = arm.fingerBodies[0] * 3;
      return this.objects.some(
        (o) =>
          o.qposAdr >= 0 &&
          Math.hypot(xpos[f] - qpos[o.qposAdr], xpos[f + 1] - qpos[o.qposAdr + 1], xpos[f + 2] - qpos[o.qposAdr + 2]) <=
            NEAR_HAND_M,
      );
    });
    if (!near) return out;
    // touch[object][arm] has bit k set when finger k of that arm touches it.
    const touch = this.objects.map(() => [0, 0]);
    const contacts = this.data.contact;
    const n = this.data.ncon;
    for (let i = 0; i < n; i++) {
      const c = contacts.get(i);
      if (!c) continue;
      const b1 = this.geomBody[c.geom1];
      const b2 = this.geomBody[c.geom2];
      c.delete();
      for (const [fb, ob] of [
        [b1, b2],
        [b2, b1],
      ]) {
        const oi = this.bodyObject.get(ob);
        if (oi === undefined) continue;
        this.arms.forEach((arm, a) => {
          const k = arm.fingerBodies.indexOf(fb);
          if (k >= 0) touch[oi][a] |= 1 << k;
        });
      }
    }
    contacts.delete();
    touch.forEach((t, oi) => {
      const a = t.findIndex((bits) => bits === 3);
      if (a >= 0) out[oi] = STATION_ARMS[a];
    });
    return out;
  }

  private regionContaining(p: readonly [number, number, number]): string | undefined {
    for (const f of this.fixtures) {
      if (this.offTable.has(f.id)) continue;
      const kind = this.fixtureKinds.get(f.kind)!;
      const pose = this.poseOf(f);
      const r = pose.quaternion;
      const t = pose.position;
      const local = quatRotate(quatConj(r), [p[0] - t[0], p[1] - t[1], p[2] - t[2]]);
      for (const region of kind.regions) {
        if ([0, 1, 2].every((i) => Math.abs(local[i] - region.centerM[i]) <= region.sizeM[i] / 2)) return region.id;
      }
    }
    return undefined;
  }

  free(): void {
    this.data.delete();
    this.model.delete();
  }
}

/**
 * One servo's affine bias: the law `offset − kp·q − kd·dq` while it is inside its force range,
 * else the constant force it is clamped to (no kp, no kd for the implicit step to see).
 */
function setServo(
  bias: Float64Array,
  actuator: number,
  inside: boolean,
  clamped: number,
  offset: number,
  kp: number,
  kd: number,
): void {
  const b = actuator * 10;
  bias[b] = inside ? offset : clamped;
  bias[b + 1] = inside ? -kp : 0;
  bias[b + 2] = inside ? -kd : 0;
}

function poseAt(xpos: Float64Array, xquat: Float64Array, body: number): Pose3 {
  return {
    position: [xpos[body * 3], xpos[body * 3 + 1], xpos[body * 3 + 2]],
    quaternion: [xquat[body * 4 + 1], xquat[body * 4 + 2], xquat[body * 4 + 3], xquat[body * 4]],
  };
}

/** One arm's coordinates, servos and measured state in the MuJoCo model. */
class MujocoArm implements PhysicsArm {
  readonly q = new Float64Array(6);
  readonly dq = new Float64Array(6);
  readonly effort = new Float64Array(6);
  fingerOpeningM = 0;
  fingerVelocityMs = 0;
  /** Each finger's own opening (m) and rate: the two fingers are driven separately. */
  private readonly fingerQ = new Float64Array(2);
  private readonly fingerDq = new Float64Array(2);
  gripperEffortNm = 0;
  private readonly halfStrokeM: number;
  private readonly gripperRatio: number;
  private readonly maxFingerForceN: number;
  private readonly torqueScale: readonly number[];

  constructor(
    readonly model: ArmModel,
    opts: SceneOptions,
    private readonly qposAdr: readonly number[],
    private readonly dofAdr: readonly number[],
    private readonly actuators: readonly number[],
    private readonly fingerQposAdr: readonly number[],
    private readonly fingerDofAdr: readonly number[],
    private readonly fingerActuators: readonly number[],
    readonly linkBodies: readonly number[],
    readonly fingerBodies: readonly number[],
  ) {
    this.halfStrokeM = model.gripper.strokeM / 2;
    this.gripperRatio = model.gripper.motorTravelRad / this.halfStrokeM;
    this.maxFingerForceN = Math.min(
      (model.gripper.maxTorqueNm * this.gripperRatio) / 2,
      opts.calibration.gripperMaxForceN,
    );
    this.torqueScale = motorTorqueScales(opts.calibration);
  }

  /** Puts the arm at a 7-entry start state (6 joints, gripper 0 closed … 1 open) from `offset`. */
  setStart(qpos: Float64Array, start: ArrayLike<number>, offset: number): void {
    for (let j = 0; j < 6; j++) qpos[this.qposAdr[j]] = start[offset + j];
    const opening = Math.min(Math.max(start[offset + 6], 0), 1) * this.halfStrokeM;
    for (const adr of this.fingerQposAdr) qpos[adr] = opening;
  }

  read(qpos: Float64Array, qvel: Float64Array): void {
    for (let j = 0; j < 6; j++) {
      this.q[j] = qpos[this.qposAdr[j]];
      this.dq[j] = qvel[this.dofAdr[j]];
    }
    for (let k = 0; k < 2; k++) {
      this.fingerQ[k] = qpos[this.fingerQposAdr[k]];
      this.fingerDq[k] = qvel[this.fingerDofAdr[k]];
    }
    this.fingerOpeningM = (this.fingerQ[0] + this.fingerQ[1]) / 2;
    this.fingerVelocityMs = (this.fingerDq[0] + this.fingerDq[1]) / 2;
  }

  /**
   * The MIT law for `cmd` as each servo's affine bias (gain 0), and the finger drive. A law that
   * saturates at the current state is written as its constant limit: MuJoCo 3.3's implicit
   * integrator keeps a servo's kv in the step's mass matrix even when the force range clamps it
   * (later MuJoCo skips it), and a clamped finger then answered contacts as if it weighed 270 times
   * its 70 g — the 15 N squeeze drove the fingers through a bottle (docs/sim.md).
   */
  applyDrive(cmd: MotorCommand, bias: Float64Array): void {
    for (let j = 0; j < 6; j++) {
      const s = this.torqueScale[j];
      const kp = cmd.kp[j] * s;
      const kd = cmd.kd[j] * s;
      const tMax = this.model.joints[j].maxTorqueNm;
      const law = kp * (cmd.q[j] - this.q[j]) + kd * (cmd.dq[j] - this.dq[j]) + s * cmd.tauFf[j];
      const clamped = law > tMax ? tMax : law < -tMax ? -tMax : law;
      setServo(
        bias,
        this.actuators[j],
        law === clamped,
        clamped,
        kp * cmd.q[j] + kd * cmd.dq[j] + s * cmd.tauFf[j],
        kp,
        kd,
      );
      this.effort[j] = clamped / s;
    }
    const r2 = this.gripperRatio * this.gripperRatio;
    const kp = (cmd.gripperKp * r2) / 2;
    const kd = Math.max((cmd.gripperKd * r2) / 2, MIN_FINGER_KD);
    const target = Math.min(Math.max(cmd.gripper, 0), 1) * this.halfStrokeM;
    const fMax = this.maxFingerForceN;
    for (let k = 0; k < 2; k++) {
      const law = kp * (target - this.fingerQ[k]) - kd * this.fingerDq[k];
      const clamped = Math.max(-fMax, Math.min(fMax, law));
      setServo(bias, this.fingerActuators[k], law === clamped, clamped, kp * target, kp, kd);
    }
    const force = Math.max(-fMax, Math.min(fMax, kp * (target - this.fingerOpeningM) - kd * this.fingerVelocityMs));
    this.gripperEffortNm = (2 * force) / this.gripperRatio;
  }

  gripperPosition(): number {
    return this.fingerOpeningM / this.halfStrokeM;
  }
  gripperVelocity(): number {
    return this.fingerVelocityMs / this.halfStrokeM;
  }
}
