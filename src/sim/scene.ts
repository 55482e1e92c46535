/**
 * The sim scene: a Rapier world built from a layout record, the task's catalogue, the rig model
 * and a sim calibration. Holds the two arms, the table, fixtures and objects; steps physics;
 * reports link/object poses (for the renderer), privileged state (for code policies), the
 * privileged end state (for scoring) and whether the simulation has blown up.
 */
import type { RigidBody, World } from '@dimforge/rapier3d-deterministic-compat';
import { LINK_NAMES } from '../rig/kinematics.js';
import type { Pose3, TablePose } from '../tasks/geometry.js';
import { createRng } from '../layouts/random.js';
import { objectPose3, partsBounds } from '../tasks/footprint.js';
import { STATION_ARMS, TABLE_SIZE_M, type StationArm } from '../tasks/station.js';
import type { ObjectSighting } from '../tasks/task-events.js';
import type { FixtureKind, ObjectEndState, ObjectKind } from '../tasks/types.js';
import { collidersForParts, GROUPS } from './colliders.js';
import { quatFromYaw, quatRotate } from '../pose/quaternion.js';
import { loadRapier, type Rapier } from './rapier.js';
import { SimArm } from './arm/sim-arm.js';
import type { MotorCommand } from './arm/motor-command.js';
import type { SceneSnapshot } from './render/scene-snapshot.js';
import type { PhysicsArm, PrivilegedThing, SceneOptions } from './physics-scene.js';

export const GRAVITY_Z = -9.81;
export const TABLE_THICKNESS_M = 0.04;
/** Floor under the table (wide enough to be unbounded in practice), so nothing falls forever. */
export const FLOOR_Z_M = -0.75;
const FLOOR_HALF_M = 50;
/** An object this far below the table top while above the table has gone through it. */
export const THROUGH_TABLE_M = 0.03;
/**
 * An object whose centre is this far below the table top (more than the top's thickness) and
 * outside its footprint has fallen off the edge: it is off the table — a policy failure, scored
 * in no region — and is frozen there so it stops costing solver time and cannot roll anywhere.
 */
export const OFF_TABLE_BELOW_M = TABLE_THICKNESS_M + 0.01;
/** Beyond this horizontal distance from the table centre (or under the floor) a body has left the scene. */
export const SCENE_HALF_M = 2;
/** Contact distance at which a finger counts as touching an object (Rapier keeps speculative contacts a little apart). */
const TOUCH_M = 0.002;
/** Farther than this from a finger (body origin to body origin), an object cannot be touching it: larger than any object's half-extent plus a finger's. */
export const NEAR_HAND_M = 0.3;
/** Joint readings this far outside the limits (beyond the vendor's buffer) mean the sim blew up. */
export const JOINT_BLOWUP_MARGIN_RAD = 0.5;
export const MAX_OBJECT_SPEED_MS = 20;
export const MAX_JOINT_SPEED_RADS = 100;

/**
 * Why an arm's state can no longer be trusted — a NaN, a joint far outside its limits or spinning
 * — or undefined: the same judgement whichever engine (Rapier, MuJoCo) moved it.
 */
export function armInstability(
  arm: Pick<PhysicsArm, 'q' | 'dq' | 'model'> & { readonly fingerOpeningM: number },
): string | undefined {
  for (let j = 0; j < 6; j++) {
    const q = arm.q[j];
    const spec = arm.model.joints[j];
    if (!Number.isFinite(q) || !Number.isFinite(arm.dq[j])) return `${spec.name} reads NaN`;
    if (q < spec.minRad - JOINT_BLOWUP_MARGIN_RAD || q > spec.maxRad + JOINT_BLOWUP_MARGIN_RAD) {
      return `${spec.name} is at ${q.toFixed(2)} rad, far outside its limits [${spec.minRad.toFixed(2)}, ${spec.maxRad.toFixed(2)}]`;
    }
    if (Math.abs(arm.dq[j]) > MAX_JOINT_SPEED_RADS) return `${spec.name} spins at ${arm.dq[j].toFixed(0)} rad/s`;
  }
  if (!Number.isFinite(arm.fingerOpeningM)) return `${arm.model.gripper.name} reads NaN`;
  return undefined;
}
/** A mug counts as upright when its axis is within this angle of vertical. */
export const UPRIGHT_TILT_RAD = (20 * Math.PI) / 180;

/** A layout the sim cannot build (unknown kinds, bad poses): one sentence for the operator. */
export class SceneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SceneError';
  }
}

export interface PosedThing {
  readonly id: string;
  readonly kind: string;
  readonly pose: Pose3;
}

interface SceneThing {
  readonly id: string;
  readonly kind: string;
  readonly body: RigidBody;
  /** Centre of the kind's bounding box in its own frame (what "inside a region" tests). */
  readonly centreLocal: readonly [number, number, number];
}

export const HOME_START_POSITION: readonly number[] = [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1];

/** Builds a scene; Rapier is loaded on first use in this thread. */
export async function createScene(opts: SceneOptions): Promise<SimScene> {
  const R = await loadRapier();
  return new SimScene(R, opts);
}

export class SimScene {
  readonly world: World;
  readonly arms: SimArm[] = [];
  readonly objects: SceneThing[] = [];
  readonly fixtures: SceneThing[] = [];
  private readonly fixtureKinds = new Map<string, FixtureKind>();
  private readonly tableHalf: readonly [number, number];
  /** Ids of objects and fixtures that left the table (fell off the edge, left the scene), in order. */
  private readonly offTable = new Set<string>();
  timeS = 0;
  steps = 0;

  constructor(
    R: Rapier,
    readonly opts: SceneOptions,
  ) {
    const { task, layout, calibration: cal, rigModel } = opts;
    const objectKinds = new Map(task.objectKinds.map((k) => [k.id, k] as const));
    for (const k of task.fixtureKinds) this.fixtureKinds.set(k.id, k);
    for (const o of layout.objects) {
      if (!objectKinds.has(o.kind)) {
        throw new SceneError(
          `Layout ${layout.index} names object kind '${o.kind}' (object '${o.id}'), which ${task.id} does not have (its kinds: ${[...objectKinds.keys()].join(', ')}).`,
        );
      }
      if (![o.pose.x, o.pose.y, o.pose.yawRad].every(Number.isFinite))
        throw new SceneError(`Layout ${layout.index} gives object '${o.id}' a pose that is not a number.`);
    }
    for (const f of layout.fixtures) {
      if (!this.fixtureKinds.has(f.kind)) {
        throw new SceneError(
          `Layout ${layout.index} names fixture kind '${f.kind}' (fixture '${f.id}'), which ${task.id} does not have (its fixtures: ${[...this.fixtureKinds.keys()].join(', ')}).`,
        );
      }
      if (![f.pose.x, f.pose.y, f.pose.yawRad].every(Number.isFinite))
        throw new SceneError(`Layout ${layout.index} gives fixture '${f.id}' a pose that is not a number.`);
    }
    if (rigModel.arms.length !== 2)
      throw new SceneError(
        `The sim builds a two-arm rig; the model '${rigModel.name}' has ${rigModel.arms.length} arms.`,
      );

    const world = new R.World({ x: 0, y: 0, z: GRAVITY_Z });
    world.timestep = cal.physicsStepS;
    world.numSolverIterations = cal.solverIterations;
    world.numInternalPgsIterations = cal.pgsIterations;
    this.world = world;

    // Table top at z = 0, and a floor below it.
    this.tableHalf = [TABLE_SIZE_M[0] / 2, TABLE_SIZE_M[1] / 2];
    const table = world.createRigidBody(R.RigidBodyDesc.fixed().setTranslation(0, 0, -TABLE_THICKNESS_M / 2));
    world.createCollider(
      R.ColliderDesc.cuboid(this.tableHalf[0], this.tableHalf[1], TABLE_THICKNESS_M / 2)
        .setFriction(cal.tableFriction)
        .setCollisionGroups(GROUPS.table),
      table,
    );
    const floor = world.createRigidBody(R.RigidBodyDesc.fixed().setTranslation(0, 0, FLOOR_Z_M - 0.05));
    world.createCollider(
      R.ColliderDesc.cuboid(FLOOR_HALF_M, FLOOR_HALF_M, 0.05).setCollisionGroups(GROUPS.table),
      floor,
    );

    const rng = opts.placementNoise ? createRng(opts.placementNoise.seed) : undefined;
    const jitter = (pose: TablePose, movable: boolean): TablePose => {
      if (!rng || !movable || !opts.placementNoise) return pose;
      const n = opts.placementNoise;
      return {
        x: pose.x + n.sigmaM * rng.normal(),
        y: pose.y + n.sigmaM * rng.normal(),
        yawRad: pose.yawRad + n.sigmaYawRad * rng.normal(),
      };
    };
    for (const lf of layout.fixtures) {
      const kind = this.fixtureKinds.get(lf.kind)!;
      const f = { ...lf, pose: jitter(lf.pose, kind.movable) };
      const yawQ = quatFromYaw(f.pose.yawRad);
      const desc = (kind.movable ? R.RigidBodyDesc.dynamic() : R.RigidBodyDesc.fixed())
        .setTranslation(f.pose.x, f.pose.y, 0.0005)
        .setRotation({ x: yawQ[0], y: yawQ[1], z: yawQ[2], w: yawQ[3] })
        .setCanSleep(cal.allowSleep);
      const body = world.createRigidBody(desc);
      for (const c of collidersForParts(R, kind.parts, {
        massKg: kind.movable ? kind.massKg * cal.objectMassScale : undefined,
        friction: kind.friction * cal.objectFrictionScale,
        restitution: cal.restitution,
        collisionGroups: GROUPS.fixture,
      })) {
        world.createCollider(c, body);
      }
      this.fixtures.push({ id: f.id, kind: f.kind, body, centreLocal: boundsCentre(kind.parts) });
    }

    for (const o of layout.objects) {
      const kind = objectKinds.get(o.kind)!;
      const pose = objectPose3(kind, o.posture, jitter(o.pose, true));
      let z = pose.position[2] + 0.0005;
      if (o.inFixture !== undefined) z += this.fixtureFloorZ(o.inFixture, layout.index, o.id);
      const body = world.createRigidBody(
        R.RigidBodyDesc.dynamic()
          .setTranslation(pose.position[0], pose.position[1], z)
          .setRotation({ x: pose.quaternion[0], y: pose.quaternion[1], z: pose.quaternion[2], w: pose.quaternion[3] })
          .setCanSleep(cal.allowSleep)
          .setCcdEnabled(false),
      );
      for (const c of collidersForParts(R, kind.parts, {
        massKg: kind.massKg * cal.objectMassScale,
        friction: kind.friction * cal.objectFrictionScale,
        restitution: cal.restitution,
        collisionGroups: GROUPS.object,
      })) {
        world.createCollider(c, body);
      }
      this.objects.push({ id: o.id, kind: o.kind, body, centreLocal: boundsCentre(kind.parts) });
    }

    const start = opts.startPosition ?? HOME_START_POSITION;
    if (start.length !== 14)
      throw new SceneError(`The start position needs 14 entries (2 × 6 joints + gripper), not ${start.length}.`);
    for (let a = 0; a < 2; a++) {
      const q0 = Array.from({ length: 6 }, (_, j) => start[a * 7 + j]);
      this.arms.push(
        new SimArm(
          R,
          world,
          rigModel.arms[a],
          cal,
          q0,
          start[a * 7 + 6],
          opts.lowerStopsRad,
          opts.fingerReflectedMassKg ?? cal.fingerReflectedMassKg,
        ),
      );
    }
  }

  private fixtureFloorZ(fixtureId: string, layoutIndex: number, objectId: string): number {
    const f = this.opts.layout.fixtures.find((x) => x.id === fixtureId);
    const kind = f ? this.fixtureKinds.get(f.kind) : undefined;
    if (!kind || kind.regions.length === 0)
      throw new SceneError(
        `Layout ${layoutIndex} puts '${objectId}' in fixture '${fixtureId}', which the layout does not have.`,
      );
    const r = kind.regions[0];
    return r.centerM[2] - r.sizeM[2] / 2;
  }

  /** One physics step: motors set from each arm's command, then Rapier steps, then joints are re-read. */
  step(commands: readonly MotorCommand[]): void {
    for (let a = 0; a < this.arms.length; a++) this.arms[a].applyDrive(commands[a]);
    this.world.step();
    for (const arm of this.arms) arm.readJoints(true);
    this.retireFallen();
    this.steps += 1;
    this.timeS = this.steps * this.opts.calibration.physicsStepS;
  }

  /**
   * Freezes (disables) every body that has left the table: centre below the top and outside its
   * footprint, or outside the scene bounds. A disabled body keeps its pose for scoring and hashing
   * but no longer collides or enters the solver.
   */
  private retireFallen(): void {
    for (const things of [this.objects, this.fixtures]) {
      for (const o of things) {
        if (this.offTable.has(o.id)) continue;
        const t = o.body.translation();
        const outsideFootprint = Math.abs(t.x) > this.tableHalf[0] || Math.abs(t.y) > this.tableHalf[1];
        const fellOff = outsideFootprint && t.z < -OFF_TABLE_BELOW_M;
        const leftScene = Math.abs(t.x) > SCENE_HALF_M || Math.abs(t.y) > SCENE_HALF_M || t.z < FLOOR_Z_M - 0.1;
        if (fellOff || leftScene) {
          this.offTable.add(o.id);
          o.body.setEnabled(false);
        }
      }
    }
  }

  /** Ids of the objects and fixtures that fell off the table or left the scene (frozen where they left). */
  offTableIds(): string[] {
    return [...this.offTable];
  }

  /** Why the simulation can no longer be trusted (NaN, objects through the table, joints far outside limits), or undefined. */
  instability(): string | undefined {
    for (const arm of this.arms) {
      const why = armInstability(arm);
      if (why) return why;
    }
    for (const o of [...this.objects, ...this.fixtures]) {
      const t = o.body.translation();
      const v = o.body.linvel();
      if (![t.x, t.y, t.z, v.x, v.y, v.z].every(Number.isFinite)) return `'${o.id}' has a NaN pose`;
      // Off the table (fell off the edge, left the scene) is a policy failure scored in no region,
      // not a blow-up; such bodies were frozen where they left (retireFallen).
      if (this.offTable.has(o.id)) continue;
      const overTable = Math.abs(t.x) < this.tableHalf[0] - 0.02 && Math.abs(t.y) < this.tableHalf[1] - 0.02;
      if (overTable && t.z < -THROUGH_TABLE_M) return `'${o.id}' went through the table (z = ${t.z.toFixed(3)} m)`;
      if (Math.hypot(v.x, v.y, v.z) > MAX_OBJECT_SPEED_MS)
        return `'${o.id}' flies at ${Math.hypot(v.x, v.y, v.z).toFixed(0)} m/s`;
    }
    return undefined;
  }

  /** Object and fixture poses: what privileged code policies may read. */
  privilegedState(): { objects: PrivilegedThing[]; fixtures: PrivilegedThing[] } {
    return { objects: this.objects.map(privileged), fixtures: this.fixtures.map(privileged) };
  }

  /** The scene at this instant, for a renderer: link poses straight from the Rapier bodies. */
  snapshot(): SceneSnapshot {
    const links: { name: string; pose: Pose3 }[] = [];
    const grippers: Partial<Record<'left' | 'right', number>> = {};
    for (const arm of this.arms) {
      // The link's kinematic frame, not its body's: a multibody arm's bodies are turned about their joint axes (SimArm.bodyToLink).
      arm.links.forEach((b, i) =>
        links.push({
          name: `${arm.model.side}_${LINK_NAMES[i]}`,
          pose: { position: poseOf(b).position, quaternion: arm.linkRotation(i) },
        }),
      );
      grippers[arm.model.side] = arm.gripperPosition();
    }
    return {
      task: this.opts.task,
      links,
      grippers,
      objects: this.objects.map((o) => ({ id: o.id, kind: o.kind, pose: poseOf(o.body) })),
      fixtures: this.fixtures.map((o) => ({ id: o.id, kind: o.kind, pose: poseOf(o.body) })),
    };
  }

  /** Every body's pose and velocity as numbers (what a final-state hash covers). */
  fingerprint(): Float64Array {
    const bodies: RigidBody[] = [
      ...this.arms.flatMap((a) => [...a.links, ...a.fingers]),
      ...this.objects.map((o) => o.body),
      ...this.fixtures.map((f) => f.body),
    ];
    const out = new Float64Array(bodies.length * 13);
    bodies.forEach((b, i) => {
      const t = b.translation();
      const r = b.rotation();
      const v = b.linvel();
      const w = b.angvel();
      out.set([t.x, t.y, t.z, r.x, r.y, r.z, r.w, v.x, v.y, v.z, w.x, w.y, w.z], i * 13);
    });
    return out;
  }

  /**
   * Where each object ended, measured from the sim: the fixture region containing its centre
   * (region boxes are in the fixture's frame, so a nudged bin carries its region), and whether
   * its axis stands within UPRIGHT_TILT_RAD of vertical. An object off the table is in no region
   * (nor is anything inside a fixture that left the table) and says so.
   */
  endStates(): ObjectEndState[] {
    return this.objects.map((o) => {
      if (this.offTable.has(o.id)) return { id: o.id, upright: false, offTable: true };
      const t = o.body.translation();
      const r = o.body.rotation();
      const q = [r.x, r.y, r.z, r.w] as const;
      const c = quatRotate(q, o.centreLocal);
      const centre: [number, number, number] = [t.x + c[0], t.y + c[1], t.z + c[2]];
      const up = quatRotate(q, [0, 0, 1]);
      const upright = up[2] >= Math.cos(UPRIGHT_TILT_RAD);
      const region = this.regionContaining(centre);
      return region === undefined ? { id: o.id, upright } : { id: o.id, region, upright };
    });
  }

  /**
   * Each object as the task-event tracker sees it (src/tasks/task-events.ts): its end-state region
   * and posture now, whether it left the table, and which hand pinches it — the arm whose two
   * fingers both touch it. Read-only: it asks Rapier's narrow phase about the last step's contacts.
   */
  sightings(): ObjectSighting[] {
    return this.endStates().map((e, i) => {
      const o = this.objects[i];
      const heldBy = e.offTable ? undefined : this.holderOf(o.body);
      return {
        id: e.id,
        ...(e.region !== undefined ? { region: e.region } : {}),
        upright: e.upright === true,
        offTable: e.offTable === true,
        ...(heldBy ? { heldBy } : {}),
      };
    });
  }

  private holderOf(body: RigidBody): StationArm | undefined {
    const p = body.translation();
    for (let a = 0; a < this.arms.length; a++) {
      const fingers = this.arms[a].fingers;
      if (fingers.length !== 2) continue;
      // Contact queries cost ~20 µs a pair: skip hands nowhere near the object.
      const f = fingers[0].translation();
      if (Math.hypot(f.x - p.x, f.y - p.y, f.z - p.z) > NEAR_HAND_M) continue;
      if (fingers.every((finger) => this.touching(finger, body))) return STATION_ARMS[a];
    }
    return undefined;
  }

  /** Whether two bodies are in contact (within TOUCH_M) after the last step. */
  private touching(a: RigidBody, b: RigidBody): boolean {
    let hit = false;
    for (let i = 0; i < a.numColliders() && !hit; i++) {
      for (let j = 0; j < b.numColliders() && !hit; j++) {
        this.world.contactPair(a.collider(i), b.collider(j), (m) => {
          for (let k = 0; k < m.numContacts(); k++) if (m.contactDist(k) <= TOUCH_M) hit = true;
        });
      }
    }
    return hit;
  }

  private regionContaining(p: readonly [number, number, number]): string | undefined {
    for (const f of this.fixtures) {
      if (this.offTable.has(f.id)) continue;
      const kind = this.fixtureKinds.get(f.kind)!;
      const t = f.body.translation();
      const r = f.body.rotation();
      const local = quatRotate([-r.x, -r.y, -r.z, r.w], [p[0] - t.x, p[1] - t.y, p[2] - t.z]);
      for (const region of kind.regions) {
        if ([0, 1, 2].every((i) => Math.abs(local[i] - region.centerM[i]) <= region.sizeM[i] / 2)) return region.id;
      }
    }
    return undefined;
  }

  /** Frees the world's WebAssembly memory. */
  free(): void {
    this.world.free();
  }
}

function poseOf(b: RigidBody): Pose3 {
  const t = b.translation();
  const r = b.rotation();
  return { position: [t.x, t.y, t.z], quaternion: [r.x, r.y, r.z, r.w] };
}

function privileged(o: SceneThing): PrivilegedThing {
  const p = poseOf(o.body);
  return { id: o.id, kind: o.kind, position: p.position, quaternion: p.quaternion };
}

export function boundsCentre(parts: ObjectKind['parts']): [number, number, number] {
  const b = partsBounds(parts);
  return [(b.min[0] + b.max[0]) / 2, (b.min[1] + b.max[1]) / 2, (b.min[2] + b.max[2]) / 2];
}
