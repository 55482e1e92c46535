/**
 * The shared memory between the station's main thread and the rig thread (one SharedArrayBuffer),
 * after ros2_control's real-time buffers: latest value wins, nothing allocates per cycle, and the
 * rig thread never waits on a lock the main thread holds.
 *
 * Layout (byte offsets; every region 8-byte aligned):
 *
 *   ctl        Int32[32]   wake word, acknowledgements, seqlocks, request counters, ring indices
 *   command    Float64[44] latest command: position[14] velocity[14] torque[14] hasVelocity hasTorque
 *                          (seqlock CMD_SEQ; written by main, read by the rig thread)
 *   state      Float64[90] timeS mode position[14] velocity[14] effort[14] applied position/velocity/
 *                          torque[14 each] framesOut[2] loopCycles       (seqlock STATE_SEQ; rig → main)
 *   interlock  Float64[2]  open (0/1), sampled-at (epoch ms)             (seqlock INTERLOCK_SEQ; main → rig)
 *   estop      UTF-8[512]  the reason of the latest e-stop request         (main → rig, before ESTOP_COUNT)
 *   interlockReason UTF-8[512]
 *   faults     UTF-8[8 KiB] JSON of the rig's current faults, rewritten only when they change (STATE_SEQ)
 *   events     UTF-8 ring [64 KiB] of length-prefixed JSON SafetyEvents (rig → main, drained by
 *                          takeSafetyEvents; a full ring drops and counts, never blocks the rig thread)
 *
 * Seqlock: the one writer makes the sequence odd, writes, makes it even; a reader copies and retries
 * when the sequence was odd or moved. The reader gives up after a bounded number of tries and keeps
 * what it had, so neither side ever waits on the other.
 *
 * Pure JavaScript (SharedArrayBuffer and Atomics are language globals): usable on either side.
 */
import { RigError, STATE_DIM, type RigCommand, type RigFault, type RigMode, type SafetyEvent } from './contract.js';

export const RIG_MODES: readonly RigMode[] = [
  'unconfigured',
  'configured',
  'active',
  'holding',
  'damped',
  'estopped',
  'fault',
];

/** Indices into the control words. */
export const CTL = {
  /** Bumped by the main thread on every request (command, hold, e-stop, message); the rig thread waits on it. */
  REQ: 0,
  /** The last REQ value the rig thread has served (state published after it). */
  ACK: 1,
  CMD_SEQ: 2,
  /** Commands written so far (a new one is a new count). */
  CMD_COUNT: 3,
  ESTOP_COUNT: 4,
  HOLD_COUNT: 5,
  STATE_SEQ: 6,
  FAULTS_VERSION: 7,
  FAULTS_LENGTH: 8,
  EVENTS_HEAD: 9,
  EVENTS_TAIL: 10,
  EVENTS_DROPPED: 11,
  INTERLOCK_SEQ: 12,
  INTERLOCK_REASON_LENGTH: 13,
  ESTOP_REASON_LENGTH: 14,
  /** Rig thread cycles so far: the main thread can tell a living loop from a stalled one. */
  ALIVE: 15,
  /** Interlock mirroring on: 1 when the station has an interlock (absent = none, as without a PLC). */
  INTERLOCK_PRESENT: 16,
} as const;
const CTL_WORDS = 32;

const CMD = {
  POSITION: 0,
  VELOCITY: STATE_DIM,
  TORQUE: 2 * STATE_DIM,
  HAS_VELOCITY: 3 * STATE_DIM,
  HAS_TORQUE: 3 * STATE_DIM + 1,
} as const;
const CMD_DOUBLES = 3 * STATE_DIM + 2;

export const ST = {
  TIME: 0,
  MODE: 1,
  POSITION: 2,
  VELOCITY: 2 + STATE_DIM,
  EFFORT: 2 + 2 * STATE_DIM,
  APPLIED_POSITION: 2 + 3 * STATE_DIM,
  APPLIED_VELOCITY: 2 + 4 * STATE_DIM,
  APPLIED_TORQUE: 2 + 5 * STATE_DIM,
  FRAMES_OUT_LEFT: 2 + 6 * STATE_DIM,
  FRAMES_OUT_RIGHT: 3 + 6 * STATE_DIM,
  CYCLES: 4 + 6 * STATE_DIM,
} as const;
const ST_DOUBLES = 5 + 6 * STATE_DIM;

const TEXT_SMALL = 512;
const FAULTS_BYTES = 8 * 1024;
/** Events are rare (a few per episode, a burst at a fault): 64 KiB holds hundreds, far beyond a 2 s stall. */
export const EVENTS_BYTES = 64 * 1024;

const OFF_CTL = 0;
const OFF_CMD = OFF_CTL + CTL_WORDS * 4;
const OFF_ST = OFF_CMD + CMD_DOUBLES * 8;
const OFF_IL = OFF_ST + ST_DOUBLES * 8;
const OFF_ESTOP_TEXT = OFF_IL + 2 * 8;
const OFF_IL_TEXT = OFF_ESTOP_TEXT + TEXT_SMALL;
const OFF_FAULTS = OFF_IL_TEXT + TEXT_SMALL;
const OFF_EVENTS = OFF_FAULTS + FAULTS_BYTES;
export const RIG_THREAD_MEMORY_BYTES = OFF_EVENTS + EVENTS_BYTES;

/** Tries a seqlock reader makes before keeping what it had (the writer's section takes microseconds). */
const READ_TRIES = 64;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function writeText(dst: Uint8Array, text: string): number {
  // TextEncoder may refuse shared views; encode locally, then copy.
  let bytes = encoder.encode(text);
  if (bytes.length > dst.length) bytes = encoder.encode(`${text.slice(0, Math.floor(dst.length / 4) - 1)}…`);
  dst.set(bytes);
  return bytes.length;
}

function readText(src: Uint8Array, length: number): string {
  return decoder.decode(src.slice(0, length));
}

/**
 * The faults as JSON that fits the slot: when every arm's motors fault at once their sentences can
 * outgrow it, and a cut text would not parse; the first ones are kept whole and the last says how
 * many more there were.
 */
function faultsJson(faults: readonly RigFault[]): string {
  let json = JSON.stringify(faults);
  for (let keep = faults.length - 1; encoder.encode(json).length > FAULTS_BYTES && keep >= 0; keep--) {
    const more = faults.length - keep;
    json = JSON.stringify([
      ...faults.slice(0, keep),
      {
        kind: faults[keep].kind,
        message: `…and ${more} more fault${more === 1 ? '' : 's'} (the rig's diagnostics list them all).`,
      },
    ]);
  }
  return json;
}

/** Views over one rig thread's SharedArrayBuffer; both threads build one over the same buffer. */
export class RigThreadMemory {
  readonly ctl: Int32Array;
  private readonly cmd: Float64Array;
  private readonly st: Float64Array;
  private readonly il: Float64Array;
  private readonly estopText: Uint8Array;
  private readonly ilText: Uint8Array;
  private readonly faultsText: Uint8Array;
  private readonly events: Uint8Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(RIG_THREAD_MEMORY_BYTES)) {
    if (buffer.byteLength < RIG_THREAD_MEMORY_BYTES)
      throw new Error(
        `The rig thread's shared memory needs ${RIG_THREAD_MEMORY_BYTES} bytes, not ${buffer.byteLength}.`,
      );
    this.ctl = new Int32Array(buffer, OFF_CTL, CTL_WORDS);
    this.cmd = new Float64Array(buffer, OFF_CMD, CMD_DOUBLES);
    this.st = new Float64Array(buffer, OFF_ST, ST_DOUBLES);
    this.il = new Float64Array(buffer, OFF_IL, 2);
    this.estopText = new Uint8Array(buffer, OFF_ESTOP_TEXT, TEXT_SMALL);
    this.ilText = new Uint8Array(buffer, OFF_IL_TEXT, TEXT_SMALL);
    this.faultsText = new Uint8Array(buffer, OFF_FAULTS, FAULTS_BYTES);
    this.events = new Uint8Array(buffer, OFF_EVENTS, EVENTS_BYTES);
  }

  // ---- wake / acknowledge -------------------------------------------------------------------

  /** Main: wake the rig thread; returns the request number to wait for. */
  request(): number {
    const n = Atomics.add(this.ctl, CTL.REQ, 1) + 1;
    Atomics.notify(this.ctl, CTL.REQ);
    return n;
  }

  /** Main: block until the rig thread has served request `n`, at most `timeoutMs`; false on timeout. */
  awaitServed(n: number, timeoutMs: number): boolean {
    const end = performance.now() + timeoutMs;
    for (;;) {
      const served = Atomics.load(this.ctl, CTL.ACK);
      if (served - n >= 0) return true;
      const left = end - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.ctl, CTL.ACK, served, left);
    }
  }

  /** Rig thread: requests up to `n` are served and the state is published. */
  served(n: number): void {
    Atomics.store(this.ctl, CTL.ACK, n);
    Atomics.notify(this.ctl, CTL.ACK);
  }

  // ---- command slot (main → rig) ------------------------------------------------------------

  /** Main: publish a command as the latest; copies it (no allocation). */
  writeCommand(cmd: RigCommand): void {
    const c = this.cmd;
    Atomics.add(this.ctl, CTL.CMD_SEQ, 1); // now odd
    const p = cmd.position;
    const n = p?.length ?? 0;
    // A malformed command crosses as it is (NaN-padded to the slot): the supervisor rejects it there.
    for (let k = 0; k < STATE_DIM; k++) c[CMD.POSITION + k] = k < n ? p[k] : NaN;
    c[CMD.HAS_VELOCITY] = cmd.velocity ? 1 : 0;
    c[CMD.HAS_TORQUE] = cmd.torqueNm ? 1 : 0;
    if (cmd.velocity)
      for (let k = 0; k < STATE_DIM; k++) c[CMD.VELOCITY + k] = k < cmd.velocity.length ? cmd.velocity[k] : NaN;
    if (cmd.torqueNm)
      for (let k = 0; k < STATE_DIM; k++) c[CMD.TORQUE + k] = k < cmd.torqueNm.length ? cmd.torqueNm[k] : NaN;
    if (n !== STATE_DIM) c[CMD.POSITION] = NaN;
    Atomics.add(this.ctl, CTL.CMD_COUNT, 1);
    Atomics.add(this.ctl, CTL.CMD_SEQ, 1); // even again
  }

  /**
   * Rig thread: the latest command into `into` if one newer than `seenCount` is there; returns its
   * count, or `seenCount` when there is none (or the writer is mid-write: next time).
   */
  readCommand(
    seenCount: number,
    into: {
      position: Float64Array;
      velocity: Float64Array;
      torqueNm: Float64Array;
      hasVelocity: boolean;
      hasTorque: boolean;
    },
  ): number {
    const c = this.cmd;
    for (let t = 0; t < READ_TRIES; t++) {
      const s1 = Atomics.load(this.ctl, CTL.CMD_SEQ);
      if (s1 & 1) continue;
      const count = Atomics.load(this.ctl, CTL.CMD_COUNT);
      if (count === seenCount) return seenCount;
      for (let k = 0; k < STATE_DIM; k++) {
        into.position[k] = c[CMD.POSITION + k];
        into.velocity[k] = c[CMD.VELOCITY + k];
        into.torqueNm[k] = c[CMD.TORQUE + k];
      }
      into.hasVelocity = c[CMD.HAS_VELOCITY] === 1;
      into.hasTorque = c[CMD.HAS_TORQUE] === 1;
      if (Atomics.load(this.ctl, CTL.CMD_SEQ) === s1) return count;
    }
    return seenCount;
  }

  // ---- hold / e-stop requests (main → rig) --------------------------------------------------

  requestHold(): void {
    Atomics.add(this.ctl, CTL.HOLD_COUNT, 1);
  }

  /**
   * Any thread (the UI's request handler, a pedal reader, the PLC client): an e-stop. The rig thread
   * serves it the moment it wakes, and checks for one every cycle; nothing here waits for the main
   * thread's event loop. Returns the request number (see awaitServed).
   */
  requestEstop(reason: string): number {
    Atomics.store(this.ctl, CTL.ESTOP_REASON_LENGTH, writeText(this.estopText, reason));
    Atomics.add(this.ctl, CTL.ESTOP_COUNT, 1);
    return this.request();
  }

  estopReason(): string {
    return readText(this.estopText, Atomics.load(this.ctl, CTL.ESTOP_REASON_LENGTH));
  }

  // ---- interlock (main → rig) ---------------------------------------------------------------

  /** Main: the interlock as its source reads it now, stamped with the time (epoch ms). Allocation-free when unchanged and closed. */
  writeInterlock(open: boolean, reason: string | undefined, atEpochMs: number): void {
    Atomics.store(this.ctl, CTL.INTERLOCK_PRESENT, 1);
    Atomics.add(this.ctl, CTL.INTERLOCK_SEQ, 1);
    this.il[0] = open ? 1 : 0;
    this.il[1] = atEpochMs;
    if (open) Atomics.store(this.ctl, CTL.INTERLOCK_REASON_LENGTH, writeText(this.ilText, reason ?? ''));
    Atomics.add(this.ctl, CTL.INTERLOCK_SEQ, 1);
  }

  get interlockPresent(): boolean {
    return Atomics.load(this.ctl, CTL.INTERLOCK_PRESENT) === 1;
  }

  /**
   * Rig thread: [open, sampled-at epoch ms] into `into`, which holds the last good reading. A write
   * in progress through every try (the main thread preempted mid-write on a busy machine) leaves
   * that last reading in place rather than reading open: its age still turns it open once the
   * station has not confirmed it for INTERLOCK_STALE_MS, and a torn read no longer stops the arms
   * of a closed cell with no reason to give. Never read yet, `into` is [0, 0]: stale, so open.
   */
  readInterlock(into: Float64Array): void {
    for (let t = 0; t < READ_TRIES; t++) {
      const s1 = Atomics.load(this.ctl, CTL.INTERLOCK_SEQ);
      if (s1 & 1) continue;
      const open = this.il[0];
      const at = this.il[1];
      if (Atomics.load(this.ctl, CTL.INTERLOCK_SEQ) === s1) {
        into[0] = open;
        into[1] = at;
        return;
      }
    }
  }

  interlockReason(): string {
    return readText(this.ilText, Atomics.load(this.ctl, CTL.INTERLOCK_REASON_LENGTH));
  }

  // ---- state (rig → main) -------------------------------------------------------------------

  /** Rig thread: begin/end a state write (seqlock). */
  beginState(): Float64Array {
    Atomics.add(this.ctl, CTL.STATE_SEQ, 1);
    return this.st;
  }

  endState(): void {
    Atomics.add(this.ctl, CTL.STATE_SEQ, 1);
    Atomics.add(this.ctl, CTL.ALIVE, 1);
  }

  /** Rig thread, inside begin/endState: the current faults, when they changed. */
  writeFaults(faults: readonly RigFault[]): void {
    Atomics.store(this.ctl, CTL.FAULTS_LENGTH, writeText(this.faultsText, faultsJson(faults)));
    Atomics.add(this.ctl, CTL.FAULTS_VERSION, 1);
  }

  /** Main: copies the state into `into` (same layout); false when no consistent copy could be made. */
  readState(into: Float64Array): { ok: boolean; faultsVersion: number } {
    for (let t = 0; t < READ_TRIES; t++) {
      const s1 = Atomics.load(this.ctl, CTL.STATE_SEQ);
      if (s1 & 1) continue;
      into.set(this.st);
      const fv = Atomics.load(this.ctl, CTL.FAULTS_VERSION);
      if (Atomics.load(this.ctl, CTL.STATE_SEQ) === s1) return { ok: true, faultsVersion: fv };
    }
    return { ok: false, faultsVersion: -1 };
  }

  /** Main: the faults as last written (called only when their version moved). */
  readFaults(): RigFault[] {
    for (let t = 0; t < READ_TRIES; t++) {
      const s1 = Atomics.load(this.ctl, CTL.STATE_SEQ);
      if (s1 & 1) continue;
      const text = readText(this.faultsText, Atomics.load(this.ctl, CTL.FAULTS_LENGTH));
      if (Atomics.load(this.ctl, CTL.STATE_SEQ) === s1)
        return text.length === 0 ? [] : (JSON.parse(text) as RigFault[]);
    }
    return [];
  }

  static stateDoubles(): number {
    return ST_DOUBLES;
  }

  // ---- safety events ring (rig → main) ------------------------------------------------------

  /** Rig thread: appends one event; a full ring drops it and counts (never waits for the reader). */
  pushEvent(e: SafetyEvent): void {
    const bytes = encoder.encode(JSON.stringify(e));
    const head = Atomics.load(this.ctl, CTL.EVENTS_HEAD);
    const tail = Atomics.load(this.ctl, CTL.EVENTS_TAIL);
    const need = 4 + bytes.length;
    if (need > EVENTS_BYTES - (head - tail)) {
      Atomics.add(this.ctl, CTL.EVENTS_DROPPED, 1);
      return;
    }
    const ring = this.events;
    const len = bytes.length;
    for (let i = 0; i < 4; i++) ring[(head + i) % EVENTS_BYTES] = (len >>> (8 * i)) & 0xff;
    for (let i = 0; i < len; i++) ring[(head + 4 + i) % EVENTS_BYTES] = bytes[i];
    Atomics.store(this.ctl, CTL.EVENTS_HEAD, head + need);
  }

  /** Main: every event pushed since the last drain. */
  drainEvents(): SafetyEvent[] {
    const head = Atomics.load(this.ctl, CTL.EVENTS_HEAD);
    let tail = Atomics.load(this.ctl, CTL.EVENTS_TAIL);
    if (head === tail) return [];
    const out: SafetyEvent[] = [];
    const ring = this.events;
    while (tail !== head) {
      let len = 0;
      for (let i = 0; i < 4; i++) len |= ring[(tail + i) % EVENTS_BYTES] << (8 * i);
      const bytes = new Uint8Array(len);
      for (let i = 0; i < len; i++) bytes[i] = ring[(tail + 4 + i) % EVENTS_BYTES];
      out.push(JSON.parse(decoder.decode(bytes)) as SafetyEvent);
      tail += 4 + len;
    }
    Atomics.store(this.ctl, CTL.EVENTS_TAIL, tail);
    return out;
  }

  get eventsDropped(): number {
    return Atomics.load(this.ctl, CTL.EVENTS_DROPPED);
  }
}

/** A RigError as it crosses a message channel, and back. */
export interface RigErrorMessage {
  readonly message: string;
  readonly fault?: RigFault;
}

export function errorToMessage(e: unknown): RigErrorMessage {
  if (e instanceof RigError) return { message: e.message, fault: e.fault };
  return { message: e instanceof Error ? e.message : String(e) };
}

export function errorFromMessage(m: RigErrorMessage): Error {
  return m.fault ? new RigError(m.message, m.fault) : new Error(m.message);
}
