/**
 * Clocks for the control loop. The loop waits on a Clock; only these classes look at wall time.
 *
 * - RealtimeClock: wall time for the real rig.
 * - ManualClock:   time moves only when a test calls advance()/set(); waiters resolve in order.
 * - SteppedClock:  waitUntil() jumps straight to the deadline (optionally running a callback that
 *                  advances a simulation to it first) — deterministic, as fast as the CPU allows.
 */
import { performance } from 'node:perf_hooks';
import type { Clock } from './contract.js';

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
