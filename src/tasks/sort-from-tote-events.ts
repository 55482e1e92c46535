/**
 * sort-from-tote's own events and per-step reward, from the privileged state: the reward the
 * reference lab trained its 384 sim environments with — +1 for each part placed in its correct
 * slot, −1 for each part knocked out of the target region, no shaping. Pure: the sim says where
 * each part is at each sample (ObjectSighting); this module decides what happened.
 *
 * The target region is where parts belong while the task runs: the tote and the sorter's slots.
 * A part *leaves* it when it rests outside them — on the table, or off it — with no hand holding
 * it; a part carried between tote and sorter is outside both, held, and has not left. A part let
 * go above a slot falls for a few samples before it is in the slot, so "outside" must last
 * OUT_OF_REGION_S before it counts; off the table counts at once.
 *
 * Each part earns its +1 once per episode (the first time it lies in its correct slot with no hand
 * on it): taking a part out and putting it back earns nothing more, so the return is at most the
 * number of parts. Each knock-out costs −1; a part put back into the tote or a slot can be knocked
 * out (and cost) again.
 */
import { categoryOf } from './catalogue.js';
import { SORT_FROM_TOTE } from './sort-from-tote.js';
import type { StationArm } from './station.js';
import type { ObjectSighting } from './task-events.js';
import type { Layout } from './types.js';

export const SORT_EVENT_KINDS = ['picked', 'in-correct-slot', 'in-wrong-slot', 'knocked-out', 'off-table'] as const;
export type SortEventKind = (typeof SORT_EVENT_KINDS)[number];

export interface SortEvent {
  /** Episode time, seconds from the first sample. */
  readonly timeS: number;
  readonly kind: SortEventKind;
  readonly objectId: string;
  /** picked: the arm that picked it. */
  readonly arm?: StationArm;
  /** in-correct-slot / in-wrong-slot: the slot region (`slot:nut`, …). */
  readonly slot?: string;
  /** What this event adds to the step's reward: +1 (a part's first time in its correct slot), −1 (knocked out), else 0. */
  readonly reward: number;
}

/** A part outside the target region, unheld, this long has been knocked out of it (a released part falls into its slot sooner). */
export const OUT_OF_REGION_S = 0.5;
/** A hand must hold a part for this many samples in a row before it counts as picked (contacts chatter). */
export const PICK_DEBOUNCE_SAMPLES = 2;

const TARGET_REGIONS: ReadonlySet<string> = new Set(SORT_FROM_TOTE.regionIds);

interface PartState {
  readonly correctSlot: string;
  /** In the target region (tote or a slot), as the last decision had it. */
  inTarget: boolean;
  /** The slot it last lay in, unheld (so entering it is an event once, not every sample). */
  restingSlot: string | undefined;
  /** Earned its +1 already. */
  credited: boolean;
  offTable: boolean;
  holder: StationArm | undefined;
  candidate: StationArm | undefined;
  candidateSamples: number;
  /** Since when it has been outside the target region with no hand on it (undefined: it is not). */
  outsideSinceS: number | undefined;
}

/**
 * Turns sightings into sort-from-tote events. The first sample sets the starting state: parts
 * that start in their correct slot are credited without reward, parts that start outside the
 * target region are out without penalty. Parts missing from a sample keep their state.
 */
export class SortEventTracker {
  private readonly parts = new Map<string, PartState>();
  private readonly order: readonly string[];
  private started = false;
  private readonly all: SortEvent[] = [];

  constructor(layout: Layout) {
    const kinds = new Map(SORT_FROM_TOTE.objectKinds.map((k) => [k.id, k] as const));
    this.order = layout.objects.map((o) => o.id);
    for (const o of layout.objects) {
      const kind = kinds.get(o.kind);
      if (!kind) throw new Error(`Part '${o.id}' is a '${o.kind}', which sort-from-tote does not have.`);
      this.parts.set(o.id, {
        correctSlot: `slot:${categoryOf(kind)}`,
        inTarget: true,
        restingSlot: undefined,
        credited: false,
        offTable: false,
        holder: undefined,
        candidate: undefined,
        candidateSamples: 0,
        outsideSinceS: undefined,
      });
    }
  }

  /** Events since the previous sample, parts in layout order. */
  observe(timeS: number, sightings: readonly ObjectSighting[]): SortEvent[] {
    const byId = new Map(sightings.map((s) => [s.id, s] as const));
    const out: SortEvent[] = [];
    const first = !this.started;
    this.started = true;
    for (const id of this.order) {
      const s = byId.get(id);
      const p = this.parts.get(id)!;
      if (!s) continue;
      if (first) {
        this.start(p, s, timeS);
        continue;
      }
      this.pick(timeS, id, p, s.heldBy, out);
      const held = p.holder !== undefined;
      const inTarget = !s.offTable && s.region !== undefined && TARGET_REGIONS.has(s.region);
      // Lying in a slot, unheld: placed there (right or wrong), once per arrival.
      const slot = !held && inTarget && s.region!.startsWith('slot:') ? s.region : undefined;
      if (slot !== undefined && slot !== p.restingSlot) {
        if (slot === p.correctSlot) {
          out.push({ timeS, kind: 'in-correct-slot', objectId: id, slot, reward: p.credited ? 0 : 1 });
          p.credited = true;
        } else {
          out.push({ timeS, kind: 'in-wrong-slot', objectId: id, slot, reward: 0 });
        }
      }
      // Picked up, it no longer lies in a slot: set down there again, it arrives again (without a second +1).
      p.restingSlot = slot;
      if (s.offTable && !p.offTable) {
        p.offTable = true;
        out.push({ timeS, kind: 'off-table', objectId: id, reward: 0 });
      }
      if (inTarget) {
        p.inTarget = true;
        p.outsideSinceS = undefined;
      } else if (held) {
        p.outsideSinceS = undefined;
      } else {
        p.outsideSinceS ??= timeS;
        if (p.inTarget && (p.offTable || timeS - p.outsideSinceS >= OUT_OF_REGION_S - 1e-9)) {
          p.inTarget = false;
          out.push({ timeS, kind: 'knocked-out', objectId: id, reward: -1 });
        }
      }
    }
    this.all.push(...out);
    return out;
  }

  /** Every event so far. */
  events(): readonly SortEvent[] {
    return this.all;
  }

  /** Every part lies in its correct slot, unheld (the task is done). */
  allInCorrectSlot(): boolean {
    if (this.parts.size === 0) return false;
    for (const p of this.parts.values()) if (p.restingSlot !== p.correctSlot) return false;
    return true;
  }

  private start(p: PartState, s: ObjectSighting, timeS: number): void {
    p.offTable = s.offTable;
    p.inTarget = !s.offTable && s.region !== undefined && TARGET_REGIONS.has(s.region);
    p.holder = s.heldBy;
    p.candidate = s.heldBy;
    p.restingSlot = s.heldBy === undefined && p.inTarget && s.region!.startsWith('slot:') ? s.region : undefined;
    p.credited = p.restingSlot === p.correctSlot;
    p.outsideSinceS = p.inTarget || s.heldBy ? undefined : timeS;
  }

  private pick(timeS: number, id: string, p: PartState, seen: StationArm | undefined, out: SortEvent[]): void {
    if (seen === p.holder) {
      p.candidate = seen;
      p.candidateSamples = 0;
      return;
    }
    if (seen !== p.candidate) {
      p.candidate = seen;
      p.candidateSamples = 0;
    }
    p.candidateSamples += 1;
    if (p.candidateSamples < PICK_DEBOUNCE_SAMPLES) return;
    p.holder = seen;
    p.candidateSamples = 0;
    if (seen !== undefined) out.push({ timeS, kind: 'picked', objectId: id, arm: seen, reward: 0 });
  }
}

/** The step's reward: the sum of its events' rewards. */
export function sortReward(events: readonly SortEvent[]): number {
  let r = 0;
  for (const e of events) r += e.reward;
  return r;
}

/** The return a list of events implies, counted from their kinds: first arrivals in the correct slot minus knock-outs. */
export function sortReturnFromEvents(events: readonly Pick<SortEvent, 'kind' | 'reward'>[]): number {
  let n = 0;
  for (const e of events) {
    if (e.kind === 'in-correct-slot' && e.reward > 0) n += 1;
    else if (e.kind === 'knocked-out') n -= 1;
  }
  return n;
}

/** Sentence for one event. */
export function describeSortEvent(e: SortEvent): string {
  const t = `${e.timeS.toFixed(2)} s`;
  switch (e.kind) {
    case 'picked':
      return `${t}: the ${e.arm} hand picked ${e.objectId}.`;
    case 'in-correct-slot':
      return `${t}: ${e.objectId} is in its slot ${e.slot}${e.reward > 0 ? ' (+1)' : ' (again, no reward)'}.`;
    case 'in-wrong-slot':
      return `${t}: ${e.objectId} is in the wrong slot ${e.slot}.`;
    case 'knocked-out':
      return `${t}: ${e.objectId} was knocked out of the tote and sorter (−1).`;
    case 'off-table':
      return `${t}: ${e.objectId} went off the table.`;
  }
}
