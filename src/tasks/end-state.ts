/**
 * Checks an end state against the layout it belongs to, so scoring never silently counts a typo:
 * every layout object needs exactly one entry, and entries may name only known objects and regions.
 */
import { TaskInputError } from './errors.js';
import type { Layout, ObjectEndState } from './types.js';

const list = (ids: readonly string[]): string => (ids.length > 8 ? `${ids.slice(0, 8).join(', ')}, …` : ids.join(', '));

/** The end state of each layout object by id; throws TaskInputError on any mismatch. */
export function endStatesById(
  taskId: string,
  regionIds: readonly string[],
  layout: Layout,
  endStates: readonly ObjectEndState[],
): Map<string, ObjectEndState> {
  if (!Array.isArray(endStates))
    throw new TaskInputError('The end state must be a list of objects like {"id": "bottle-1", "region": "bin"}.');
  const known = new Set(layout.objects.map((o) => o.id));
  const byId = new Map<string, ObjectEndState>();
  for (const [i, e] of endStates.entries()) {
    if (e === null || typeof e !== 'object' || typeof e.id !== 'string') {
      throw new TaskInputError(
        `End-state entry ${i + 1} has no object id; each entry looks like {"id": "bottle-1", "region": "bin"}.`,
      );
    }
    if (!known.has(e.id)) {
      throw new TaskInputError(
        `The end state names '${e.id}', which is not in layout ${layout.index} (its objects: ${list([...known])}).`,
      );
    }
    if (byId.has(e.id)) throw new TaskInputError(`The end state lists '${e.id}' twice; give each object one entry.`);
    if (e.region !== undefined && e.region !== null) {
      if (typeof e.region !== 'string' || !regionIds.includes(e.region)) {
        throw new TaskInputError(
          `'${e.id}' ended in region '${String(e.region)}', which ${taskId} does not have (its regions: ${regionIds.join(', ')}; leave "region" out for anywhere else).`,
        );
      }
    }
    if (e.upright !== undefined && e.upright !== null && typeof e.upright !== 'boolean') {
      throw new TaskInputError(`'${e.id}' has "upright": ${JSON.stringify(e.upright)}; it must be true or false.`);
    }
    byId.set(e.id, e);
  }
  const missing = layout.objects.filter((o) => !byId.has(o.id)).map((o) => o.id);
  if (missing.length > 0) {
    throw new TaskInputError(
      `The end state has no entry for ${list(missing)}; every object in layout ${layout.index} needs one (leave "region" out if it is in none).`,
    );
  }
  return byId;
}

/** Ratio rounded for sentences, e.g. 0.67. */
export function fmt(x: number): string {
  return String(Math.round(x * 100) / 100);
}
