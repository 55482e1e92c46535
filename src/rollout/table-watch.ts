/**
 * A TaskEventSource over anything that can say where each object is now (the sim's scene, the
 * emulated cell's table): one tracker per episode, fed a sighting at every sample.
 */
import { TaskEventTracker, type ObjectSighting } from '../tasks/task-events.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import type { TaskEventSource } from './run-episode.js';

export function watchTable(
  task: TaskDefinition,
  layout: Layout,
  sightings: () => readonly ObjectSighting[],
): TaskEventSource {
  const tracker = new TaskEventTracker(task, layout);
  return { sample: (timeS) => tracker.observe(timeS, sightings()) };
}
