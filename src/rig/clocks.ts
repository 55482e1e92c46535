/**
 * Clocks for the control loop. The loop waits on a Clock; only these classes look at wall time.
 *
 * - RealtimeClock: wall time for the real rig.
 * - ManualClock:   time moves only when a test calls advance()/set(); waiters resolve in order.
 * - SteppedClock:  waitUntil() jumps straight to the deadline (optionally running a callback that
 *                  advances a simulation to it first) — deterministic, as fast as the CPU allows.
 */
import { performance } from 'node:perf_hooks';
import type { Clock, ClockTimer } from './contract.js';

/**
 * Wall time from performance.now() (monotonic; Date.now() can jump with NTP).
 *
 * Why setTimeout + a setImmediate tail (measured here, bench/rig-clock.bench.ts and a quiet-machine
 * probe; numbers in docs/rig-model.md): setTimeout alone has 1 ms granularity, runs only once per
 * event-loop turn and can even fire *early* (Node rounds the delay and libuv caches the loop time:
 * we saw wake errors from −0.2 ms to +0.7 ms at p50, p99 5 ms on a busy 2-core box). One
 * setImmediate turn costs p50 5 µs. So we sleep on setTimeout until `coarseMarginMs` before the
 * deadline and finish with setImmediate turns, re-checking performance.now() each turn: never
 * early, p50 error ≈ 0.01–0.06 ms, and serial I/O callbacks still run between turns (a pure
 * busy-wait would starve the CAN replies the loop waits for). The tail burns CPU for at most
 * coarseMarginMs per cycle, hence 1 ms by default (25% of a 250 Hz period). When the machine's
 * cores are oversubscribed, p99 is set by the OS scheduler whatever we do (~15 ms at load 18).
 */
export class RealtimeClock implements Clock {
  readonly passesWhileAwaiting = true;
  private readonly epochMs = performance.now();
  private targetMs = 0;
  private resolve: (() => void) | undefined;
  private readonly onTimer = (): void => this.spin();
  private readonly onImmediate = (): void => this.spin();
  private readonly executor = (resolve: () => void): void => {
    this.resolve = resolve;
    const remainingMs = this.targetMs - performance.now();
    if (remainingMs > this.coarseMarginMs) setTimeout(this.onTimer, Math.floor(remainingMs - this.coarseMarginMs));
    else this.spin();
  };

  /** @param coarseMarginMs how long before a deadline setTimeout hands over to the setImmediate tail. */
  constructor(private readonly coarseMarginMs = 1) {}

  nowS(): number {
    return (performance.now() - this.epochMs) / 1000;
  }

  waitUntil(tS: number): Promise<void> {
    this.targetMs = this.epochMs + tS * 1000;
    if (performance.now() >= this.targetMs) return Promise.resolve();
    return new Promise<void>(this.executor);
  }

  private spin(): void {
    if (performance.now() >= this.targetMs) {
      const r = this.resolve;
      this.resolve = undefined;
      r?.();
    } else {
      setImmediate(this.onImmediate);
    }
  }
}

/** Test clock: time moves only when the test says so. */
export class ManualClock implements Clock {
  private t: number;
  private waiters: { tS: number; resolve: () => void }[] = [];

  constructor(startS = 0) {
    this.t = startS;
  }

  nowS(): number {
    return this.t;
  }

  waitUntil(tS: number): Promise<void> {
    if (tS <= this.t) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push({ tS, resolve });
      this.waiters.sort((a, b) => a.tS - b.tS);
    });
  }

  /** Move time forward by `seconds`, waking every waiter whose deadline has passed. */
  advance(seconds: number): void {
    this.set(this.t + seconds);
  }

  set(tS: number): void {
    if (tS < this.t) throw new Error(`ManualClock cannot go back in time (from ${this.t} to ${tS}).`);
    this.t = tS;
    while (this.waiters.length > 0 && this.waiters[0].tS <= this.t) this.waiters.shift()?.resolve();
  }

  /** Number of pending waiters (a loop blocked on the clock has one). */
  get pending(): number {
    return this.waiters.length;
  }
}

/**
 * Stepped time: waitUntil(t) runs `advanceTo(t)` (e.g. physics sub-steps) and then *is* at t.
 * Deterministic and never sleeps, so a simulated episode runs as fast as the CPU allows.
 */
export class SteppedClock implements Clock {
  private t: number;

  constructor(
    private readonly advanceTo: (tS: number) => void = () => {},
    startS = 0,
  ) {
    this.t = startS;
  }

  nowS(): number {
    return this.t;
  }

  waitUntil(tS: number): Promise<void> {
    if (tS > this.t) {
      this.advanceTo(tS);
      this.t = tS;
    }
    return RESOLVED;
  }
}
const RESOLVED = Promise.resolve();

/** The wall clock's timer: setTimeout. */
export const wallTimer: ClockTimer = (delayMs, fn) => {
  const t = setTimeout(fn, delayMs);
  return () => clearTimeout(t);
};

/** Resolves once `delayMs` has passed on `timer`'s time. */
export function sleepOn(timer: ClockTimer, delayMs: number): Promise<void> {
  return new Promise<void>((resolve) => timer(delayMs, resolve));
}

/** The timer that runs on `clock`'s time (the wall clock's setTimeout unless the clock has its own). */
export function timerOf(clock: Clock | undefined): ClockTimer {
  return clock?.timer ?? wallTimer;
}

/** How far a paced VirtualClock may lag the wall clock before it re-anchors (slows down) instead of catching up. */
const PACED_SLACK_MS = 20;

/** Event-loop turns a VirtualClock lets pass before each step, so what the last event started settles first. */
const SETTLE_TURNS = 2;

interface VirtualEvent {
  readonly tS: number;
  readonly seq: number;
  readonly fn: () => void;
  /** Moves time to itself (a waiter, a timeout); a passive event only fires once time gets there. */
  readonly drives: boolean;
  done: boolean;
}

/**
 * Virtual time for a cell that is all in this process (the emulated cell: its world, its bus
 * emulators, the adapters' latency, the driver's deadlines): time jumps from one event to the
 * next — waitUntil deadlines and timer expiries — and stands still otherwise, so a rollout runs as
 * fast as the CPU allows and can never fall behind, however busy the machine.
 *
 * Before each step it lets SETTLE_TURNS event-loop turns pass, so whatever the last event set off
 * (bytes through the in-process serial binding, a reply's promise chain) has run before time moves
 * on; events fire one at a time in (time, order scheduled). Only waiters and `timer` timeouts move
 * time; `passiveTimer` (an adapter's reply latency) fires when time reaches it but never pulls time
 * forward by itself, so time stands still while the loop awaits a policy, as on a SteppedClock.
 * Unpaced, nothing here reads the wall clock; paced (see the constructor), it only waits for it.
 */
export class VirtualClock implements Clock {
  readonly passesWhileAwaiting = false;
  private t: number;
  private seq = 0;
  /** Pending events, sorted by (tS, seq). */
  private events: VirtualEvent[] = [];
  private driving = 0;
  private pumping = false;
  private turns = 0;
  private readonly onTurn = (): void => this.turn();
  /** Paced: the wall time (performance.now(), ms) at which virtual time `anchorS` was reached. */
  private anchorMs = 0;
  private anchorS = 0;
  private sleeping: ReturnType<typeof setTimeout> | undefined;
  private readonly paced: boolean;
  /** Pieces of work time stands still for (standStill). */
  private stillFor = 0;

  readonly timer: ClockTimer = (delayMs, fn) => this.schedule(this.t + Math.max(0, delayMs) / 1000, fn, true);
  /** A timer that fires when time reaches it but never moves time by itself. */
  readonly passiveTimer: ClockTimer = (delayMs, fn) => this.schedule(this.t + Math.max(0, delayMs) / 1000, fn, false);

  /**
   * `paced`: time never runs ahead of the wall clock (an event at virtual time t fires no earlier
   * than t after the clock started, as on a real rig), but when the machine is busy it falls
   * behind instead of hurrying to catch up — a starved process sees time slow down, never a
   * deadline missed. For a station an operator watches on the emulated cell; unpaced for tests and
   * sweeps, which want the answer as fast as the CPU gives it.
   */
  constructor(startS = 0, opts: { readonly paced?: boolean } = {}) {
    this.t = startS;
    this.paced = opts.paced === true;
    this.anchorS = startS;
    this.anchorMs = performance.now();
  }

  nowS(): number {
    return this.t;
  }

  waitUntil(tS: number): Promise<void> {
    if (tS <= this.t) return RESOLVED;
    return new Promise<void>((resolve) => {
      this.schedule(tS, resolve, true);
    });
  }

  standStill<T>(work: Promise<T>): Promise<T> {
    this.stillFor++;
    return work.finally(() => {
      if (--this.stillFor === 0 && this.driving > 0) this.kick();
    });
  }

  /** Pending events that move time (waiters and timeouts). */
  get pending(): number {
    return this.driving;
  }

  private schedule(tS: number, fn: () => void, drives: boolean): () => void {
    const ev: VirtualEvent = { tS, seq: this.seq++, fn, drives, done: false };
    let i = this.events.length;
    while (i > 0 && this.events[i - 1].tS > tS) i--;
    this.events.splice(i, 0, ev);
    if (drives) {
      this.driving++;
      // Paced and asleep until a later event: this one may be due sooner.
      if (this.sleeping !== undefined) this.wake();
      this.kick();
    }
    return () => this.cancel(ev);
  }

  private cancel(ev: VirtualEvent): void {
    if (ev.done) return;
    ev.done = true;
    if (ev.drives) this.driving--;
    const i = this.events.indexOf(ev);
    if (i >= 0) this.events.splice(i, 1);
  }

  private kick(): void {
    if (this.pumping) return;
    this.pumping = true;
    this.turns = 0;
    setImmediate(this.onTurn);
  }

  private turn(): void {
    if (++this.turns < SETTLE_TURNS) {
      setImmediate(this.onTurn);
      return;
    }
    this.pumping = false;
    if (this.driving === 0 || this.stillFor > 0) return;
    if (this.paced && this.events[0].tS > this.t && this.waitForWall(this.events[0].tS)) return;
    const ev = this.events.shift()!;
    ev.done = true;
    if (ev.drives) this.driving--;
    if (ev.tS > this.t) this.t = ev.tS;
    if (this.driving > 0) this.kick();
    ev.fn();
  }

  /** Paced: true (and a wake-up set) when virtual time `tS` is still ahead of the wall clock. */
  private waitForWall(tS: number): boolean {
    const nowMs = performance.now();
    const dueMs = this.anchorMs + (tS - this.anchorS) * 1000;
    if (dueMs - nowMs >= 0.25) {
      this.pumping = true;
      this.sleeping = setTimeout(() => this.wake(), dueMs - nowMs);
      return true;
    }
    // Behind the wall clock by more than a blink (a busy machine, a long synchronous task, an
    // idle clock): re-anchor, so time slows down rather than rushing through what it owes.
    if (nowMs - dueMs > PACED_SLACK_MS) {
      this.anchorMs = nowMs;
      this.anchorS = tS;
    }
    return false;
  }

  private wake(): void {
    if (this.sleeping !== undefined) clearTimeout(this.sleeping);
    this.sleeping = undefined;
    this.pumping = false;
    if (this.driving > 0) this.kick();
  }
}
