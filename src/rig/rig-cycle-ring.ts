/**
 * Every motor cycle of a rig thread, kept for the recorder in shared memory (one SharedArrayBuffer):
 * the cycle number, the state the cycle measured and the command the safety supervisor sent.
 *
 * One writer (the rig thread, once per cycle), one reader (the episode recorder, on the main
 * thread, whenever its event loop gets to it). The writer never waits: a record goes into the next
 * free slot and only then is the head moved; a full ring drops the cycle and counts it, so a
 * recording can always say how many cycles it lacks — never silently. The reader copies from the
 * tail and moves it after the copy, so the writer never overwrites a slot being read.
 *
 * Records are kept only while a reader has said it wants them (start … stop): between recordings
 * the ring stays empty and nothing is counted as lost.
 *
 * Pure JavaScript (SharedArrayBuffer and Atomics are language globals): usable on either side.
 */
import { STATE_DIM, type RigCommand, type RigState } from './contract.js';
import { RIG_MODES } from './rig-thread-memory.js';

const H = {
  /** Records written so far (mod 2^32); the writer's. */
  HEAD: 0,
  /** Records read so far; the reader's. */
  TAIL: 1,
  /** Cycles dropped because the ring was full, since the buffer was made. */
  DROPPED: 2,
  /** 1 while a reader keeps cycles. */
  KEEP: 3,
  CAPACITY: 4,
} as const;
const HEADER_WORDS = 8;

/** One record: cycle, time, mode, flags (1 velocity sent, 2 torque sent), then six 14-vectors. */
export const CYCLE = {
  CYCLE: 0,
  TIME: 1,
  MODE: 2,
  FLAGS: 3,
  POSITION: 4,
  VELOCITY: 4 + STATE_DIM,
  EFFORT: 4 + 2 * STATE_DIM,
  APPLIED_POSITION: 4 + 3 * STATE_DIM,
  APPLIED_VELOCITY: 4 + 4 * STATE_DIM,
  APPLIED_TORQUE: 4 + 5 * STATE_DIM,
} as const;
export const CYCLE_DOUBLES = 4 + 6 * STATE_DIM;

/**
 * Seconds of cycles the ring holds by default: twice the longest main-thread stall it must ride out
 * (2 s, a long GC pause or a big synchronous request), so a 2 s stall loses nothing.
 */
export const CYCLE_RING_SECONDS = 4;

/** The ring's capacity, in cycles, for `seconds` at `rateHz`. */
export function cycleRingCapacity(rateHz: number, seconds = CYCLE_RING_SECONDS): number {
  return Math.max(2, Math.ceil(rateHz * seconds));
}

/** One cycle as the reader sees it (its arrays are reused for the next record: copy what you keep). */
export interface RigCycle {
  readonly cycle: number;
  /** On the clock the writer stamped (a rig thread: epoch seconds); a reader may shift it. */
  timeS: number;
  readonly mode: RigState['mode'];
  readonly position: Float64Array;
  readonly velocity: Float64Array;
  readonly effort: Float64Array;
  readonly appliedPosition: Float64Array;
  /** Empty when the cycle sent no velocity feed-forward. */
  readonly appliedVelocity: Float64Array;
  /** Empty when the cycle sent no torque feed-forward. */
  readonly appliedTorque: Float64Array;
}

const EMPTY = new Float64Array(0);

export class RigCycleRing {
  readonly capacity: number;
  private readonly header: Int32Array;
  private readonly records: Float64Array;
  private readonly copy = new Float64Array(CYCLE_DOUBLES);
  private readonly view: {
    cycle: number;
    timeS: number;
    mode: RigState['mode'];
    position: Float64Array;
    velocity: Float64Array;
    effort: Float64Array;
    appliedPosition: Float64Array;
    appliedVelocity: Float64Array;
    appliedTorque: Float64Array;
  };
  /** The reader's baseline: drops counted before this reader started. */
  private droppedAtStart = 0;

  /** A new ring of `capacity` cycles, or a view over one another thread made (`buffer`). */
  constructor(capacityOrBuffer: number | SharedArrayBuffer) {
    let buffer: SharedArrayBuffer;
    if (typeof capacityOrBuffer === 'number') {
      if (!Number.isInteger(capacityOrBuffer) || capacityOrBuffer < 2)
        throw new RangeError(`A rig cycle ring holds at least 2 cycles, not ${capacityOrBuffer}.`);
      buffer = new SharedArrayBuffer(HEADER_WORDS * 4 + capacityOrBuffer * CYCLE_DOUBLES * 8);
      new Int32Array(buffer, 0, HEADER_WORDS)[H.CAPACITY] = capacityOrBuffer;
    } else buffer = capacityOrBuffer;
    this.header = new Int32Array(buffer, 0, HEADER_WORDS);
    this.capacity = this.header[H.CAPACITY];
    this.records = new Float64Array(buffer, HEADER_WORDS * 4, this.capacity * CYCLE_DOUBLES);
    const c = this.copy;
    this.view = {
      cycle: 0,
      timeS: 0,
      mode: 'unconfigured',
      position: c.subarray(CYCLE.POSITION, CYCLE.POSITION + STATE_DIM),
      velocity: c.subarray(CYCLE.VELOCITY, CYCLE.VELOCITY + STATE_DIM),
      effort: c.subarray(CYCLE.EFFORT, CYCLE.EFFORT + STATE_DIM),
      appliedPosition: c.subarray(CYCLE.APPLIED_POSITION, CYCLE.APPLIED_POSITION + STATE_DIM),
      appliedVelocity: EMPTY,
      appliedTorque: EMPTY,
    };
  }

  get buffer(): SharedArrayBuffer {
    return this.header.buffer as SharedArrayBuffer;
  }

  // ---- writer (the rig thread) ----------------------------------------------------------------

  /** Whether a reader keeps cycles now (the writer skips the copy otherwise). */
  get keeping(): boolean {
    return Atomics.load(this.header, H.KEEP) === 1;
  }

  /** Appends one cycle; a full ring drops it and counts the drop. No allocation. */
  push(cycle: number, state: RigState, applied: RigCommand | undefined): void {
    if (Atomics.load(this.header, H.KEEP) !== 1) return;
    const head = Atomics.load(this.header, H.HEAD);
    const tail = Atomics.load(this.header, H.TAIL);
    if ((head - tail) >>> 0 >= this.capacity) {
      Atomics.add(this.header, H.DROPPED, 1);
      return;
    }
    const r = this.records;
    const o = ((head >>> 0) % this.capacity) * CYCLE_DOUBLES;
    r[o + CYCLE.CYCLE] = cycle;
    r[o + CYCLE.TIME] = state.timeS;
    r[o + CYCLE.MODE] = RIG_MODES.indexOf(state.mode);
    r.set(state.position, o + CYCLE.POSITION);
    r.set(state.velocity, o + CYCLE.VELOCITY);
    r.set(state.effort, o + CYCLE.EFFORT);
    let flags = 0;
    if (applied) {
      r.set(applied.position, o + CYCLE.APPLIED_POSITION);
      if (applied.velocity) {
        r.set(applied.velocity, o + CYCLE.APPLIED_VELOCITY);
        flags |= 1;
      }
      if (applied.torqueNm) {
        r.set(applied.torqueNm, o + CYCLE.APPLIED_TORQUE);
        flags |= 2;
      }
    } else r.fill(NaN, o + CYCLE.APPLIED_POSITION, o + CYCLE.APPLIED_POSITION + STATE_DIM);
    r[o + CYCLE.FLAGS] = flags;
    Atomics.store(this.header, H.HEAD, (head + 1) | 0);
  }

  // ---- reader (the recorder) ------------------------------------------------------------------

  /** Keep cycles from now on; whatever the ring held before is discarded, and the lost count starts at 0. */
  start(): void {
    Atomics.store(this.header, H.TAIL, Atomics.load(this.header, H.HEAD));
    this.droppedAtStart = Atomics.load(this.header, H.DROPPED);
    Atomics.store(this.header, H.KEEP, 1);
  }

  /** Stop keeping cycles (those already in the ring can still be drained). */
  stop(): void {
    Atomics.store(this.header, H.KEEP, 0);
  }

  /** Cycles the writer had to drop (ring full) since start(). */
  get lost(): number {
    return (Atomics.load(this.header, H.DROPPED) - this.droppedAtStart) >>> 0;
  }

  /** Cycles waiting to be drained. */
  get pending(): number {
    return (Atomics.load(this.header, H.HEAD) - Atomics.load(this.header, H.TAIL)) >>> 0;
  }

  /** Calls `visit` for every cycle kept since the last drain, oldest first; returns how many. */
  drain(visit: (c: RigCycle) => void): number {
    const head = Atomics.load(this.header, H.HEAD);
    let tail = Atomics.load(this.header, H.TAIL);
    let n = 0;
    const v = this.view;
    const c = this.copy;
    while (tail !== head) {
      const o = ((tail >>> 0) % this.capacity) * CYCLE_DOUBLES;
      c.set(this.records.subarray(o, o + CYCLE_DOUBLES));
      // The slot is free again as soon as it is copied.
      tail = (tail + 1) | 0;
      Atomics.store(this.header, H.TAIL, tail);
      v.cycle = c[CYCLE.CYCLE];
      v.timeS = c[CYCLE.TIME];
      v.mode = RIG_MODES[c[CYCLE.MODE]] ?? 'fault';
      const flags = c[CYCLE.FLAGS];
      v.appliedVelocity = flags & 1 ? c.subarray(CYCLE.APPLIED_VELOCITY, CYCLE.APPLIED_VELOCITY + STATE_DIM) : EMPTY;
      v.appliedTorque = flags & 2 ? c.subarray(CYCLE.APPLIED_TORQUE, CYCLE.APPLIED_TORQUE + STATE_DIM) : EMPTY;
      visit(v);
      n++;
    }
    return n;
  }
}

/** A rig that keeps its every motor cycle in a ring (a rig thread's proxy); see rigCyclesOf. */
export interface RigCycleSource {
  /** The ring, and the seconds to add to its stamps to get the station clock's time. */
  rigCycles(): { readonly ring: RigCycleRing; readonly rateHz: number; clockOffsetS(): number };
}

/** The rig's cycle ring, or undefined for a rig whose motor cycles are its control loop's steps (in-thread rigs, the sim). */
export function rigCyclesOf(rig: object): ReturnType<RigCycleSource['rigCycles']> | undefined {
  const f = (rig as Partial<RigCycleSource>).rigCycles;
  return typeof f === 'function' ? f.call(rig) : undefined;
}
