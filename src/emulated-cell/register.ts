/**
 * Registry entries for the emulated rigs, for the composition root (src/app) to add — here, not in
 * drivers/yam, so the real driver's folder never ships its stand-in:
 *   {type: 'yam-cell', transport?: 'slcan'|'damiao', gap?: 'none'|'seed:N', replyDeadlineMs?, feedForward?, threaded?: boolean}
 *       the station's embedded default: YamCanRig on the emulated cell (arms, objects, a hidden
 *       reality gap), with the rollout's layout on its table (a bottles layout when none is given)
 *   {type: 'yam-emulated', transport?, replyLatencyMs?, replyDeadlineMs?}
 *       motors only: YamCanRig on the lumped byte-level emulator (protocol and timing work)
 * Both are returned configured-but-closed, like the hardware rig.
 */
import type { Clock, Rig } from '../rig/contract.js';
import { RealtimeClock, VirtualClock } from '../rig/clocks.js';
import type { RigConfig, RigContext, RigRegistry } from '../rig/registry.js';
import { feedForwardProblem, type FeedForwardSettings } from '../rig/gravity.js';
import { sampleLayoutSet } from '../layouts/layout-set.js';
import { getTask } from '../tasks/registry.js';
import { optionalNumber, rigConfigError, transportOf } from '../../drivers/yam/register.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import { CellGapError, DEFAULT_CELL_GAP, parseCellGap } from './cell-truth.js';
import { createEmulatedCell, type CellOfRig } from './emulated-cell.js';
import { createThreadedCell } from './threaded-cell.js';

function feedForwardOf(config: RigConfig): FeedForwardSettings | false | undefined {
  const f = config.feedForward;
  if (f === undefined || f === false) return f;
  const why = feedForwardProblem(f);
  if (why) throw rigConfigError(`The ${config.type} rig config's ${why}.`);
  return f as FeedForwardSettings;
}

/** The table a cell gets when the caller names none: tier 3 of a seed-0 bottles set (the same everywhere). */
export function defaultCellTable(): NonNullable<RigContext['table']> {
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [3], perTier: 1, seed: 0 });
  return { task: getTask(set.task), layout: set.layouts[0] };
}

/** Rig types that are all in this process, so they can run on virtual time. */
const VIRTUAL_TIME_RIGS = new Set(['yam-cell', 'yam-emulated']);

/**
 * The clock a rig config asks for: the wall clock, or with `clock: 'virtual'` (the emulated rigs
 * only) virtual time — the world, its motors, the adapters' latency, the driver's deadlines and
 * the control loop all jump from event to event, as fast as the CPU allows, and cannot fall behind
 * on a busy machine. Tests use it; nothing else about the rig changes. `clock: 'paced'` is virtual
 * time that never runs ahead of the wall clock: the station on the emulated cell looks as it would
 * on a real rig, and a busy machine slows it down instead of making it miss deadlines.
 */
export function clockForRigConfig(rigConfig: unknown): Clock {
  const config = (typeof rigConfig === 'object' && rigConfig !== null ? rigConfig : {}) as Partial<RigConfig>;
  const c = config.clock;
  if (c === undefined || c === 'wall') return new RealtimeClock();
  if (c !== 'virtual' && c !== 'paced')
    throw rigConfigError(
      `The ${config.type} rig config's 'clock' must be 'wall', 'virtual' or 'paced', not ${JSON.stringify(c)}.`,
    );
  if (!VIRTUAL_TIME_RIGS.has(String(config.type)))
    throw rigConfigError(
      `Only the emulated rigs (${[...VIRTUAL_TIME_RIGS].join(', ')}) run on virtual time; a ${config.type} rig moves in real time. Remove 'clock' from its config.`,
    );
  return new VirtualClock(0, { paced: c === 'paced' });
}

/** A config asking for virtual time must be created with the VirtualClock clockForRigConfig gave. */
function checkClock(config: RigConfig, context: RigContext): void {
  if ((config.clock === 'virtual' || config.clock === 'paced') && !(context.clock instanceof VirtualClock))
    throw rigConfigError(
      `The ${config.type} rig config asks for virtual time, but this command drives the rig on the wall clock; remove 'clock' from the config.`,
    );
}

const cells = new WeakMap<Rig, CellOfRig>();

/** The emulated cell a rig runs on, or undefined for every other rig (hardware, sim, motors-only). */
export function emulatedCellOf(rig: Rig): CellOfRig | undefined {
  return cells.get(rig);
}

export async function createCellRig(config: RigConfig, context: RigContext): Promise<Rig> {
  checkClock(config, context);
  let gap = DEFAULT_CELL_GAP;
  if (config.gap !== undefined) {
    if (typeof config.gap !== 'string')
      throw rigConfigError(
        `The yam-cell rig config's 'gap' must be 'none' or 'seed:N', not ${JSON.stringify(config.gap)}.`,
      );
    try {
      gap = parseCellGap(config.gap);
    } catch (e) {
      if (e instanceof CellGapError) throw rigConfigError(e.message);
      throw e;
    }
  }
  const table = context.table ?? defaultCellTable();
  const common = {
    task: table.task,
    layout: table.layout,
    placementSeed: table.placementSeed ?? 0,
    gap,
    transport: transportOf(config, 'slcan'),
    rigModel: context.model,
    replyDeadlineMs: optionalNumber(config, 'replyDeadlineMs', 5, 350),
    feedForward: feedForwardOf(config),
  };
  // `threaded: true`: the cell runs as hardware does, its world in a thread of its own and the rig
  // in a rig thread (wall clock only; virtual time keeps everything on one thread, where one clock
  // orders every event). Not yet the default: docs/emulated-cell.md says what is left.
  const threaded = config.threaded;
  if (threaded !== undefined && typeof threaded !== 'boolean')
    throw rigConfigError(
      `The yam-cell rig config's 'threaded' must be true or false, not ${JSON.stringify(threaded)}.`,
    );
  if (threaded === true && context.clock instanceof VirtualClock)
    throw rigConfigError(
      "The yam-cell rig config asks for 'threaded' and virtual time; virtual time keeps the cell in one thread (one clock orders every event), so remove one of them.",
    );
  if (threaded === true) {
    const cell = await createThreadedCell({
      ...common,
      clock: context.clock,
      ...(context.interlock ? { interlock: context.interlock } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
    });
    cells.set(cell.rig, cell);
    return cell.rig;
  }
  const cell = await createEmulatedCell({ ...common, clock: context.clock, safety: { interlock: context.interlock } });
  cells.set(cell.rig, cell);
  return cell.rig;
}

export function createMotorsOnlyRig(config: RigConfig, context: RigContext): Rig {
  checkClock(config, context);
  return createEmulatedYam({
    transport: transportOf(config, 'slcan'),
    replyLatencyMs: optionalNumber(config, 'replyLatencyMs', 0, 100),
    clock: context.clock,
    safety: { interlock: context.interlock },
    rig: {
      model: context.model,
      replyDeadlineMs: optionalNumber(config, 'replyDeadlineMs', 5, 350),
      feedForward: feedForwardOf(config) ?? false,
    },
  }).rig;
}

export function registerEmulatedRigs(registry: RigRegistry): RigRegistry {
  return registry
    .register(
      'yam-cell',
      'YamCanRig on the emulated cell: arms, objects and a hidden reality gap in a world of its own (no hardware)',
      createCellRig,
    )
    .register(
      'yam-emulated',
      'YamCanRig on the byte-level YAM motor emulator in this process, motors only (no hardware)',
      createMotorsOnlyRig,
    );
}
