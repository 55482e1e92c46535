/**
 * How each object of a layout ended an episode, in failure-breakdown terms, from the end state
 * alone (what an operator enters, what the sim measures). An end state says where an object is,
 * not how it got there: "never grasped" and "dropped in transit" need per-object task events
 * (grasped, released), which neither the sim nor the operator records yet, so both fall under
 * 'left-undone' here and the report says so.
 */
import { categoryOf } from './catalogue.js';
import { objectKindOf } from './registry.js';
import type { Layout, ObjectEndState, TaskDefinition } from './types.js';

/**
 * - done: counts toward the task (in the bin, in its correct slot, upright for a mug that was not)
 * - off-table: ended off the table (knocked or dropped off the edge)
 * - knocked-over: started upright, ends not upright on the table, not done
 * - left-undone: on the table, not done, not knocked over (never grasped, or dropped in transit)
 * - not-a-target: nothing to do for it (a mug that started upright and still stands)
 */
export type ObjectOutcome = 'done' | 'off-table' | 'knocked-over' | 'left-undone' | 'not-a-target';
export const OBJECT_OUTCOMES: readonly ObjectOutcome[] = [
  'done',
  'off-table',
  'knocked-over',
  'left-undone',
  'not-a-target',
];

export interface ObjectOutcomeRow {
  readonly id: string;
  readonly kind: string;
  readonly outcome: ObjectOutcome;
}

function isDone(task: TaskDefinition, o: Layout['objects'][number], e: ObjectEndState): boolean {
  if (task.id === 'bottles-in-the-bin') return e.region === 'bin';
  if (task.id === 'mug-flipping') return o.posture !== 'upright' && e.upright === true;
  const kind = objectKindOf(task, o.kind);
  return kind !== undefined && e.region === `slot:${categoryOf(kind)}`;
}

/** One row per layout object, in layout order. End states must already have passed the task's scoring (one entry per object). */
export function objectOutcomes(
  task: TaskDefinition,
  layout: Layout,
  endStates: readonly ObjectEndState[],
): ObjectOutcomeRow[] {
  const byId = new Map(endStates.map((e) => [e.id, e]));
  return layout.objects.map((o) => {
    const e = byId.get(o.id) ?? { id: o.id };
    let outcome: ObjectOutcome;
    if (e.offTable === true) outcome = 'off-table';
    else if (isDone(task, o, e)) outcome = 'done';
    else if (o.posture === 'upright' && e.upright === false) outcome = 'knocked-over';
    else if (task.id === 'mug-flipping' && o.posture === 'upright') outcome = 'not-a-target';
    else outcome = 'left-undone';
    return { id: o.id, kind: o.kind, outcome };
  });
}

/** Stored-count key of an object outcome for one object kind, e.g. "objects:knocked-over:bottle-500ml". */
export function objectOutcomeKey(outcome: ObjectOutcome, kind: string): string {
  return `objects:${outcome}:${kind}`;
}

/**
 * The per-(outcome, object kind) counts a sim rollout stores beside the task's own, so the failure
 * breakdown can be read from stored sim rows as from operator end states. Prefixed, so they never
 * collide with a task's count names.
 */
export function objectOutcomeCounts(rows: readonly ObjectOutcomeRow[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of rows) {
    const key = objectOutcomeKey(r.outcome, r.kind);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Reads objectOutcomeCounts back; undefined when the counts hold none (rows stored before they were kept). */
export function parseObjectOutcomeCounts(
  counts: Readonly<Record<string, number>>,
): { outcome: ObjectOutcome; kind: string; n: number }[] | undefined {
  const out: { outcome: ObjectOutcome; kind: string; n: number }[] = [];
  for (const [k, n] of Object.entries(counts)) {
    const m = /^objects:([a-z-]+):(.+)$/.exec(k);
    if (m && (OBJECT_OUTCOMES as readonly string[]).includes(m[1]))
      out.push({ outcome: m[1] as ObjectOutcome, kind: m[2], n });
  }
  return out.length > 0 ? out : undefined;
}
