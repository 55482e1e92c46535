/**
 * Single rollouts from the station UI: one at a time, refused while an eval session or a teleop
 * recording has the rig. A start is answered once the rollout is under way; its progress, its end
 * and its stored result go out on the event stream.
 */
import type { RolloutRun, RunRolloutRequest, StationEvent } from './api-types.js';
import { ApiRefusal } from './request-checks.js';
import { RigBusyError, type RigHost } from './rig-host.js';
import type { SessionHost } from './session-host.js';
import type { TeleopHost } from './teleop-host.js';

/** A rollout checked and ready to run (its policy open); made by RolloutRunner.prepare. */
export interface PreparedRollout {
  readonly policy: string;
  readonly layoutSet: string;
  readonly layout: number;
  readonly seconds: number;
  readonly totalSteps: number;
  /** Runs it on the rig, reporting control steps done; resolves once it is stored. */
  run(onSteps: (stepsDone: number) => void, onPhase: (message: string) => void): Promise<RolloutResultView>;
}

export interface RolloutResultView {
  readonly rolloutId: number;
  readonly status: 'valid' | 'invalid' | 'aborted';
  readonly progress: number | null;
  readonly scoreSummary: string | null;
  readonly message: string;
}

export interface RolloutRunner {
  /** Checks a request against the store and opens its policy; a bad request throws ApiRefusal(400). */
  prepare(req: RunRolloutRequest): Promise<PreparedRollout>;
}

export interface SingleRolloutsOptions {
  readonly rig: RigHost<unknown>;
  readonly rollouts: RolloutRunner;
  readonly sessions?: SessionHost;
  readonly teleop?: TeleopHost;
  readonly broadcast: (event: StationEvent) => void;
  readonly logError?: (e: unknown) => void;
}

function inFlight(run: RolloutRun | null): run is RolloutRun {
  return run !== null && (run.phase === 'starting' || run.phase === 'running' || run.phase === 'storing');
}

export class SingleRollouts {
  private run: RolloutRun | null = null;
  private runCount = 0;
  private runPromise: Promise<void> | undefined;
  private starting = false;

  constructor(private readonly o: SingleRolloutsOptions) {}

  /** The rollout running now, or the last one; null before the first. */
  current(): RolloutRun | null {
    return this.run;
  }

  /** Whether a single rollout has the rig (starting, running, or storing its result). */
  live(): boolean {
    return this.starting || inFlight(this.run);
  }

  /** Resolves when the current rollout (if any) has ended and been stored. */
  async settled(): Promise<void> {
    await this.runPromise;
  }

  /**
   * Stop, not E-stop: the rollout's loop ends at its next step, the rig holds its pose while the
   * table settles, then damps; the rollout is stored as aborted (stopped by the operator).
   */
  stop(): RolloutRun {
    const run = this.run;
    if (!inFlight(run) || !this.o.rig.stopRollout())
      throw new ApiRefusal(409, 'No rollout is running; there is nothing to stop.');
    this.run = { ...run, message: 'Stopping: the rig holds its pose, then damps; the rollout is stored as aborted.' };
    this.o.broadcast({ type: 'run', run: this.run });
    return this.run;
  }

  /** Starts one rollout on the rig: answered once it is under way; its progress and end go on the event stream. */
  async start(req: RunRolloutRequest): Promise<RolloutRun> {
    if (this.o.sessions?.working())
      throw new RigBusyError('An eval session has the rig; run single rollouts once it is stopped or ended.');
    if (this.o.teleop?.working())
      throw new RigBusyError('A teleop recording has the rig; run single rollouts once it is stopped (Q).');
    if (this.live()) throw new RigBusyError('A rollout is already running; wait for it to end or press E-stop.');
    this.starting = true;
    let prepared: PreparedRollout;
    try {
      prepared = await this.o.rollouts.prepare(req);
    } finally {
      this.starting = false;
    }
    const runId = ++this.runCount;
    let run: RolloutRun = {
      runId,
      phase: 'starting',
      policy: prepared.policy,
      layoutSet: prepared.layoutSet,
      layout: prepared.layout,
      seconds: prepared.seconds,
      stepsDone: 0,
      totalSteps: prepared.totalSteps,
      message: 'Bringing the rig up with the layout on its table…',
      rolloutId: null,
      status: null,
      progress: null,
      scoreSummary: null,
    };
    const update = (patch: Partial<RolloutRun>): void => {
      run = { ...run, ...patch };
      this.run = run;
      this.o.broadcast({ type: 'run', run });
    };
    update({});
    let lastSentSteps = -1;
    const progressTimer = setInterval(() => {
      if (run.stepsDone !== lastSentSteps) {
        lastSentSteps = run.stepsDone;
        this.o.broadcast({ type: 'run', run });
      }
    }, 200);
    const started = run;
    this.runPromise = prepared
      .run(
        (steps) => {
          if (run.phase === 'starting')
            update({ phase: 'running', message: `Running ${prepared.policy} for ${prepared.seconds} s.` });
          run = { ...run, stepsDone: Math.min(steps, run.totalSteps) };
          this.run = run;
          if (steps >= run.totalSteps && run.phase === 'running')
            update({ phase: 'storing', message: 'Episode done; the rig holds while the table settles, then damps.' });
        },
        (message) => update({ message }),
      )
      .then(
        (r) =>
          update({
            phase: 'done',
            rolloutId: r.rolloutId,
            status: r.status,
            progress: r.progress,
            scoreSummary: r.scoreSummary,
            message: r.message,
          }),
        (e: unknown) => {
          if (!(e instanceof ApiRefusal) && !(e instanceof RigBusyError)) this.o.logError?.(e);
          update({ phase: 'failed', message: (e as Error).message ?? String(e) });
        },
      )
      .finally(() => {
        clearInterval(progressTimer);
        this.o.broadcast({ type: 'rollouts-changed' });
      });
    return started;
  }
}
