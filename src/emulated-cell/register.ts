/**
 * Registry entries for the emulated rigs, for the composition root (src/app) to add — here, not in
 * drivers/yam, so the real driver's folder never ships its stand-in:
 *   {type: 'yam-cell', transport?: 'slcan'|'damiao', gap?: 'none'|'seed:N', replyDeadlineMs?, feedForward?}
 *       the station's embedded default: YamCanRig on the emulated cell (arms, objects, a hidden
 *       reality gap), with the rollout's layout on its table (a bottles layout when none is given)
 *   {type: 'yam-emulated', transport?, replyLatencyMs?, replyDeadlineMs?}
 *       motors only: YamCanRig on the lumped byte-level emulator (protocol and timing work)
 * Both are returned configured-but-closed, like the hardware rig.
 */
import type { Rig } from '../rig/contract.js';
import type { RigConfig, RigContext, RigRegistry } from '../rig/registry.js';
import { feedForwardProblem, type FeedForwardSettings } from '../rig/gravity.js';
import { sampleLayoutSet } from '../layouts/layout-set.js';
import { getTask } from '../tasks/registry.js';
import { optionalNumber, rigConfigError, transportOf } from '../../drivers/yam/register.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import { CellGapError, DEFAULT_CELL_GAP, parseCellGap } from './cell-truth.js';
import { createEmulatedCell, type EmulatedCell } from './emulated-cell.js';

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

const cells = new WeakMap<Rig, EmulatedCell>();

/** The emulated cell a rig runs on, or undefined for every other rig (hardware, sim, motors-only). */
export function emulatedCellOf(rig: Rig): EmulatedCell | undefined {
  return cells.get(rig);
}

export async function createCellRig(config: RigConfig, context: RigContext): Promise<Rig> {
  let gap = DEFAULT_CELL_GAP;
  if (config.gap !== undefined) {
    if (typeof config.gap !== 'string') throw rigConfigError(`The yam-cell rig config's 'gap' must be 'none' or 'seed:N', not ${JSON.stringify(config.gap)}.`);
    try {
      gap = parseCellGap(config.gap);
    } catch (e) {
      if (e instanceof CellGapError) throw rigConfigError(e.message);
      throw e;
    }
  }
  const table = context.table ?? defaultCellTable();
  const cell = await createEmulatedCell({
    task: table.task,
    layout: table.layout,
    placementSeed: table.placementSeed ?? 0,
    gap,
    transport: transportOf(config, 'slcan'),
    clock: context.clock,
    rigModel: context.model,
    replyDeadlineMs: optionalNumber(config, 'replyDeadlineMs', 5, 350),
    feedForward: feedForwardOf(config),
    safety: { interlock: context.interlock },
  });
  cells.set(cell.rig, cell);
  return cell.rig;
}

export function createMotorsOnlyRig(config: RigConfig, context: RigContext): Rig {
  return createEmulatedYam({
    transport: transportOf(config, 'slcan'),
    replyLatencyMs: optionalNumber(config, 'replyLatencyMs', 0, 100),
    clock: context.clock,
    safety: { interlock: context.interlock },
    rig: { model: context.model, replyDeadlineMs: optionalNumber(config, 'replyDeadlineMs', 5, 350), feedForward: feedForwardOf(config) ?? false },
  }).rig;
}

export function registerEmulatedRigs(registry: RigRegistry): RigRegistry {
  return registry
    .register('yam-cell', 'YamCanRig on the emulated cell: arms, objects and a hidden reality gap in a world of its own (no hardware)', createCellRig)
    .register('yam-emulated', 'YamCanRig on the byte-level YAM motor emulator in this process, motors only (no hardware)', createMotorsOnlyRig);
}
