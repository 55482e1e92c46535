/**
 * The cell's world as the station sees it when the world runs in the cell's own thread: the same
 * reads as CellWorld (the table for the tracker, the scripted operator and privileged code
 * policies; a snapshot for the cameras; how the world keeps up), answered from the latest values
 * the cell's thread published (at most its publish period old), never by waiting on that thread.
 */
import type { RigFault } from '../rig/contract.js';
import type { PrivilegedState } from '../policy/contract.js';
import type { Pose3 } from '../tasks/geometry.js';
import type { ObjectEndState, TaskDefinition } from '../tasks/types.js';
import type { ObjectSighting } from '../tasks/task-events.js';
import { STATION_ARMS } from '../tasks/station.js';
import type { SceneSnapshot } from '../sim/render/scene-snapshot.js';
import type { HashedCellTruth } from './cell-truth.js';
import type { CellWorldTiming, CellWorldView } from './cell-world.js';
import { CS, CellThreadMemory, emulationBehindFault } from './cell-thread-memory.js';

/** How the cell's thread saw its motors commanded. */
export interface CellMotorRecord {
  /** Times a motor's own watchdog damped it for want of commands. */
  readonly watchdogTrips: number;
  /** Longest time a powered motor went between two commands, ms. */
  readonly longestCommandGapMs: number;
}

export class SharedCellWorld implements CellWorldView {
  private readonly now: Float64Array;

  constructor(
    private readonly memory: CellThreadMemory,
    readonly truth: HashedCellTruth,
    private readonly task: TaskDefinition,
  ) {
    this.now = new Float64Array(memory.doubles());
  }

  /** Publishes so far (a stopped count is a stopped cell thread). */
  get publishes(): number {
    return this.memory.publishes;
  }

  timing(): CellWorldTiming {
    const s = this.latest();
    const busy = s[CS.BUSY_FRACTION];
    return {
      worldS: s[CS.WORLD_S],
      wallS: s[CS.WALL_S],
      busyFraction: busy,
      marginX: busy > 0 ? 1 / busy : Infinity,
      maxLagMs: s[CS.MAX_LAG_MS],
      behindEvents: s[CS.BEHIND_EVENTS],
    };
  }

  /** The worst lag since the last call, ms (the cell's thread starts a new peak when it next publishes). */
  takeLagPeakMs(): number {
    const peak = this.latest()[CS.LAG_PEAK_MS];
    this.memory.lagPeakTaken();
    return peak;
  }

  faults(): readonly RigFault[] {
    const ms = this.latest()[CS.BEHIND_NOW_MS];
    return ms > 0 ? [emulationBehindFault(ms)] : [];
  }

  motorRecord(): CellMotorRecord {
    const s = this.latest();
    return { watchdogTrips: s[CS.WATCHDOG_TRIPS], longestCommandGapMs: s[CS.LONGEST_COMMAND_GAP_MS] };
  }

  sightings(): ObjectSighting[] {
    const s = this.latest();
    const { objects, regions } = this.memory.layout;
    return objects.map((o, i) => {
      const at = this.memory.offSightings + 4 * i;
      const region = s[at] >= 0 ? regions[s[at]] : undefined;
      const heldBy = s[at + 3] >= 0 ? STATION_ARMS[s[at + 3]] : undefined;
      return {
        id: o.id,
        ...(region !== undefined ? { region } : {}),
        upright: s[at + 1] === 1,
        offTable: s[at + 2] === 1,
        ...(heldBy ? { heldBy } : {}),
      };
    });
  }

  endStates(): ObjectEndState[] {
    return this.sightings().map((o) =>
      o.offTable
        ? { id: o.id, upright: false, offTable: true }
        : o.region === undefined
          ? { id: o.id, upright: o.upright }
          : { id: o.id, region: o.region, upright: o.upright },
    );
  }

  privilegedState(): PrivilegedState {
    const s = this.latest();
    const { objects, fixtures } = this.memory.layout;
    const thing = (at: number, o: { id: string; kind: string }) => {
      const p = pose(s, at);
      return { id: o.id, kind: o.kind, position: p.position, quaternion: p.quaternion };
    };
    return {
      objects: objects.map((o, i) => thing(this.memory.offObjects + 7 * i, o)),
      fixtures: fixtures.map((f, i) => thing(this.memory.offFixtures + 7 * i, f)),
    };
  }

  snapshot(): SceneSnapshot {
    const s = this.latest();
    const { links, objects, fixtures } = this.memory.layout;
    return {
      task: this.task,
      links: links.map((name, i) => ({ name, pose: pose(s, this.memory.offLinks + 7 * i) })),
      grippers: { left: s[CS.GRIPPER_LEFT], right: s[CS.GRIPPER_RIGHT] },
      objects: objects.map((o, i) => ({ id: o.id, kind: o.kind, pose: pose(s, this.memory.offObjects + 7 * i) })),
      fixtures: fixtures.map((f, i) => ({ id: f.id, kind: f.kind, pose: pose(s, this.memory.offFixtures + 7 * i) })),
    };
  }

  /** The latest consistent copy (the previous one if the writer was mid-publish every try). */
  private latest(): Float64Array {
    this.memory.read(this.now);
    return this.now;
  }
}

function pose(s: Float64Array, at: number): Pose3 {
  return { position: [s[at], s[at + 1], s[at + 2]], quaternion: [s[at + 3], s[at + 4], s[at + 5], s[at + 6]] };
}
