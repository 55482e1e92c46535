import { BOTTLES_IN_THE_BIN } from './bottles-in-the-bin.js';
import { TaskInputError } from './errors.js';
import { MUG_FLIPPING } from './mug-flipping.js';
import { SORT_FROM_TOTE } from './sort-from-tote.js';
import { TASK_IDS, type FixtureKind, type ObjectKind, type TaskDefinition, type TaskId } from './types.js';

const TASKS: Readonly<Record<TaskId, TaskDefinition>> = {
  'bottles-in-the-bin': BOTTLES_IN_THE_BIN,
  'mug-flipping': MUG_FLIPPING,
  'sort-from-tote': SORT_FROM_TOTE,
};

export function isTaskId(id: unknown): id is TaskId {
  return typeof id === 'string' && (TASK_IDS as readonly string[]).includes(id);
}

/** The task with this id; throws TaskInputError naming the known tasks otherwise. */
export function getTask(id: string): TaskDefinition {
  if (!isTaskId(id)) throw new TaskInputError(`Unknown task '${id}'. Known tasks: ${TASK_IDS.join(', ')}.`);
  return TASKS[id];
}

export function allTasks(): TaskDefinition[] {
  return TASK_IDS.map((id) => TASKS[id]);
}

export function objectKindOf(task: TaskDefinition, kindId: string): ObjectKind | undefined {
  return task.objectKinds.find((k) => k.id === kindId);
}

export function fixtureKindOf(task: TaskDefinition, kindId: string): FixtureKind | undefined {
  return task.fixtureKinds.find((k) => k.id === kindId);
}
