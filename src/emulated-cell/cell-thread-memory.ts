/**
 * What the cell's thread publishes about its world, in shared memory (one SharedArrayBuffer), for
 * the station's main thread and the rig thread: the table as a tracker and the cameras see it
 * (link, object and fixture poses; each object's region, posture, off-table and holder), how the
 * world keeps up with real time, and how its motors were commanded. Latest value wins: the cell's
 * thread is the one writer (seqlock), a reader copies and retries, and gives up after a bounded
 * number of tries keeping what it had, so neither side ever waits on the other.
 *
 * Names (links, objects, fixtures, regions) never change while the cell runs: they cross once, in
 * the thread's ready message (CellThreadLayout), and the slot holds numbers only.
 *
 * Pure JavaScript (SharedArrayBuffer and Atomics are language globals): usable on every side.
 */
import type { RigFault } from '../rig/contract.js';

/** Indices into the control words. */
const CTL = {
  SEQ: 0,
  /** Bumped by a reader that took the lag peak: the cell's thread starts a new peak. */
  LAG_PEAK_TAKEN: 1,
  /** Publishes so far: a reader can tell a living cell from a stopped one. */
  PUBLISHES: 2,
} as const;
const CTL_WORDS = 8;

/** Scalars at the head of the slot. */
export const CS = {
  WORLD_S: 0,
  WALL_S: 1,
  BUSY_FRACTION: 2,
  MAX_LAG_MS: 3,
  BEHIND_EVENTS: 4,
  LAG_PEAK_MS: 5,
  /** The current fall-behind's worst lag, ms (0 while the world keeps up): the cell's own fault. */
  BEHIND_NOW_MS: 6,
  /** Times a motor's own watchdog tripped (it damped itself for want of commands). */
  WATCHDOG_TRIPS: 7,
  /** Longest time a powered motor went between two commands, ms. */
  LONGEST_COMMAND_GAP_MS: 8,
  GRIPPER_LEFT: 9,
  GRIPPER_RIGHT: 10,
} as const;
const SCALARS = 11;
const POSE = 7;
const SIGHTING = 4;

/** The names behind the slot's numbers, sent once by the cell's thread. */
export interface CellThreadLayout {
  readonly links: readonly string[];
  readonly objects: readonly { readonly id: string; readonly kind: string }[];
  readonly fixtures: readonly { readonly id: string; readonly kind: string }[];
  readonly regions: readonly string[];
}

export function cellThreadMemoryBytes(l: CellThreadLayout): number {
  return CTL_WORDS * 4 + doubles(l) * 8;
}

function doubles(l: CellThreadLayout): number {
  return SCALARS + (l.links.length + l.objects.length + l.fixtures.length) * POSE + l.objects.length * SIGHTING;
}

/** Tries a seqlock reader makes before keeping what it had (the writer's section takes microseconds). */
const READ_TRIES = 64;

/** Views over one cell's SharedArrayBuffer; every thread builds one over the same buffer. */
export class CellThreadMemory {
  private readonly ctl: Int32Array;
  private readonly slot: Float64Array;
  readonly offLinks: number;
  readonly offObjects: number;
  readonly offFixtures: number;
  readonly offSightings: number;

  constructor(
    readonly layout: CellThreadLayout,
    readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(cellThreadMemoryBytes(layout)),
  ) {
    if (buffer.byteLength < cellThreadMemoryBytes(layout))
      throw new Error(
        `The cell's shared memory needs ${cellThreadMemoryBytes(layout)} bytes, not ${buffer.byteLength}.`,
      );
    this.ctl = new Int32Array(buffer, 0, CTL_WORDS);
    this.slot = new Float64Array(buffer, CTL_WORDS * 4, doubles(layout));
    this.offLinks = SCALARS;
    this.offObjects = this.offLinks + layout.links.length * POSE;
    this.offFixtures = this.offObjects + layout.objects.length * POSE;
    this.offSightings = this.offFixtures + layout.fixtures.length * POSE;
  }

  /** The cell's thread: begin a publish (the slot to fill), then end it. */
  begin(): Float64Array {
    Atomics.add(this.ctl, CTL.SEQ, 1);
    return this.slot;
  }

  end(): void {
    Atomics.add(this.ctl, CTL.SEQ, 1);
    Atomics.add(this.ctl, CTL.PUBLISHES, 1);
  }

  /** A reader: a consistent copy of the slot into `into`; false when none could be made (keep the last). */
  read(into: Float64Array): boolean {
    for (let t = 0; t < READ_TRIES; t++) {
      const s1 = Atomics.load(this.ctl, CTL.SEQ);
      if (s1 & 1) continue;
      into.set(this.slot);
      if (Atomics.load(this.ctl, CTL.SEQ) === s1) return true;
    }
    return false;
  }

  get publishes(): number {
    return Atomics.load(this.ctl, CTL.PUBLISHES);
  }

  /** A reader took the lag peak: the cell's thread starts a new one. */
  lagPeakTaken(): void {
    Atomics.add(this.ctl, CTL.LAG_PEAK_TAKEN, 1);
  }

  get lagPeakTakes(): number {
    return Atomics.load(this.ctl, CTL.LAG_PEAK_TAKEN);
  }

  doubles(): number {
    return this.slot.length;
  }
}

/**
 * The one thing the rig thread needs of the cell: how far its world is behind real time now, in
 * whole ms (0 while it keeps up), in a word of its own — allocated before either thread starts, so
 * the two threads start side by side.
 */
export class CellBehindWord {
  private readonly word: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.word = new Int32Array(buffer, 0, 1);
  }

  /** The cell's thread. */
  set(behindMs: number): void {
    Atomics.store(this.word, 0, Math.ceil(behindMs));
  }

  get(): number {
    return Atomics.load(this.word, 0);
  }
}

/** The world's fall-behind as a fault sentence (the same wherever the world runs). */
export function emulationBehindFault(behindMs: number): RigFault {
  return {
    kind: 'emulation-behind',
    message:
      `The emulated cell's physics fell ${behindMs.toFixed(0)} ms behind real time (this machine is too busy to run it), ` +
      `so what the motors report is no longer what a real cell would do; the arms were damped. Close other work, then activate the rig again.`,
  };
}
