/**
 * What the station's workflows need from the rig's surroundings besides the `Rig` itself: cameras
 * rendered from the rig's world, a table tracker (object sightings become task events), an
 * end-state scorer, object poses for code policies and the live view, and the status of the rig's
 * world for the UI. The composition root (station-rig.ts) builds them with the rig from the station
 * config; a station without one says so in a sentence, so no rollout, session or teleop take asks
 * which rig it has — hardware and the emulated cell go through the same seams.
 */
import type { Clock } from '../../rig/contract.js';
import type { PrivilegedObjectState, PrivilegedState } from '../../policy/contract.js';
import type { EndStateSource } from '../../rollout/episode.js';
import type { ObjectSighting } from '../../tasks/task-events.js';
import type { CellCameras } from '../../emulated-cell/cell-cameras.js';

/** A service this station does not have, and why, in a sentence's clause (no capital, no full stop). */
export interface NotOnThisStation {
  readonly available: false;
  readonly why: string;
}

/** A service the station has, or the words saying why it has none. */
export type Offered<T> = (T & { readonly available: true }) | NotOnThisStation;

export interface CameraRenderer {
  /** The rig world's cameras (cam_high and the wrists), not yet opened, frames stamped by `nowS`. */
  render(o: {
    readonly fps: number;
    readonly nowS: () => number;
    readonly clock?: Pick<Clock, 'waitUntil' | 'standStill'>;
  }): CellCameras;
}

export interface TableTracker {
  /** Where each object is seen now; task events come from these. */
  sightings(): readonly ObjectSighting[];
}

export interface EndStateScorer extends EndStateSource {
  /** Who scores, as the rollout file names its operator. */
  readonly operator: string;
}

export interface ObjectPoses {
  /** Every object's pose (what code policies plan on). */
  read(): PrivilegedState;
}

/** Numbers about a rig that is a world of its own (the emulated cell), for bring-up and the UI. */
export interface WorldReport {
  readonly task: string;
  readonly tier: number;
  readonly objects: number;
  readonly truthSha256: string;
  /** How much of a core the world uses, 0..1. */
  readonly busyFraction: number;
  /** Real time / the world's compute time (Infinity: not yet measured). */
  readonly marginX: number;
  readonly maxLagMs: number;
  readonly behindEvents: number;
}

export interface RigServices {
  readonly cameraRenderer: Offered<CameraRenderer>;
  readonly tableTracker: Offered<TableTracker>;
  readonly endStateScorer: Offered<EndStateScorer>;
  readonly objectPoses: Offered<ObjectPoses>;
  /** Why every rollout on this rig is a rehearsal, not a result; undefined where rollouts are results. */
  readonly rehearsal?: string;
  /** The hashed record every rollout on this rig names among its calibrations (the cell's hidden physics). */
  readonly marker?: { readonly kind: string; readonly sha256: string; readonly json: string };
  /** The rig's own world for the UI and bring-up; null for hardware (the world is the room). */
  world(): WorldReport | null;
  /** Object and fixture poses for the live view; null where nothing tracks them. */
  bodies(): readonly PrivilegedObjectState[] | null;
  /**
   * How far the rig's world fell behind real time since the last call, ms (a take recorded while
   * the world lagged is not a robot's timing); undefined where the world is real.
   */
  lagPeakSinceLastMs?(): number;
}

const notHere = (why: string): NotOnThisStation => ({ available: false, why });

/** A rig in a real room: the station sees the table only through its configured cameras. */
export const HARDWARE_RIG_SERVICES: RigServices = {
  cameraRenderer: notHere("only the emulated cell's rig (type yam-cell) renders them"),
  tableTracker: notHere('this station has no overhead tracker, so its rollouts record no task events'),
  endStateScorer: notHere(
    'only the emulated cell (rig type yam-cell) scores its own table; on a real rig the operator scores',
  ),
  objectPoses: notHere('a real rig cannot see object poses'),
  world: () => null,
  bodies: () => null,
};
