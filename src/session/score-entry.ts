/**
 * A quick score: "how many objects ended in the region" (bottles in the bin) or "how many stand
 * upright" (mugs), turned into per-object end states the task's own rule then scores. A count the
 * layout cannot have is refused with the range it can. Which objects they were does not change
 * the task's progress for these tasks, so the first N objects stand for them. Pure.
 */
import { TaskInputError } from '../tasks/errors.js';
import type { Layout, ObjectEndState, TaskDefinition } from '../tasks/types.js';

/** The count a task can be scored by, or undefined when it needs each object (sort-from-tote: each part's slot). */
export function countQuestion(
  task: TaskDefinition,
): { readonly kind: 'region'; readonly region: string } | { readonly kind: 'upright' } | undefined {
  if (task.regionIds.length === 1) return { kind: 'region', region: task.regionIds[0] };
  if (task.regionIds.length === 0) return { kind: 'upright' };
  return undefined;
}

export function endStatesFromCount(task: TaskDefinition, layout: Layout, count: number): ObjectEndState[] {
  const q = countQuestion(task);
  if (!q) throw new TaskInputError(`${task.id} is scored object by object (each part's slot), not by a count.`);
  const n = layout.objects.length;
  const what = q.kind === 'region' ? `in the ${q.region}` : 'upright';
  if (!Number.isSafeInteger(count))
    throw new TaskInputError(`A count is a whole number from 0 to ${n} (the objects in layout ${layout.index}).`);
  if (count < 0 || count > n) {
    throw new TaskInputError(
      `Layout ${layout.index} has ${n} object${n === 1 ? '' : 's'}: ${count} cannot be ${what}; enter a whole number from 0 to ${n}.`,
    );
  }
  return layout.objects.map((o, i) =>
    q.kind === 'region'
      ? i < count
        ? { id: o.id, region: q.region }
        : { id: o.id }
      : { id: o.id, upright: i < count },
  );
}
