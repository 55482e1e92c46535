/**
 * Whether Redis can be reached, as one fact shared by every connection a worker or coordinator
 * holds. ioredis reports a lost server once per connection and once per reconnect attempt; an
 * operator needs one line when Redis goes, one when it is back (with how long it was away), and,
 * with a give-up time, one decision to stop.
 */
import type { Redis } from 'ioredis';
import { REDIS_RETRY_MS, unreachableReason, type QueueAddress } from './connection.js';

export interface RedisLinkOptions {
  readonly address: QueueAddress;
  readonly log: (line: string) => void;
  /** Called once when Redis has been away this long, ms (default: never). */
  readonly giveUpAfterMs?: number;
  readonly onGiveUp?: () => void;
  /** Called each time Redis is back after being away (a restarted Redis may have lost what it held). */
  readonly onBack?: () => void;
}

export class RedisLink {
  private readonly clients: Redis[] = [];
  private lostAtMs: number | undefined;
  private said = false;
  private reason: string | undefined;
  private sayTimer: NodeJS.Timeout | undefined;
  private giveUpTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: RedisLinkOptions) {}

  /** True while every watched connection is up (and before the first loss). */
  get reachable(): boolean {
    return this.lostAtMs === undefined;
  }

  /** Since when Redis has been away (Date.now() ms), if it is. */
  get awaySinceMs(): number | undefined {
    return this.lostAtMs;
  }

  /** Follows one connection: its close starts an absence, and all of them ready again ends it. */
  watch(client: Redis): void {
    this.clients.push(client);
    client.on('error', (e: unknown) => this.failed(e));
    client.on('close', () => this.lost());
    client.on('ready', () => {
      if (this.clients.every((c) => c.status === 'ready')) this.back();
    });
  }

  /** A connection attempt or a command failed for want of Redis: starts an absence, or names its reason. */
  failed(e: unknown): void {
    const reason = unreachableReason(e);
    if (reason === undefined) return;
    this.reason ??= reason;
    this.lost();
    this.say();
  }

  /** Redis went away (said once its reason is known, or after one retry interval). */
  lost(): void {
    if (this.closed || this.lostAtMs !== undefined) return;
    this.lostAtMs = Date.now();
    this.sayTimer = setTimeout(() => this.say(), REDIS_RETRY_MS + 500);
    if (this.opts.giveUpAfterMs !== undefined) {
      this.giveUpTimer = setTimeout(() => {
        if (!this.closed && this.lostAtMs !== undefined) this.opts.onGiveUp?.();
      }, this.opts.giveUpAfterMs);
    }
  }

  /** Redis answers again. */
  back(): void {
    if (this.closed || this.lostAtMs === undefined) return;
    const awayS = (Date.now() - this.lostAtMs) / 1000;
    if (this.said) this.opts.log(`Redis at ${this.opts.address.shown} is back after ${awayS.toFixed(1)} s away.`);
    this.clearTimers();
    this.lostAtMs = undefined;
    this.said = false;
    this.reason = undefined;
    this.opts.onBack?.();
  }

  private say(): void {
    if (this.closed || this.said || this.lostAtMs === undefined) return;
    this.said = true;
    clearTimeout(this.sayTimer);
    this.opts.log(
      `Redis at ${this.opts.address.shown} is unreachable (${this.reason ?? 'connection closed'}); retrying every ${REDIS_RETRY_MS / 1000} s.`,
    );
  }

  private clearTimers(): void {
    clearTimeout(this.sayTimer);
    clearTimeout(this.giveUpTimer);
  }

  /** Stops listening and saying: the process is closing its connections on purpose. */
  close(): void {
    this.closed = true;
    this.clearTimers();
  }
}
