/**
 * The station config's rig with everything its type brings (services/rig-services.ts): the one
 * place that knows the emulated cell is a world of its own, so it is the one place that asks. Every
 * workflow takes the rig and its services from here and treats hardware and the cell alike.
 */
import type { Rig } from '../rig/contract.js';
import type { RigContext } from '../rig/registry.js';
import { emulatedCellOf } from '../emulated-cell/register.js';
import type { CellOfRig } from '../emulated-cell/emulated-cell.js';
import { cellCameras } from '../emulated-cell/cell-cameras.js';
import { cellMarker, EMULATED_CELL_KIND } from '../emulated-cell/cell-truth.js';
import { SCRIPTED_OPERATOR } from './session-operators.js';
import { stationRigRegistry } from './rig-registry.js';
import { HARDWARE_RIG_SERVICES, type RigServices } from './services/rig-services.js';

/** What a rig type is, known from its config before the rig exists (what to offer, what to refuse). */
export interface RigKind {
  /** Real arms move: a leader moved by a script must not drive them, nobody would be holding it. */
  readonly realArms: boolean;
  /**
   * The rig is a world of its own (the emulated cell): it builds its table from the layout (and
   * clears it on request), renders the cameras of source "cell", and a placement check can draw
   * what its overhead camera sees. False on hardware, where the table is the room's.
   */
  readonly ownWorld: boolean;
}

/** Rig types whose arms are not real (emulators, the mirror); every other type moves real arms. */
const NO_REAL_ARMS = new Set(['yam-cell', 'yam-emulated', 'mirror']);

export function rigKindOf(rigConfig: { readonly type?: unknown }): RigKind {
  const type = String(rigConfig.type);
  return { realArms: !NO_REAL_ARMS.has(type), ownWorld: type === 'yam-cell' };
}

/**
 * The rig config `--follower cell` names: the emulated cell with its hidden reality gap; the reply
 * deadline is wider than hardware's, as the cell's world shares this machine's cores.
 */
export function cellFollowerConfig(gap: string): {
  type: string;
  transport: string;
  gap: string;
  replyDeadlineMs: number;
} {
  return { type: 'yam-cell', transport: 'slcan', gap, replyDeadlineMs: 350 };
}

/** Whether a stored calibration of this kind is the emulated cell's marker (a rehearsal, not a lab's record). */
export function isCellMarkerKind(kind: string | undefined): boolean {
  return kind === EMULATED_CELL_KIND;
}

export interface StationRig {
  /** Configured-but-closed, as the registry returns it; the caller closes it. */
  readonly rig: Rig;
  readonly services: RigServices;
}

/** Creates the rig the config names (a bad config is a RigError) with its services. */
export async function createStationRig(rigConfig: unknown, context: RigContext): Promise<StationRig> {
  const rig = await stationRigRegistry().create(rigConfig, context);
  return { rig, services: servicesOf(rig) };
}

function servicesOf(rig: Rig): RigServices {
  const cell = emulatedCellOf(rig);
  return cell ? cellServices(cell) : HARDWARE_RIG_SERVICES;
}

/** The emulated cell preset: its renderer, its world's sightings and end states, its scripted operator. */
function cellServices(cell: CellOfRig): RigServices {
  const { world } = cell;
  return {
    cameraRenderer: { available: true, render: (o) => cellCameras(world, o) },
    tableTracker: { available: true, sightings: () => world.sightings() },
    endStateScorer: { available: true, operator: SCRIPTED_OPERATOR, endStates: () => world.endStates() },
    objectPoses: { available: true, read: () => world.privilegedState() },
    rehearsal: 'it ran on the emulated cell',
    marker: { kind: EMULATED_CELL_KIND, ...cellMarker(cell.truth) },
    world: () => {
      const t = world.timing();
      return {
        task: cell.task.id,
        tier: cell.layout.tier,
        objects: cell.layout.objects.length,
        truthSha256: cell.truth.sha256,
        busyFraction: t.busyFraction,
        marginX: t.marginX,
        maxLagMs: t.maxLagMs,
        behindEvents: t.behindEvents,
      };
    },
    bodies: () => {
      const p = world.privilegedState();
      return [...p.fixtures, ...p.objects];
    },
    lagPeakSinceLastMs: () => world.takeLagPeakMs(),
  };
}
