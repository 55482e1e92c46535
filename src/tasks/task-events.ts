/**
 * Per-object task events: what happened to each object during an episode, in the task's terms —
 * grasped, released, entered or left a region, knocked over, off the table — and the task's
 * progress count as it changes (the per-step reward). Pure: the sim (or the emulated cell's
 * table) says where each object is at each sample; this module decides what counts as an event.
 *
 * Why events and not only the end state: the end state says a bottle is not in the bin; the
 * events say whether it was never grasped, dropped on the way, or knocked over by the other
 * hand — what a failure breakdown needs and what an RL reward is made of.
 */
import type { Layout, ObjectEndState, TaskDefinition } from './types.js';
import type { StationArm } from './station.js';

export const TASK_EVENT_KINDS = [
  'grasped',
  'released',
  'entered-region',
  'left-region',
  'knocked-over',
  'off-table',
  'progress',
] as const;
export type TaskEventKind = (typeof TASK_EVENT_KINDS)[number];

/** One object's state at one sample, as the table shows it. */
export interface ObjectSighting {
  readonly id: string;
  /** Region containing its centre (the end-state region), absent when in none. */
  readonly region?: string;
  readonly upright: boolean;
  readonly offTable: boolean;
  /** The arm whose two fingers both touch it (a pinch grasp), absent when no hand holds it. */
  readonly heldBy?: StationArm;
}

export interface TaskEvent {
  /** Episode time, seconds from step 0. */
  readonly timeS: number;
  readonly kind: TaskEventKind;
  /** The object it happened to; absent for 'progress'. */
  readonly objectId?: string;
  /** entered-region / left-region: the region. */
  readonly region?: string;
  /** grasped / released: the arm. */
  readonly arm?: StationArm;
  /** progress: objects done by the task's own rule, their total, and the change (the reward). */
  readonly done?: number;
  readonly total?: number;
  readonly delta?: number;
}

/** A change of holder must hold for this many samples before it counts (contacts chatter). */
export const HOLD_DEBOUNCE_SAMPLES = 2;
/** An object that tips within this long of being let go was set down tipped, not knocked over. */
export const KNOCK_GRACE_S = 0.5;

interface Tracked {
  region: string | undefined;
  upright: boolean;
  offTable: boolean;
  holder: StationArm | undefined;
  /** The holder seen in the last samples, before it counts. */
  candidate: StationArm | undefined;
  candidateSamples: number;
  lastHeldS: number;
}

/** Sentence for one event, as the episode file's event stream shows it. */
export function describeTaskEvent(e: TaskEvent): string {
  const t = `${e.timeS.toFixed(2)} s`;
  switch (e.kind) {
    case 'grasped':
      return `${t}: the ${e.arm} hand grasped ${e.objectId}.`;
    case 'released':
      return `${t}: the ${e.arm} hand released ${e.objectId}.`;
    case 'entered-region':
      return `${t}: ${e.objectId} entered ${e.region}.`;
    case 'left-region':
      return `${t}: ${e.objectId} left ${e.region}.`;
    case 'knocked-over':
      return `${t}: ${e.objectId} was knocked over.`;
    case 'off-table':
      return `${t}: ${e.objectId} went off the table.`;
    case 'progress':
      return `${t}: ${e.done} of ${e.total} done (${e.delta! > 0 ? '+' : ''}${e.delta}).`;
  }
}

/**
 * Turns a stream of sightings into events. The first sample sets the starting state (nothing is
 * an event at t = 0 but where things already are); objects missing from a sample keep their state.
 */
export class TaskEventTracker {
  private readonly objects = new Map<string, Tracked>();
  private done: number | undefined;
  private readonly all: TaskEvent[] = [];

  constructor(
    private readonly task: TaskDefinition,
    private readonly layout: Layout,
  ) {}

  /** Events since the previous sample, in a fixed order (object by layout order, then progress). */
  observe(timeS: number, sightings: readonly ObjectSighting[]): TaskEvent[] {
    const out: TaskEvent[] = [];
    const byId = new Map(sightings.map((s) => [s.id, s] as const));
    for (const o of this.layout.objects) {
      const s = byId.get(o.id);
      if (!s) continue;
      const prev = this.objects.get(o.id);
      if (!prev) {
        this.objects.set(o.id, {
          region: s.region,
          upright: s.upright,
          offTable: s.offTable,
          holder: s.heldBy,
          candidate: s.heldBy,
          candidateSamples: HOLD_DEBOUNCE_SAMPLES,
          lastHeldS: s.heldBy ? timeS : -Infinity,
        });
        continue;
      }
      this.holderChange(timeS, o.id, prev, s.heldBy, out);
      if (s.region !== prev.region) {
        if (prev.region !== undefined) out.push({ timeS, kind: 'left-region', objectId: o.id, region: prev.region });
        if (s.region !== undefined) out.push({ timeS, kind: 'entered-region', objectId: o.id, region: s.region });
        prev.region = s.region;
      }
      // Tipping while a hand holds it (or just after it was let go) is the policy's own doing
      // (a mug being turned, a bottle set down on its side); tipping untouched is a knock.
      if (
        prev.upright &&
        !s.upright &&
        !s.offTable &&
        prev.holder === undefined &&
        timeS - prev.lastHeldS > KNOCK_GRACE_S
      ) {
        out.push({ timeS, kind: 'knocked-over', objectId: o.id });
      }
      prev.upright = s.upright;
      if (s.offTable && !prev.offTable) {
        out.push({ timeS, kind: 'off-table', objectId: o.id });
        prev.offTable = true;
      }
    }
    const done = this.doneCount();
    if (this.done !== undefined && done !== undefined && done !== this.done) {
      out.push({ timeS, kind: 'progress', done, total: this.task.progressUnits(this.layout), delta: done - this.done });
    }
    if (done !== undefined) this.done = done;
    this.all.push(...out);
    return out;
  }

  /** Every event so far. */
  events(): readonly TaskEvent[] {
    return this.all;
  }

  private holderChange(timeS: number, id: string, t: Tracked, seen: StationArm | undefined, out: TaskEvent[]): void {
    if (seen !== undefined) t.lastHeldS = timeS;
    if (seen === t.holder) {
      t.candidate = seen;
      t.candidateSamples = 0;
      return;
    }
    if (seen !== t.candidate) {
      t.candidate = seen;
      t.candidateSamples = 0;
    }
    t.candidateSamples += 1;
    if (t.candidateSamples < HOLD_DEBOUNCE_SAMPLES) return;
    if (t.holder !== undefined) out.push({ timeS, kind: 'released', objectId: id, arm: t.holder });
    if (seen !== undefined) out.push({ timeS, kind: 'grasped', objectId: id, arm: seen });
    t.holder = seen;
    t.candidateSamples = 0;
  }

  /** Objects done by the task's own scoring rule, from the tracked state. */
  private doneCount(): number | undefined {
    if (this.objects.size !== this.layout.objects.length) return undefined;
    const ends: ObjectEndState[] = this.layout.objects.map((o) => {
      const t = this.objects.get(o.id)!;
      if (t.offTable) return { id: o.id, upright: false, offTable: true };
      return t.region === undefined
        ? { id: o.id, upright: t.upright }
        : { id: o.id, region: t.region, upright: t.upright };
    });
    const units = this.task.progressUnits(this.layout);
    if (units === 0) return undefined;
    const p = this.task.scoreProgress(this.layout, ends);
    return Math.round(p.progress * units);
  }
}

/**
 * The per-step reward the reference lab trains with, from the events: +1 each time an object
 * becomes done by the task's rule (a part into its correct slot, a bottle into the bin, a mug
 * upright), −1 each time one stops being done, and −1 for an object knocked off the table that
 * was not done (a done one already lost its point). Steps are control steps at controlHz.
 */
export function stepRewards(events: readonly TaskEvent[], steps: number, controlHz: number): Float32Array {
  const r = new Float32Array(steps);
  if (steps === 0) return r;
  const at = (timeS: number): number => Math.min(steps - 1, Math.max(0, Math.round(timeS * controlHz)));
  // Per sample time: the count's drop and the objects that went off the table. A done object
  // knocked off shows as both at the same sample: it costs its point once.
  const drops = new Map<number, number>();
  const offs = new Map<number, number>();
  for (const e of events) {
    if (e.kind === 'progress') {
      r[at(e.timeS)] += e.delta!;
      if (e.delta! < 0) drops.set(e.timeS, (drops.get(e.timeS) ?? 0) - e.delta!);
    } else if (e.kind === 'off-table') {
      offs.set(e.timeS, (offs.get(e.timeS) ?? 0) + 1);
    }
  }
  for (const [timeS, n] of offs) r[at(timeS)] -= Math.max(0, n - (drops.get(timeS) ?? 0));
  return r;
}
