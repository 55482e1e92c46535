/**
 * The per-step reward and events of one environment, from the privileged state (the scene's
 * sightings). sort-from-tote has its own rule (src/tasks/sort-from-tote-events.ts: +1 a part in its
 * correct slot, −1 a part knocked out of the tote and sorter); the other tasks use the generic
 * task events and their progress count (src/tasks/task-events.ts).
 */
import { SortEventTracker, type SortEvent } from '../../tasks/sort-from-tote-events.js';
import { TaskEventTracker, type ObjectSighting, type TaskEvent } from '../../tasks/task-events.js';
import type { Layout, TaskDefinition } from '../../tasks/types.js';

/** One event as the env server sends it: snake_case keys, a reward on each. */
export interface EnvEvent {
  readonly kind: string;
  readonly time_s: number;
  readonly object?: string;
  readonly arm?: string;
  readonly slot?: string;
  readonly region?: string;
  readonly reward: number;
}

export interface TaskReward {
  /** The sample's events and its reward (the sum of the events' rewards). */
  observe(timeS: number, sightings: readonly ObjectSighting[]): { events: EnvEvent[]; reward: number };
  /** Every object done by the task's rule (the episode ends). */
  allDone(): boolean;
}

export function taskReward(task: TaskDefinition, layout: Layout): TaskReward {
  return task.id === 'sort-from-tote' ? new SortReward(layout) : new ProgressReward(task, layout);
}

class SortReward implements TaskReward {
  private readonly tracker: SortEventTracker;
  constructor(layout: Layout) {
    this.tracker = new SortEventTracker(layout);
  }

  observe(timeS: number, sightings: readonly ObjectSighting[]): { events: EnvEvent[]; reward: number } {
    const events = this.tracker.observe(timeS, sightings).map(sortEvent);
    return { events, reward: events.reduce((s, e) => s + e.reward, 0) };
  }

  allDone(): boolean {
    return this.tracker.allInCorrectSlot();
  }
}

function sortEvent(e: SortEvent): EnvEvent {
  return {
    kind: e.kind,
    time_s: e.timeS,
    object: e.objectId,
    ...(e.arm ? { arm: e.arm } : {}),
    ...(e.slot ? { slot: e.slot } : {}),
    reward: e.reward,
  };
}

/** Bottles, mugs: +1 an object done by the task's rule, −1 one undone, −1 one off the table that was not done. */
class ProgressReward implements TaskReward {
  private readonly tracker: TaskEventTracker;
  private done = 0;
  constructor(
    private readonly task: TaskDefinition,
    private readonly layout: Layout,
  ) {
    this.tracker = new TaskEventTracker(task, layout);
  }

  observe(timeS: number, sightings: readonly ObjectSighting[]): { events: EnvEvent[]; reward: number } {
    const raw = this.tracker.observe(timeS, sightings);
    const events: EnvEvent[] = [];
    let drop = 0;
    let offs = 0;
    for (const e of raw) if (e.kind === 'progress' && e.delta! < 0) drop -= e.delta!;
    for (const e of raw) if (e.kind === 'off-table') offs += 1;
    // A done object knocked off shows as a drop and an off-table at once: it costs its point once.
    let offPenalty = Math.max(0, offs - drop);
    for (const e of raw) {
      let reward = 0;
      if (e.kind === 'progress') {
        reward = e.delta!;
        this.done = e.done!;
      } else if (e.kind === 'off-table' && offPenalty > 0) {
        reward = -1;
        offPenalty -= 1;
      }
      events.push(progressEvent(e, reward));
    }
    return { events, reward: events.reduce((s, e) => s + e.reward, 0) };
  }

  allDone(): boolean {
    const units = this.task.progressUnits(this.layout);
    return units > 0 && this.done >= units;
  }
}

function progressEvent(e: TaskEvent, reward: number): EnvEvent {
  return {
    kind: e.kind,
    time_s: e.timeS,
    ...(e.objectId ? { object: e.objectId } : {}),
    ...(e.arm ? { arm: e.arm } : {}),
    ...(e.region ? { region: e.region } : {}),
    reward,
  };
}
