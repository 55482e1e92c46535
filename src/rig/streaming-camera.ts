/**
 * The bookkeeping every Camera shares, whatever makes its frames (an ffmpeg subprocess, a
 * renderer): status, listeners, the newest frame, counters, the open handshake (resolve on the
 * first frame, reject with the source's sentence), and the stall watchdog that marks a camera
 * lost when it stops sending. A subclass only starts and stops its source and hands in frames.
 * One implementation, so "late", "dropped" and "lost" mean the same thing for every camera.
 */
import { performance } from 'node:perf_hooks';
import type { Camera, CameraCounters, CameraFrame, CameraInfo, CameraStatus, FrameFormat } from './camera.js';

export interface StreamingCameraOptions {
  /** Station clock (s), the rig's time base; default performance.now() in seconds. */
  readonly nowS?: () => number;
  /** No frame for this long while streaming → lost. Default the larger of 1 s and 5 periods. */
  readonly stallTimeoutS?: number;
  /** No first frame this long after open() → open() rejects. Default 15 s (a browser or a USB camera can take seconds to start). */
  readonly openTimeoutS?: number;
}

/** open() could not start the camera; the message says what happened and what to do. */
export class CameraOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CameraOpenError';
  }
}

const LATE_PERIODS = 1.5;

export abstract class StreamingCamera implements Camera {
  private statusNow: CameraStatus = 'closed';
  private lostWhy: string | undefined;
  private newest: CameraFrame | undefined;
  private readonly frameListeners = new Set<(frame: CameraFrame) => void>();
  private readonly lostListeners = new Set<(reason: string, atS: number) => void>();
  private received = 0;
  private dropped = 0;
  private late = 0;
  private longestGapS = 0;
  private lastArrivalS = NaN;
  private openedAtS = NaN;
  private pendingOpen: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private openTimer: ReturnType<typeof setTimeout> | undefined;
  /** The source's last stop (after close, a failed open or a loss); a new open waits for it. */
  private stopping: Promise<void> | undefined;
  protected readonly nowS: () => number;
  protected readonly stallTimeoutS: number;
  private readonly openTimeoutS: number;
  private readonly periodS: number;

  constructor(
    readonly info: CameraInfo,
    options: StreamingCameraOptions = {},
  ) {
    this.nowS = options.nowS ?? (() => performance.now() / 1000);
    this.periodS = 1 / info.fps;
    this.stallTimeoutS = options.stallTimeoutS ?? Math.max(1, 5 * this.periodS);
    this.openTimeoutS = options.openTimeoutS ?? 15;
  }

  /** Starts the source; frames come back through `deliver`, failures through `failOpen`/`lose`. */
  protected abstract startSource(): void;
  /**
   * Stops the source and releases everything it holds; called once per open, after close, a
   * failed open or a loss — also when startSource threw or never ran, so it must tolerate that.
   */
  protected abstract stopSource(): Promise<void>;

  get status(): CameraStatus {
    return this.statusNow;
  }

  get lostReason(): string | undefined {
    return this.statusNow === 'lost' ? this.lostWhy : undefined;
  }

  /** Where the camera's frames come from, for sentences: "cam_high (v4l2 /dev/video0)". */
  protected get label(): string {
    return `${this.info.name} (${this.info.source})`;
  }

  open(): Promise<void> {
    if (this.statusNow === 'streaming') return Promise.resolve();
    if (this.statusNow === 'opening' && this.pendingOpen) return this.waitOpen();
    // From closed or lost: a fresh stream, counted from zero.
    this.received = this.dropped = this.late = this.longestGapS = 0;
    this.lastArrivalS = NaN;
    this.newest = undefined;
    this.lostWhy = undefined;
    this.statusNow = 'opening';
    this.openedAtS = this.nowS();
    const opened = new Promise<void>((resolve, reject) => {
      this.pendingOpen = { resolve, reject };
    });
    this.openTimer = setTimeout(() => {
      this.failOpen(
        new CameraOpenError(
          `Camera ${this.label} sent no frame within ${this.openTimeoutS} s of opening; check that it is connected and not in use by another program.`,
        ),
      );
    }, this.openTimeoutS * 1000);
    this.openTimer.unref();
    // The previous stream's source (a dying process) is gone before a new one starts.
    void (this.stopping ?? Promise.resolve()).then(() => {
      if (this.statusNow !== 'opening' || !this.pendingOpen) return; // closed meanwhile
      try {
        this.startSource();
      } catch (e) {
        this.failOpen(e instanceof Error ? e : new Error(String(e)));
      }
    });
    return opened;
  }

  private waitOpen(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const p = this.pendingOpen!;
      const r0 = p.resolve;
      const j0 = p.reject;
      p.resolve = () => {
        r0();
        resolve();
      };
      p.reject = (e) => {
        j0(e);
        reject(e);
      };
    });
  }

  latest(): CameraFrame | undefined {
    return this.newest;
  }

  onFrame(listener: (frame: CameraFrame) => void): () => void {
    this.frameListeners.add(listener);
    return () => this.frameListeners.delete(listener);
  }

  onLost(listener: (reason: string, atS: number) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  counters(): CameraCounters {
    return { received: this.received, dropped: this.dropped, late: this.late, longestGapS: this.longestGapS };
  }

  close(): Promise<void> {
    if (this.statusNow === 'opening')
      this.failOpen(new CameraOpenError(`Camera ${this.label} was closed before its first frame.`));
    if (this.statusNow === 'streaming') {
      this.clearTimers();
      this.stopping = this.stopSource();
    }
    // A lost camera's source was stopped when it was lost: closing waits for that stop.
    this.statusNow = 'closed';
    return this.stopping ?? Promise.resolve();
  }

  /**
   * Hands one frame to the listeners, stamped now (or at `arrivalS`). Returns false when the camera
   * is not streaming or opening (a frame that raced close or loss is not delivered).
   */
  protected deliver(
    format: FrameFormat,
    width: number,
    height: number,
    data: Uint8Array,
    arrivalS = this.nowS(),
    extra: Partial<Pick<CameraFrame, 'capturedS'>> = {},
  ): boolean {
    if (this.statusNow !== 'opening' && this.statusNow !== 'streaming') return false;
    if (this.statusNow === 'opening') {
      if (width !== this.info.width || height !== this.info.height) {
        this.failOpen(
          new CameraOpenError(
            `Camera ${this.label} sends ${width}×${height} frames, not the configured ${this.info.width}×${this.info.height}: set width and height to a size it supports.`,
          ),
        );
        return false;
      }
      this.statusNow = 'streaming';
      if (this.openTimer) clearTimeout(this.openTimer);
      this.openTimer = undefined;
      this.watchdog = setInterval(
        () => this.checkStall(),
        Math.max(20, Math.min(250, (this.stallTimeoutS * 1000) / 4)),
      );
      this.watchdog.unref();
    }
    if (this.lastArrivalS === this.lastArrivalS) {
      const gap = arrivalS - this.lastArrivalS;
      if (gap > this.longestGapS) this.longestGapS = gap;
      if (gap > LATE_PERIODS * this.periodS) this.late += 1;
    }
    this.lastArrivalS = arrivalS;
    const frame: CameraFrame = {
      camera: this.info.name,
      seq: this.received,
      arrivalS,
      format,
      width,
      height,
      data,
      ...extra,
    };
    this.received += 1;
    this.newest = frame;
    if (this.pendingOpen) {
      const p = this.pendingOpen;
      this.pendingOpen = undefined;
      p.resolve();
    }
    for (const l of this.frameListeners) {
      try {
        l(frame);
      } catch (e) {
        // One listener's bug must not stop the stream or the other listeners (the recorder).
        process.emitWarning(
          `A frame listener of camera ${this.info.name} threw: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
    }
    return true;
  }

  /** Frames the source produced that will never be delivered (device drops, corrupt frames). */
  protected addDropped(n: number): void {
    if (n > 0) this.dropped += n;
  }

  /** open() fails with `error` (if still opening); the source is stopped. */
  protected failOpen(error: Error): void {
    if (!this.pendingOpen) return;
    const p = this.pendingOpen;
    this.pendingOpen = undefined;
    this.clearTimers();
    if (this.statusNow === 'opening') {
      this.statusNow = 'closed';
      this.stopping = this.stopSource().catch(() => undefined);
    }
    // Rejected once the source is gone: a failed open leaves nothing running behind it.
    void (this.stopping ?? Promise.resolve()).then(() => p.reject(error));
  }

  /**
   * The stream stopped while it was running: status lost, onLost once, the source stopped. While
   * still opening this is an open failure instead (`reason` becomes open()'s error).
   */
  protected lose(reason: string): void {
    if (this.statusNow === 'opening') {
      this.failOpen(new CameraOpenError(reason));
      return;
    }
    if (this.statusNow !== 'streaming') return;
    this.statusNow = 'lost';
    this.lostWhy = reason;
    this.clearTimers();
    const atS = this.nowS();
    this.stopping = this.stopSource().catch(() => undefined);
    for (const l of this.lostListeners) {
      try {
        l(reason, atS);
      } catch (e) {
        process.emitWarning(
          `A lost listener of camera ${this.info.name} threw: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
    }
  }

  /** Seconds since the last frame (or since open, before the first). */
  protected silentForS(): number {
    const since = this.lastArrivalS === this.lastArrivalS ? this.lastArrivalS : this.openedAtS;
    return this.nowS() - since;
  }

  private checkStall(): void {
    if (this.statusNow !== 'streaming') return;
    const silent = this.silentForS();
    if (silent > this.stallTimeoutS)
      this.lose(
        `camera ${this.label} stopped sending frames ${silent.toFixed(1)} s ago; the episode goes on without it`,
      );
  }

  private clearTimers(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.openTimer) clearTimeout(this.openTimer);
    this.watchdog = undefined;
    this.openTimer = undefined;
  }
}
