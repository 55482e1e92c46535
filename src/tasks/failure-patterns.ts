/**
 * How each object of a rollout failed, read from its task events (src/tasks/task-events.ts): an
 * end state says a bottle is not in the bin; the events say whether it was never grasped, dropped
 * on the way, knocked over, knocked off the table, or still in a hand when the time ran out. Pure:
 * the paired report's failure breakdown calls it for sim and real rollouts alike.
 *
 * Whether an object failed (not done by the task's rule) comes from its end state when one is
 * known — the operator's score, the cell's scripted score — else from the events themselves: a
 * bottle's or part's final region is in them, and what they cannot settle (a mug turned in a
 * hand fires no event) is settled by the stored per-kind end-state counts when those leave one
 * answer. Otherwise the rollout is not classified from events, and the caller falls back to the
 * end-state classifier (src/tasks/object-outcomes.ts) and says so.
 */
import { categoryOf } from './catalogue.js';
import { fixtureKindOf, objectKindOf } from './registry.js';
import { objectOutcomes } from './object-outcomes.js';
import type { TaskEvent } from './task-events.js';
import type { Layout, LayoutObject, ObjectEndState, TaskDefinition } from './types.js';

/**
 * From the events:
 * - off-table: knocked (or dropped) off the table
 * - knocked-over: tipped while no hand held it (the tracker's knock), not done
 * - dropped-in-transit: grasped, last let go outside the target region, not done
 * - left-the-target: let go inside the target region, yet not in it at the end (bounced or pushed out)
 * - out-of-time: still in a hand when the episode ran out
 * - held-at-end: still in a hand when an episode that did not run its length ended (a policy error)
 * - never-grasped: no hand ever held it, not done
 * From the end state alone (no events): left-undone (never grasped or dropped in transit: cannot tell).
 */
export const FAILURE_PATTERNS = [
  'off-table',
  'knocked-over',
  'dropped-in-transit',
  'left-the-target',
  'out-of-time',
  'held-at-end',
  'never-grasped',
  'left-undone',
] as const;
export type FailurePattern = (typeof FAILURE_PATTERNS)[number];

export const FAILURE_PATTERN_WORDS: Readonly<Record<FailurePattern, string>> = {
  'off-table': 'knocked off the table',
  'knocked-over': 'knocked over',
  'dropped-in-transit': 'dropped in transit',
  'left-the-target': 'let go in the target, then left it',
  'out-of-time': 'out of time (still in a hand)',
  'held-at-end': 'still in a hand when the episode stopped early',
  'never-grasped': 'never grasped',
  'left-undone': 'left undone (never grasped or dropped: no events to tell)',
};

/** One object's result: done, nothing to do (a mug that stood and still stands), or how it failed. */
export type ObjectResult = 'done' | 'not-a-target' | FailurePattern;

export interface ObjectFailureRow {
  readonly id: string;
  readonly kind: string;
  readonly result: ObjectResult;
}

export interface FailureInput {
  readonly events: readonly TaskEvent[];
  /** The end state of every object, when known (real: the score; sim rows do not store them). */
  readonly endStates?: readonly ObjectEndState[] | null;
  /** Else: the stored per-kind end-state outcome counts ('objects:done:bottle-500ml', …). */
  readonly outcomeCounts?: readonly { readonly outcome: string; readonly kind: string; readonly n: number }[] | null;
  /** The episode ran its full length (outcome 'completed'): a held object ran out of time. */
  readonly ranFullLength: boolean;
}

export type FailureClassification =
  | { readonly ok: true; readonly objects: readonly ObjectFailureRow[] }
  | { readonly ok: false; readonly why: string };

/** The region an object is done in, for tasks scored by region; undefined for mug-flipping (done = upright). */
export function targetRegion(task: TaskDefinition, o: LayoutObject): string | undefined {
  if (task.id === 'bottles-in-the-bin') return 'bin';
  if (task.id === 'mug-flipping') return undefined;
  const kind = objectKindOf(task, o.kind);
  return kind ? `slot:${categoryOf(kind)}` : undefined;
}

/** Where the object starts: inside its fixture's region (parts in the tote), else in none. */
function startRegion(
  task: TaskDefinition,
  layout: Layout,
  o: LayoutObject,
  mine: readonly TaskEvent[],
): string | undefined {
  // The first region event says it best: leaving a region first means it started there.
  const first = mine.find((e) => e.kind === 'entered-region' || e.kind === 'left-region');
  if (first) return first.kind === 'left-region' ? first.region : undefined;
  if (!o.inFixture) return undefined;
  const f = layout.fixtures.find((x) => x.id === o.inFixture);
  return f ? fixtureKindOf(task, f.kind)?.regions[0]?.id : undefined;
}

interface Story {
  readonly offTable: boolean;
  readonly knocked: boolean;
  readonly grasped: boolean;
  /** Held at the end (the last grasp was not followed by a release). */
  readonly heldAtEnd: boolean;
  /** The region it was in when last let go (undefined: none, or never let go). */
  readonly releasedIn: string | undefined;
  readonly finalRegion: string | undefined;
  /** Grasped at or after its (last) knock: its final posture is not in the events. */
  readonly handledAfterKnock: boolean;
}

function story(task: TaskDefinition, layout: Layout, o: LayoutObject, events: readonly TaskEvent[]): Story {
  const mine = events.filter((e) => e.objectId === o.id);
  let region = startRegion(task, layout, o, mine);
  let held = false;
  let grasped = false;
  let knocked = false;
  let offTable = false;
  let releasedIn: string | undefined;
  let lastKnockS = -Infinity;
  let lastGraspS = -Infinity;
  let releasedAtS = -Infinity;
  for (const e of mine) {
    switch (e.kind) {
      case 'grasped':
        held = true;
        grasped = true;
        lastGraspS = e.timeS;
        break;
      case 'released':
        // The tracker reports a release before the same sample's region change: this is where it was let go.
        held = false;
        releasedIn = region;
        releasedAtS = e.timeS;
        break;
      case 'entered-region':
        region = e.region;
        // Entering a region in the very sample it was let go (the release is debounced over two
        // samples): it was let go into that region.
        if (e.timeS === releasedAtS) releasedIn = e.region;
        break;
      case 'left-region':
        if (region === e.region) region = undefined;
        break;
      case 'knocked-over':
        knocked = true;
        lastKnockS = e.timeS;
        break;
      case 'off-table':
        offTable = true;
        region = undefined;
        break;
      case 'progress':
        break;
    }
  }
  return {
    offTable,
    knocked,
    grasped,
    heldAtEnd: held,
    releasedIn,
    finalRegion: region,
    handledAfterKnock: knocked && lastGraspS >= lastKnockS,
  };
}

/** Failed (true), not failed (false) or not said by the events (undefined), from the events alone. */
function failedFromEvents(task: TaskDefinition, o: LayoutObject, s: Story): boolean | undefined {
  if (s.offTable) return true;
  const target = targetRegion(task, o);
  if (task.id !== 'mug-flipping') return target === undefined ? undefined : s.finalRegion !== target;
  // Mugs: done is upright at the end, and a hand turning a mug fires no event.
  if (o.posture === 'upright') {
    if (!s.grasped) return s.knocked;
    return s.knocked && !s.handledAfterKnock ? true : undefined;
  }
  return s.grasped ? undefined : true;
}

function pattern(task: TaskDefinition, o: LayoutObject, s: Story, ranFullLength: boolean): FailurePattern {
  if (s.offTable) return 'off-table';
  if (s.knocked) return 'knocked-over';
  if (s.heldAtEnd) return ranFullLength ? 'out-of-time' : 'held-at-end';
  if (s.grasped) {
    const target = targetRegion(task, o);
    return target !== undefined && s.releasedIn === target ? 'left-the-target' : 'dropped-in-transit';
  }
  return 'never-grasped';
}

const isFailure = (outcome: string): boolean =>
  outcome === 'off-table' || outcome === 'knocked-over' || outcome === 'left-undone';

/**
 * Each layout object's result, in layout order, from the rollout's task events. Refuses (ok:
 * false, with why) when the events do not say which objects failed and the end state cannot settle
 * it, or when the events contradict the stored end-state counts.
 */
export function classifyObjectFailures(
  task: TaskDefinition,
  layout: Layout,
  input: FailureInput,
): FailureClassification {
  const stories = layout.objects.map((o) => story(task, layout, o, input.events));
  let failed: (boolean | undefined)[];
  if (input.endStates && input.endStates.length > 0) {
    const ends = objectOutcomes(task, layout, input.endStates);
    failed = ends.map((e) => isFailure(e.outcome));
  } else {
    failed = layout.objects.map((o, i) => failedFromEvents(task, o, stories[i]));
    const counts = input.outcomeCounts;
    if (counts && counts.length > 0) {
      // Per kind: the failures the end state counted must match the events; unknowns are settled
      // only when the count leaves one answer for all of them.
      for (const kind of new Set(layout.objects.map((o) => o.kind))) {
        const idx = layout.objects.flatMap((o, i) => (o.kind === kind ? [i] : []));
        const counted = counts.filter((c) => c.kind === kind && isFailure(c.outcome)).reduce((a, c) => a + c.n, 0);
        const known = idx.filter((i) => failed[i] === true).length;
        const unknown = idx.filter((i) => failed[i] === undefined);
        if (counted === known) for (const i of unknown) failed[i] = false;
        else if (counted === known + unknown.length) for (const i of unknown) failed[i] = true;
        else if (unknown.length === 0)
          return { ok: false, why: `its events have ${known} ${kind} failing where its end state counted ${counted}` };
        else
          return {
            ok: false,
            why: `its events cannot tell which ${counted - known} of ${unknown.length} handled ${kind}s failed`,
          };
      }
    }
    const open = failed.findIndex((f) => f === undefined);
    if (open >= 0)
      return {
        ok: false,
        why: `its events cannot tell whether ${layout.objects[open].id} ended done, and no end state was stored`,
      };
  }
  return {
    ok: true,
    objects: layout.objects.map((o, i) => {
      let result: ObjectResult;
      if (failed[i]) result = pattern(task, o, stories[i], input.ranFullLength);
      else result = task.id === 'mug-flipping' && o.posture === 'upright' ? 'not-a-target' : 'done';
      return { id: o.id, kind: o.kind, result };
    }),
  };
}
