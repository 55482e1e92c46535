/**
 * The fixed-rate control loop. It owns timing: every cycle it waits on the Clock for the next
 * deadline, reads the rig, asks the command source for a command, writes it (through the rig's
 * safety supervisor) and ticks the rig so the supervisor's watchdog and the motor output run
 * whether or not a command arrived. Drivers never own a timer.
 *
 * It measures its own wake-up jitter (actual start − deadline) into a preallocated ring and counts
 * late cycles (woke more than half a period late) and overruns (the cycle's work ran past the next
 * deadline; missed deadlines are skipped, never burst through to "catch up").
 *
 * Hot path: no allocation of ours per cycle — buffers are preallocated and the command source is
 * one function given once. The clock's wait promise is the only per-cycle object.
 */
import type { Clock, Rig, RigCommand, RigState } from './contract.js';

export const DEFAULT_CONTROL_RATE_HZ = 250;
export const MAX_CONTROL_RATE_HZ = 1000;
/** Jitter samples kept for the percentiles (the most recent ones). */
const JITTER_RING = 1 << 16;

/** Called once per cycle with the fresh state; returns the command for this cycle, or undefined for none. */
export type CommandSource = (state: RigState, cycle: number, nowS: number) => RigCommand | undefined;

export interface ControlLoopOptions {
  readonly rig: Rig;
  readonly clock: Clock;
  /** Default 250 Hz; 1..1000. */
  readonly rateHz?: number;
  readonly source?: CommandSource;
}

export interface LoopStats {
  readonly rateHz: number;
  readonly cycles: number;
  /** Woke more than half a period after the deadline. */
  readonly lateCycles: number;
  /** Work ran past the next deadline; that deadline was skipped. */
  readonly overruns: number;
  readonly jitterP50Ms: number;
  readonly jitterP99Ms: number;
  readonly jitterMaxMs: number;
  /** Cycles per second of clock time actually achieved. */
  readonly achievedHz: number;
}

export interface RunOptions {
  /** Stop after this many cycles. */
  readonly cycles?: number;
  /** Stop once the clock passes this time (seconds). */
  readonly untilS?: number;
  readonly signal?: AbortSignal;
}

export class ControlLoop {
  readonly rateHz: number;
  readonly periodS: number;
  private readonly rig: Rig;
  private readonly clock: Clock;
  private readonly source: CommandSource | undefined;
  private readonly jitterS = new Float64Array(JITTER_RING);
  private cycles = 0;
  private late = 0;
  private overruns = 0;
  private maxJitterS = 0;
  private startS = 0;
  private lastS = 0;
  private running = false;
  private stopRequested = false;

  constructor(options: ControlLoopOptions) {
    const rate = options.rateHz ?? DEFAULT_CONTROL_RATE_HZ;
    if (!Number.isFinite(rate) || rate < 1 || rate > MAX_CONTROL_RATE_HZ) {
      throw new RangeError(`The control rate must be from 1 to ${MAX_CONTROL_RATE_HZ} Hz, not ${rate}.`);
    }
    this.rateHz = rate;
    this.periodS = 1 / rate;
    this.rig = options.rig;
    this.clock = options.clock;
    this.source = options.source;
  }

  /**
   * Runs cycles until stop(), the signal, `cycles` or `untilS`. If the rig or the command source
   * throws, the rig is put in a safe hold (and ticked once so the hold is sent) before the error
   * propagates.
   */
  async run(options: RunOptions = {}): Promise<LoopStats> {
    if (this.running) throw new Error('This control loop is already running.');
    this.running = true;
    this.stopRequested = false;
    const { signal } = options;
    const maxCycles = options.cycles ?? Infinity;
    const untilS = options.untilS ?? Infinity;
    const periodS = this.periodS;
    const rig = this.rig;
    const clock = this.clock;
    const source = this.source;
    let done = 0;
    let deadline = clock.nowS();
    if (this.cycles === 0) this.startS = deadline;
    try {
      while (!this.stopRequested && done < maxCycles && !(signal?.aborted ?? false) && deadline <= untilS) {
        await clock.waitUntil(deadline);
        const wokeS = clock.nowS();
        const jitter = wokeS - deadline;
        this.jitterS[this.cycles & (JITTER_RING - 1)] = jitter;
        if (jitter > this.maxJitterS) this.maxJitterS = jitter;
        if (jitter > periodS / 2) this.late++;

        const state = rig.read();
        const cmd = source === undefined ? undefined : source(state, this.cycles, wokeS);
        if (cmd !== undefined) rig.write(cmd);
        rig.tick();

        this.cycles++;
        done++;
        this.lastS = wokeS;
        deadline += periodS;
        const endS = clock.nowS();
        if (endS > deadline) {
          this.overruns++;
          // Skip the deadlines we missed; stay on the original grid.
          deadline += Math.ceil((endS - deadline) / periodS) * periodS;
        }
      }
    } catch (err) {
      try {
        rig.hold();
        rig.tick();
      } catch {
        // The original error is the one the operator needs.
      }
      throw err;
    } finally {
      this.running = false;
    }
    return this.stats();
  }

  /** Forget the statistics so far (a rig thread counts from activation, not from start-up). */
  resetStats(): void {
    this.cycles = 0;
    this.late = 0;
    this.overruns = 0;
    this.maxJitterS = 0;
    this.startS = this.lastS = this.clock.nowS();
  }

  /** Ask a running loop to stop after the current cycle. */
  stop(): void {
    this.stopRequested = true;
  }

  /** Jitter percentiles over the most recent cycles (sorting happens here, off the hot path). */
  stats(): LoopStats {
    const n = Math.min(this.cycles, JITTER_RING);
    const sorted = this.jitterS.slice(0, n).sort();
    const pct = (p: number): number => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.floor(p * (n - 1) + 0.5))] * 1000);
    const spanS = this.lastS - this.startS;
    return {
      rateHz: this.rateHz,
      cycles: this.cycles,
      lateCycles: this.late,
      overruns: this.overruns,
      jitterP50Ms: pct(0.5),
      jitterP99Ms: pct(0.99),
      jitterMaxMs: this.maxJitterS * 1000,
      achievedHz: this.cycles > 1 && spanS > 0 ? (this.cycles - 1) / spanS : 0,
    };
  }
}
