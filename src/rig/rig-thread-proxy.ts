/**
 * The main thread's Rig for a rig that runs in its own thread (src/rig/rig-thread-loop.ts): the
 * same contract, so the rollout loop, sessions and `rig hold` cannot tell it from an in-thread rig.
 *
 * - write / hold / estop go through shared memory (src/rig/rig-thread-memory.ts) and wake the rig
 *   thread, which serves them at once; the call then waits (bounded, Atomics.wait) for the rig
 *   thread to say it is done, so write() returns what the supervisor really applied and read()
 *   right after shows the new mode — the contract's synchronous answers, at the cost of one
 *   thread hand-off (tens of microseconds) on the main thread, never on the motors' side.
 * - read() copies the latest state the rig thread published; tick() is empty: the rig thread
 *   ticks itself at the motor rate whatever this thread does.
 * - configure / activate / deactivate / close cross a message channel; a RigError comes back as
 *   the same RigError (kind, arm, joint, sentence).
 * - The e-stop word is written directly into shared memory: the rig thread reads it every cycle
 *   and when it wakes, without waiting for this thread's event loop.
 * - The cell's interlock (if any) is mirrored into shared memory by a timer here and on every
 *   call; the rig thread treats a reading it cannot trust (older than INTERLOCK_STALE_MS) as open.
 * - If the rig thread dies, or hangs (its motor loop has not run for RIG_THREAD_SILENT_MS, seen
 *   from the cycle count it publishes: then it is ended), read() reports one fault sentence and
 *   the motors — no longer commanded — damp by their own watchdog.
 */
import { Worker, type TransferListItem } from 'node:worker_threads';
import {
  STATE_DIM,
  RigError,
  type Clock,
  type CellInterlock,
  type Rig,
  type RigCommand,
  type RigFault,
  type RigModel,
  type RigState,
  type SafetyEvent,
} from './contract.js';
import { RIG_MODES, RigThreadMemory, ST, errorFromMessage } from './rig-thread-memory.js';
import { RigCycleRing, cycleRingCapacity, type RigCycleSource } from './rig-cycle-ring.js';
import { epochNowS, type RigThreadReply, type RigThreadRequest, type RigThreadStats } from './rig-thread-loop.js';

export interface RigThreadOptions {
  readonly model: RigModel;
  /** The worker's entry module (registers the TypeScript loader, then builds the rig). */
  readonly entry: URL;
  /** What the entry needs to build its rig (structured-cloneable). */
  readonly init: unknown;
  /** The motor loop's rate, Hz. */
  readonly rateHz: number;
  /** The station's clock (wall time): state and event times are given on it. */
  readonly clock: Clock;
  readonly interlock?: CellInterlock;
  /** How long write/hold/estop wait for the rig thread to answer before returning what is known. Default 20 ms. */
  readonly answerTimeoutMs?: number;
  /** Cycles the recorder's ring holds (default CYCLE_RING_SECONDS of cycles at rateHz). */
  readonly cycleRingCapacity?: number;
  /** What `init` hands over to the rig thread (MessagePorts to its devices). */
  readonly transferList?: readonly TransferListItem[];
  /** After the rig thread has released its ports and ended: put away what it stood on (the emulated cell's thread). */
  readonly onClose?: () => Promise<void>;
}

const INTERLOCK_MIRROR_MS = 5;
/**
 * A rig thread whose motor loop has not run for this long hangs: its motors have damped by their
 * own 400 ms watchdog, and a thread that is only descheduled on a busy machine is back long before.
 */
export const RIG_THREAD_SILENT_MS = 1000;
/** Looks further apart than this mean this thread was away itself (blocked, starved, the process suspended): the watch starts over. */
const LOOK_GAP_S = 0.25;
/** How long close() waits for the rig thread to release its ports before ending it. */
const CLOSE_GRACE_MS = 3000;

export class RigThreadProxy implements Rig, RigCycleSource {
  readonly model: RigModel;
  /** The rig thread (exposed for diagnostics and for tests that kill it). */
  readonly worker: Worker;
  private readonly memory = new RigThreadMemory();
  private readonly cycles: RigCycleRing;
  private readonly rateHz: number;
  private readonly clock: Clock;
  private readonly answerTimeoutMs: number;
  private readonly stateCopy = new Float64Array(RigThreadMemory.stateDoubles());
  private readonly position = new Float64Array(STATE_DIM);
  private readonly velocity = new Float64Array(STATE_DIM);
  private readonly effort = new Float64Array(STATE_DIM);
  private readonly applied = {
    position: new Float64Array(STATE_DIM),
    velocity: new Float64Array(STATE_DIM),
    torqueNm: new Float64Array(STATE_DIM),
  };
  private readonly state: {
    timeS: number;
    mode: RigState['mode'];
    position: Float64Array;
    velocity: Float64Array;
    effort: Float64Array;
    faults: readonly RigFault[];
  } = {
    timeS: 0,
    mode: 'unconfigured',
    position: this.position,
    velocity: this.velocity,
    effort: this.effort,
    faults: [],
  };
  private faultsVersion = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly ready: Promise<void>;
  private stopped: RigFault | undefined;
  private workerError: string | undefined;
  private closed = false;
  /** The worker has exited, for whatever reason: nothing it is asked will be answered. */
  private exited = false;
  /** The rig thread said it is ready: from then on its motor loop runs, and its cycle count moves. */
  private running = false;
  private cyclesSeen = -1;
  /** When (epoch s) this thread last saw the cycle count move. */
  private cyclesMovedAtS = NaN;
  private lastLookS = NaN;
  private readonly interlock: CellInterlock | undefined;
  private interlockTimer: ReturnType<typeof setInterval> | undefined;
  private readonly onClose: (() => Promise<void>) | undefined;

  constructor(options: RigThreadOptions) {
    this.model = options.model;
    this.clock = options.clock;
    this.answerTimeoutMs = options.answerTimeoutMs ?? 20;
    this.interlock = options.interlock;
    if (this.interlock) {
      this.mirrorInterlock();
      this.interlockTimer = setInterval(() => this.mirrorInterlock(), INTERLOCK_MIRROR_MS);
    }
    this.rateHz = options.rateHz;
    this.cycles = new RigCycleRing(options.cycleRingCapacity ?? cycleRingCapacity(options.rateHz));
    this.onClose = options.onClose;
    this.worker = new Worker(options.entry, {
      workerData: {
        buffer: this.memory.buffer,
        init: options.init,
        rateHz: options.rateHz,
        hasInterlock: this.interlock !== undefined,
        cycles: this.cycles.buffer,
      },
      ...(options.transferList ? { transferList: [...options.transferList] } : {}),
    });
    let readyResolve!: () => void;
    this.ready = new Promise((resolve) => (readyResolve = resolve));
    this.worker.on('message', (m: RigThreadReply | { ready: true }) => {
      if ('ready' in m) {
        this.running = true;
        readyResolve();
        return;
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(errorFromMessage(m.error));
    });
    this.worker.on('error', (e) => {
      this.workerError = e.message;
    });
    this.worker.on('exit', (code) => {
      this.exited = true;
      if (this.interlockTimer) clearInterval(this.interlockTimer);
      readyResolve();
      if (this.closed || this.stopped) return;
      const why = this.workerError ? `: ${this.workerError.replace(/[.\s]+$/, '')}` : ` (exit code ${code})`;
      this.stop(
        `The rig thread stopped${why}, so the motors get no more commands and damp by their own watchdog; bring the rig up again to continue.`,
      );
    });
  }

  /** The rig thread is gone (or given up on): one sentence from now on, and every waiting call refused with it. */
  private stop(message: string): void {
    this.stopped = { kind: 'no-reply', message };
    for (const p of this.pending.values()) p.reject(new RigError(message, this.stopped));
    this.pending.clear();
  }

  async configure(): Promise<void> {
    await this.call('configure');
  }

  async activate(): Promise<void> {
    await this.call('activate');
  }

  async deactivate(): Promise<void> {
    // A dead rig thread commands nothing: its motors already damp by their own watchdog.
    if (this.stopped) return;
    await this.call('deactivate');
  }

  /** The rig thread's own loop statistics (rate, jitter, watchdog holds, command age). */
  async loopStats(): Promise<RigThreadStats> {
    return (await this.call('stats')) as RigThreadStats;
  }

  /** The rig's diagnostics, as the rig in the thread gives them. */
  async diagnostics(): Promise<unknown> {
    return this.call('diagnostics');
  }

  /** Frames the rig thread has sent per arm (from the latest published state). */
  framesOut(): [number, number] {
    this.refresh();
    return [this.stateCopy[ST.FRAMES_OUT_LEFT], this.stateCopy[ST.FRAMES_OUT_RIGHT]];
  }

  read(): RigState {
    this.refresh();
    return this.state;
  }

  write(cmd: RigCommand): RigCommand {
    if (this.stopped) return this.applied;
    this.mirrorInterlock();
    this.memory.writeCommand(cmd);
    this.answered(this.memory.request());
    return this.applied;
  }

  /** Empty: the rig thread ticks itself every motor cycle. */
  tick(): void {}

  hold(): void {
    if (this.stopped) return;
    this.memory.requestHold();
    this.answered(this.memory.request());
  }

  estop(reason: string): void {
    const n = this.memory.requestEstop(reason);
    if (this.stopped) return;
    this.answered(n);
  }

  /**
   * The shared memory the rig thread reads every cycle: hand it to another thread (a pedal reader,
   * the PLC client) and `new RigThreadMemory(buffer).requestEstop(reason)` there stops the arms
   * without this thread's event loop.
   */
  get sharedMemory(): SharedArrayBuffer {
    return this.memory.buffer;
  }

  /** Every motor cycle the rig thread ran, for the recorder; stamps are epoch seconds (add clockOffsetS for this station's clock). */
  rigCycles(): { readonly ring: RigCycleRing; readonly rateHz: number; clockOffsetS(): number } {
    return { ring: this.cycles, rateHz: this.rateHz, clockOffsetS: () => this.clock.nowS() - epochNowS() };
  }

  takeSafetyEvents(): SafetyEvent[] {
    const events = this.memory.drainEvents();
    if (events.length === 0) return events;
    const offsetS = this.clock.nowS() - epochNowS();
    return events.map((e) => ({ ...e, timeS: e.timeS + offsetS }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Closing stops the motor loop before the ports are released: that stillness is no hang.
    this.running = false;
    let grace: ReturnType<typeof setTimeout> | undefined;
    try {
      // A rig thread that cannot answer (hung) is ended all the same: putting a rig away never hangs.
      if (!this.stopped && !this.exited)
        await Promise.race([
          this.call('close'),
          new Promise<void>((resolve) => (grace = setTimeout(resolve, CLOSE_GRACE_MS))),
        ]);
    } finally {
      clearTimeout(grace);
      this.closed = true;
      if (this.interlockTimer) clearInterval(this.interlockTimer);
      await this.worker.terminate();
      await this.onClose?.();
    }
  }

  private async call(op: RigThreadRequest['op']): Promise<unknown> {
    await this.ready;
    if (this.stopped) throw new RigError(this.stopped.message, this.stopped);
    if (this.closed || this.exited) throw new Error('This rig is closed.');
    const id = this.nextId++;
    const answer = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.worker.postMessage({ id, op } satisfies RigThreadRequest);
    // Wake the rig thread from its sleep so the message is read now, not at the next cycle.
    this.memory.request();
    return answer;
  }

  /** Waits (bounded) for the rig thread to serve request n, then copies what it published. */
  private answered(n: number): void {
    this.memory.awaitServed(n, this.answerTimeoutMs);
    this.refresh();
  }

  private refresh(): void {
    if (this.stopped) {
      this.state.mode = 'fault';
      this.state.faults = [this.stopped];
      this.state.timeS = this.clock.nowS();
      return;
    }
    const { ok, faultsVersion } = this.memory.readState(this.stateCopy);
    if (!ok) return;
    const s = this.stateCopy;
    if (this.running && !this.closed && this.hangs(s[ST.CYCLES])) {
      this.refresh();
      return;
    }
    for (let k = 0; k < STATE_DIM; k++) {
      this.position[k] = s[ST.POSITION + k];
      this.velocity[k] = s[ST.VELOCITY + k];
      this.effort[k] = s[ST.EFFORT + k];
      this.applied.position[k] = s[ST.APPLIED_POSITION + k];
      this.applied.velocity[k] = s[ST.APPLIED_VELOCITY + k];
      this.applied.torqueNm[k] = s[ST.APPLIED_TORQUE + k];
    }
    // The rig thread stamps its state on the epoch; give it on this station's clock.
    this.state.timeS = s[ST.TIME] === 0 ? this.clock.nowS() : s[ST.TIME] + (this.clock.nowS() - epochNowS());
    this.state.mode = RIG_MODES[s[ST.MODE]] ?? 'fault';
    if (faultsVersion !== this.faultsVersion) {
      this.faultsVersion = faultsVersion;
      this.state.faults = this.memory.readFaults();
    }
  }

  /**
   * Whether the rig thread's motor loop has stood still for RIG_THREAD_SILENT_MS while this thread
   * kept looking (looks under LOOK_GAP_S apart): a main thread that was blocked sees the count moved
   * on, and one that was away with the whole process (suspended, starved) gives the rig thread its
   * turn before judging. A hung thread is ended, so it cannot wake later and command motors the
   * station has given up on.
   */
  private hangs(cycles: number): boolean {
    const nowS = epochNowS();
    const away = !(nowS - this.lastLookS < LOOK_GAP_S);
    this.lastLookS = nowS;
    if (cycles !== this.cyclesSeen || away) {
      this.cyclesSeen = cycles;
      this.cyclesMovedAtS = nowS;
      return false;
    }
    const stillMs = (nowS - this.cyclesMovedAtS) * 1000;
    if (!(stillMs > RIG_THREAD_SILENT_MS)) return false;
    this.stop(
      `The rig thread has not run its motor loop for ${Math.round(stillMs)} ms (it hangs), so the motors get no more commands and damp by their own watchdog; bring the rig up again to continue.`,
    );
    void this.worker.terminate();
    return true;
  }

  private mirrorInterlock(): void {
    const il = this.interlock;
    if (!il) return;
    const r = il.current();
    this.memory.writeInterlock(r.open, r.reason, epochNowS() * 1000);
  }
}
