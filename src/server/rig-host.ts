/**
 * The station's one rig, between and during rollouts: who has it (idle, the operator's hold, a
 * rollout), the operator's hold / damp / e-stop, and its status in words for the API.
 *
 * A hold runs under the real control loop (the loop owns timing; the rig only reads and writes).
 * A rollout takes the rig whole: the host stops its own loop first, never ticks or drains the
 * rig's safety events while the rollout's loop does, and only reads the rig's state for the
 * stream. A rig that builds its table from the layout (the emulated cell) is created afresh for
 * each rollout through the same factory as at start-up — hardware ignores the table.
 */
import { RigError, type Clock, type Rig, type RigCommand, type RigModel, type SafetyEvent } from '../rig/contract.js';
import { RealtimeClock } from '../rig/clocks.js';
import { ControlLoop, DEFAULT_CONTROL_RATE_HZ } from '../rig/control-loop.js';
import type { RigContext } from '../rig/registry.js';
import type { PrivilegedObjectState } from '../policy/contract.js';
import type { LiveRigReading } from './live-messages.js';
import type { CellStatus, MotorStatus, RigLoopView, RigStatus, RigUse, SafetyEventView } from './api-types.js';

/** What the composition root knows about the configured rig type. */
/** A rig with what its type brings besides it (the composition root's services; opaque here). */
export interface HostedRig<S> {
  readonly rig: Rig;
  readonly services: S;
}

export interface RigParts<S = undefined> {
  /** The config's type, e.g. "yam-cell". */
  readonly type: string;
  /** A fresh clock for each rig this host creates: the rig config's (the wall clock, or paced virtual time on the emulated cell). Default: the wall clock. */
  clock?(): Clock;
  /** Creates the rig (not yet configured) on the given clock, with the table about to be placed. */
  create(context: Pick<RigContext, 'clock' | 'table'>): Promise<HostedRig<S>>;
  /** Per-motor reports, where the driver has them. */
  motors(rig: Rig, nowS: number): MotorStatus[];
  /** The numbers of the rig's own world (the emulated cell's), from its services; null for hardware. */
  cell(services: S): CellStatus | null;
  /** The cell PLC's interlocks now (the rig's supervisor reads the same source); absent without cell I/O. */
  interlock?(): { readonly open: boolean; readonly words: string };
  /** Object and fixture poses (table frame) for the live view, where the rig has them (the emulated cell). */
  bodies?(services: S): readonly PrivilegedObjectState[] | null;
}

/** A command the rig cannot take now; its message says why and what to do. */
export class RigBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RigBusyError';
  }
}

const RECENT_EVENTS = 12;
/** Events worth an operator's attention in the status panel (clamps are counted in rollouts, not listed). */
const LISTED_EVENTS = new Set(['watchdog-hold', 'watchdog-damp', 'fault-hold', 'estop', 'activate-refused']);

export class RigHost<S = undefined> {
  private rig: Rig | undefined;
  private hostedServices: S | undefined;
  private clock: Clock = new RealtimeClock();
  private loop: ControlLoop | undefined;
  private loopDone: Promise<unknown> = Promise.resolve();
  private use: RigUse = 'changing';
  private readonly events: SafetyEventView[] = [];
  private note: string | null = null;
  private rolloutAbort: AbortController | undefined;
  private rolloutDone: Promise<unknown> = Promise.resolve();
  private closed = false;
  private loopView: RigLoopView | null = null;
  private loopAsked = false;

  constructor(private readonly parts: RigParts<S>) {}

  get type(): string {
    return this.parts.type;
  }

  /**
   * Creates the rig (a bad config throws: the station cannot start without knowing its rig) and
   * configures it (talks to it, reads it; nothing moves). A rig that does not answer is kept, its
   * reason shown in the status, so the operator can fix it and press Hold.
   */
  async start(): Promise<void> {
    this.clock = this.parts.clock?.() ?? new RealtimeClock();
    ({ rig: this.rig, services: this.hostedServices } = await this.parts.create({ clock: this.clock }));
    try {
      await this.rig.configure();
      this.note = null;
    } catch (e) {
      if (!(e instanceof RigError)) throw e;
      this.note = e.message;
    } finally {
      this.use = 'idle';
    }
  }

  status(): RigStatus {
    const rig = this.rig;
    if (!rig) {
      return {
        type: this.parts.type,
        mode: 'unconfigured',
        use: this.use,
        position: [],
        motors: [],
        faults: [],
        recentEvents: [...this.events],
        cell: null,
        interlock: this.parts.interlock?.() ?? null,
        note: this.note ?? 'The rig is being set up.',
        loop: this.loopView,
      };
    }
    // While a rollout runs its loop drains the events; between rollouts the host does.
    if (this.use !== 'rollout' && this.use !== 'changing') this.keepEvents(rig.takeSafetyEvents());
    const s = rig.read();
    return {
      type: this.parts.type,
      mode: s.mode,
      use: this.use,
      position: Array.from(s.position),
      motors: this.parts.motors(rig, this.clock.nowS()),
      faults: s.faults.map((f) => ({
        kind: f.kind,
        ...(f.arm ? { arm: f.arm } : {}),
        ...(f.joint !== undefined ? { joint: f.joint } : {}),
        message: f.message,
      })),
      recentEvents: [...this.events],
      cell: this.parts.cell(this.hostedServices as S),
      interlock: this.parts.interlock?.() ?? null,
      note: this.use === 'rollout' ? 'A rollout has the rig; E-stop stops it.' : this.note,
      loop: this.refreshLoop(rig),
    };
  }

  /**
   * The motor loop's statistics: a rig thread's own (asked for now, shown from the next status on,
   * so status() never waits), else the hold loop's while it runs; the last ones seen otherwise.
   */
  private refreshLoop(rig: Rig): RigLoopView | null {
    if (rig.loopStats) {
      // Its statistics start at activation: before that the loop only listens to unpowered motors.
      const mode = rig.read().mode;
      if (!this.loopAsked && mode !== 'unconfigured' && mode !== 'configured') {
        this.loopAsked = true;
        rig
          .loopStats()
          .then((s) => {
            if (s.cycles > 0)
              this.loopView = {
                measuredBy: 'rig thread',
                rateHz: s.rateHz,
                cycles: s.cycles,
                achievedHz: s.achievedHz,
                lateCycles: s.lateCycles,
                overruns: s.overruns,
                jitterP50Ms: s.jitterP50Ms,
                jitterP99Ms: s.jitterP99Ms,
                jitterMaxMs: s.jitterMaxMs,
                watchdogHolds: s.watchdogHolds,
                longestCommandAgeMs: s.longestCommandAgeMs,
              };
          })
          .catch(() => {})
          .finally(() => (this.loopAsked = false));
      }
    } else if (this.loop) {
      const s = this.loop.stats();
      if (s.cycles > 0)
        this.loopView = { measuredBy: 'hold loop', ...s, watchdogHolds: null, longestCommandAgeMs: null };
    }
    return this.loopView;
  }

  /**
   * The rig's latest state for a live view (Foxglove): only reads — no safety events drained, no
   * command — so it is safe during a rollout too. Undefined while there is no rig.
   */
  live(): LiveRigReading | undefined {
    const rig = this.rig;
    if (!rig) return undefined;
    const state = rig.read();
    const ageS = this.clock.nowS() - state.timeS; // NaN before the rig's first reading
    return {
      model: rig.model,
      state,
      ageS: Number.isFinite(ageS) ? Math.max(0, ageS) : 0,
      bodies: this.parts.bodies?.(this.hostedServices as S) ?? null,
    };
  }

  /** Enables the motors and holds the current pose under the control loop until damped. */
  async hold(): Promise<void> {
    if (!this.rig && !this.closed && this.use === 'idle') {
      // The last set-up failed (see the note): try again, as the operator asked for the rig.
      this.use = 'changing';
      try {
        await this.start();
      } catch (e) {
        this.use = 'idle';
        if (e instanceof RigError) throw new RigBusyError(e.message);
        throw e;
      }
    }
    const rig = this.available('hold');
    if (this.loop && rig.read().mode !== 'estopped' && rig.read().mode !== 'fault') return; // already holding
    await this.stopLoop();
    try {
      await rig.activate();
    } catch (e) {
      this.keepEvents(rig.takeSafetyEvents());
      if (e instanceof RigError) throw new RigBusyError(e.message);
      throw e;
    }
    this.note = null;
    const holdPose: RigCommand = { position: Float64Array.from(rig.read().position) };
    const loop = new ControlLoop({ rig, clock: this.clock, rateHz: DEFAULT_CONTROL_RATE_HZ, source: () => holdPose });
    this.loop = loop;
    this.use = 'holding';
    this.loopDone = loop.run({}).catch((e: unknown) => {
      // The loop stops on a rig error; the rig's own fault handling has already held or damped it.
      this.note = `The hold loop stopped: ${(e as Error).message}`;
    });
  }

  /** Damps and disables the motors (the arms go limp: support them first on real hardware). */
  async damp(): Promise<void> {
    const rig = this.available('damp');
    await this.stopLoop();
    await rig.deactivate();
    this.keepEvents(rig.takeSafetyEvents());
    this.use = 'idle';
  }

  /**
   * Emergency stop, at any time — also during a rollout, which it ends: the rig stops within one
   * control cycle and then damps. Never refused, never waits on anything first.
   */
  estop(reason: string): void {
    // The rollout first: while its rig is being re-created there is no rig to stop yet, and the
    // rollout must then not start at all.
    this.rolloutAbort?.abort();
    this.rig?.estop(reason);
  }

  /**
   * Gives the rig to a rollout: stops the hold, re-creates the rig for the table (the cell builds
   * its table from it), runs `run` with it, and keeps the rig (damped by the rollout) afterwards.
   */
  async forRollout<T>(
    table: NonNullable<RigContext['table']>,
    run: (rig: Rig, clock: Clock, signal: AbortSignal, services: S) => Promise<T>,
  ): Promise<T> {
    this.available('rollout');
    this.use = 'changing';
    const abort = new AbortController();
    this.rolloutAbort = abort;
    const done = this.runRollout(table, run, abort);
    this.rolloutDone = done.catch(() => {});
    return done;
  }

  private async runRollout<T>(
    table: NonNullable<RigContext['table']>,
    run: (rig: Rig, clock: Clock, signal: AbortSignal, services: S) => Promise<T>,
    abort: AbortController,
  ): Promise<T> {
    try {
      await this.release();
      this.clock = this.parts.clock?.() ?? new RealtimeClock();
      let hosted: HostedRig<S>;
      try {
        hosted = await this.parts.create({ clock: this.clock, table });
        this.rig = hosted.rig;
        this.hostedServices = hosted.services;
      } catch (e) {
        this.note = `The rig could not be set up for the rollout: ${(e as Error).message} Press Hold to set it up again.`;
        throw e;
      }
      this.note = null;
      if (abort.signal.aborted)
        throw new RigBusyError('The rollout was stopped (Stop or E-stop) before it started; nothing moved.');
      this.use = 'rollout';
      return await run(hosted.rig, this.clock, abort.signal, hosted.services);
    } finally {
      this.rolloutAbort = undefined;
      this.use = 'idle';
    }
  }

  /**
   * Stops the rollout in flight the safe way (not an E-stop): its loop ends at the next step, the
   * rollout holds the pose and then damps, as at any episode's end. False when none is running.
   */
  stopRollout(): boolean {
    if (!this.rolloutAbort) return false;
    this.rolloutAbort.abort();
    return true;
  }

  /** What the current rig's type brings besides it (the composition root's services), once it exists. */
  rigServices(): S | undefined {
    return this.hostedServices;
  }

  /** The rig's model (joint names, limits, base poses) once it exists. */
  model(): RigModel | undefined {
    return this.rig?.model;
  }

  /** Safety events a rollout drained itself, for the status panel. */
  keepEvents(events: readonly SafetyEvent[]): void {
    for (const e of events) {
      if (!LISTED_EVENTS.has(e.kind)) continue;
      this.events.push({ at: new Date().toISOString(), kind: e.kind, message: e.message });
      if (this.events.length > RECENT_EVENTS) this.events.shift();
    }
  }

  /** Shutdown: stop the hold, damp, release the transport. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A rollout in flight stops (it holds, then damps) and ends before the rig is released.
    this.rolloutAbort?.abort();
    await this.rolloutDone;
    await this.release();
  }

  private available(what: string): Rig {
    if (this.closed) throw new RigBusyError('The station is shutting down.');
    if (this.use === 'rollout' || this.use === 'changing')
      throw new RigBusyError(
        `Cannot ${what} now: a rollout has the rig. Press E-stop to stop it, or wait for it to end.`,
      );
    if (!this.rig) throw new RigBusyError(`Cannot ${what}: there is no rig (${this.note ?? 'it did not come up'}).`);
    return this.rig;
  }

  private async stopLoop(): Promise<void> {
    this.loop?.stop();
    this.loop = undefined;
    await this.loopDone;
  }

  /** Stops the hold, damps and closes the current rig. */
  private async release(): Promise<void> {
    await this.stopLoop();
    const rig = this.rig;
    this.rig = undefined;
    this.hostedServices = undefined;
    if (!rig) return;
    try {
      await rig.deactivate();
      this.keepEvents(rig.takeSafetyEvents());
    } finally {
      await rig.close?.();
    }
  }
}
