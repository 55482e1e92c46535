/**
 * The station's teleop recording: `tandem teleop record`'s own flow (the composition root's
 * recorder, src/app/commands/teleop.ts → src/teleop), run on the station's rig, with the UI's
 * buttons pushed into the same operator-controls queue its keyboard and pedal feed. This file
 * keeps the view the UI shows (phase, takes with their dropped frames, lines); it runs no loop.
 */
import type { Store } from '../store/store.js';
import type {
  ResumeTeleopRequest,
  StartTeleopRequest,
  TeleopControlName,
  TeleopLeaderName,
  TeleopPhaseName,
  TeleopResumable,
  TeleopTakeView,
  TeleopView,
} from './api-types.js';
import { ApiRefusal } from './request-checks.js';
import { RigBusyError } from './rig-host.js';

/** What a recording reports back to the host while it runs. */
export interface TeleopHooks {
  log(line: string): void;
  /** The session exists (its id) and its controls take the UI's buttons. */
  ready(sessionId: number, push: (action: TeleopControlName) => void): void;
  phase(phase: 'engaging' | 'take' | 'reset', episodeIndex: number, seconds?: number): void;
  take(t: {
    episodeIndex: number;
    file: string;
    state: 'kept' | 'discarded';
    cameraCounters?: Readonly<Record<string, { received: number; dropped: number }>>;
  }): void;
  readonly signal: AbortSignal;
}

export interface TeleopParts {
  /**
   * Runs one teleop recording on the station's rig until it ends; throws one sentence (ApiRefusal
   * 400) for bad input. With `resume`, carries that stopped session on at its next episode.
   */
  record(
    req: StartTeleopRequest,
    hooks: TeleopHooks,
    resume?: { readonly sessionId: number },
  ): Promise<{ sessionId: number; end: string; problem?: string }>;
  /** The stopped session `--resume` would carry on in the station's teleop folder, or null. */
  resumable(): TeleopResumable | null;
}

interface Active {
  readonly req: StartTeleopRequest;
  readonly resumed: boolean;
  sessionId: number | null;
  phase: TeleopPhaseName;
  episodeIndex: number;
  phaseStartedAt: string | null;
  phaseSeconds: number | null;
  problem: string | null;
  readonly lines: string[];
  push: ((a: TeleopControlName) => void) | undefined;
  readonly abort: AbortController;
  done: Promise<void>;
}

export class TeleopHost {
  private active: Active | undefined;
  private seq = 0;
  /** Frame counters of the takes this station recorded, by file: kept across runs, so a resumed session still shows its earlier takes'. */
  private readonly counters = new Map<string, { received: number; dropped: number }>();
  publish: (view: TeleopView | null) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly parts: TeleopParts,
  ) {}

  working(): boolean {
    const p = this.active?.phase;
    return p === 'starting' || p === 'engaging' || p === 'take' || p === 'reset';
  }

  view(): TeleopView | null {
    const a = this.active;
    if (!a) return null;
    const takes: TeleopTakeView[] =
      a.sessionId === null
        ? []
        : this.store.listTeleopTakes(a.sessionId).map((t) => {
            const c = this.counters.get(t.file);
            return {
              id: t.id,
              episodeIndex: t.episodeIndex,
              state: t.state,
              file: t.file,
              marks: t.marks,
              discardReason: t.discardReason,
              droppedFrames: c ? c.dropped : null,
              framesReceived: c ? c.received : null,
              startedAt: t.startedAt,
            };
          });
    return {
      seq: ++this.seq,
      sessionId: a.sessionId,
      phase: a.phase,
      episodeIndex: a.episodeIndex,
      episodes: a.req.episodes,
      seconds: a.req.seconds,
      task: a.req.task,
      phaseStartedAt: a.phaseStartedAt,
      phaseSeconds: a.phaseSeconds,
      kept: takes.filter((t) => t.state === 'kept').length,
      takes,
      lines: [...a.lines],
      problem: a.problem,
      cameras: a.req.cameras,
      leader: a.req.leader,
      layoutSet: a.req.layoutSet ?? null,
      layout: a.req.layout ?? null,
      resumed: a.resumed,
    };
  }

  /** The stopped session the page can carry on (none while a recording runs: it has the rig). */
  resumable(): TeleopResumable | null {
    return this.working() ? null : this.parts.resumable();
  }

  /**
   * Carries on the stopped session at its next episode with its own settings (task, take and reset
   * lengths, leader, cameras, layout), as `tandem teleop record --resume`.
   */
  async resume(r: ResumeTeleopRequest): Promise<TeleopView> {
    if (this.working()) throw new RigBusyError('A teleop recording is running; stop it (Q) before resuming another.');
    const s = this.parts.resumable();
    if (!s) throw new ApiRefusal(409, 'There is no stopped teleop session to resume; start a new recording.');
    if (s.sessionId !== r.sessionId)
      throw new ApiRefusal(
        409,
        `Teleop session ${r.sessionId} is not the one to resume: the newest stopped one is session ${s.sessionId} (reload the page).`,
      );
    if (s.blocked) throw new ApiRefusal(409, s.blocked);
    const episodes = r.episodes ?? s.episodes;
    if (episodes <= s.kept)
      throw new ApiRefusal(
        400,
        `Teleop session ${s.sessionId} already has ${s.kept} kept episode${s.kept === 1 ? '' : 's'}; ask for more than ${s.kept} episodes to record more.`,
      );
    const req: StartTeleopRequest = {
      task: s.task === 'teleop' ? s.prompt : s.task,
      episodes,
      seconds: s.seconds,
      resetSeconds: s.resetSeconds,
      cameras: s.cameras,
      // Not blocked above: an emulated leader, or the one the station config names (recorded by its ports).
      leader: (s.leader.startsWith('emulated-') ? s.leader : 'station') as TeleopLeaderName,
      ...(s.layoutSet !== null && s.layout !== null ? { layoutSet: s.layoutSet, layout: s.layout } : {}),
    };
    return this.run(req, { sessionId: s.sessionId });
  }

  /** Starts a recording; resolves once it runs (or with its one-sentence refusal). */
  async start(req: StartTeleopRequest): Promise<TeleopView> {
    if (this.working()) throw new RigBusyError('A teleop recording is running; stop it (Q) before starting another.');
    return this.run(req, undefined);
  }

  private async run(req: StartTeleopRequest, resume: { readonly sessionId: number } | undefined): Promise<TeleopView> {
    const a: Active = {
      req,
      resumed: resume !== undefined,
      sessionId: resume?.sessionId ?? null,
      phase: 'starting',
      episodeIndex: 0,
      phaseStartedAt: null,
      phaseSeconds: null,
      problem: null,
      lines: [],
      push: undefined,
      abort: new AbortController(),
      done: Promise.resolve(),
    };
    this.active = a;
    const changed = (): void => this.publish(this.view());
    let startedResolve: () => void = () => {};
    const started = new Promise<void>((r) => (startedResolve = r));
    const hooks: TeleopHooks = {
      signal: a.abort.signal,
      log: (line) => {
        a.lines.push(line);
        if (a.lines.length > 30) a.lines.shift();
        changed();
      },
      ready: (sessionId, push) => {
        a.sessionId = sessionId;
        a.push = push;
        startedResolve();
        changed();
      },
      phase: (phase, episodeIndex, seconds) => {
        a.phase = phase;
        a.episodeIndex = episodeIndex;
        a.phaseStartedAt = new Date().toISOString();
        a.phaseSeconds = seconds ?? null;
        changed();
      },
      take: (t) => {
        if (t.cameraCounters) {
          const all = Object.values(t.cameraCounters);
          this.counters.set(t.file, {
            received: all.reduce((n, c) => n + c.received, 0),
            dropped: all.reduce((n, c) => n + c.dropped, 0),
          });
        }
        changed();
      },
    };
    let failure: unknown;
    a.done = this.parts
      .record(req, hooks, resume)
      .then(
        (r) => {
          a.sessionId = r.sessionId;
          a.phase = r.end === 'done' ? 'done' : 'stopped';
          a.problem = r.problem ?? null;
        },
        (e: unknown) => {
          failure = e;
          a.phase = 'failed';
          a.problem = (e as Error).message ?? String(e);
        },
      )
      .finally(() => {
        a.push = undefined;
        startedResolve();
        changed();
      });
    changed();
    await started;
    if (failure instanceof ApiRefusal || failure instanceof RigBusyError) throw failure;
    return this.view()!;
  }

  /** A button of the UI: the same action as the terminal's key. */
  control(action: TeleopControlName): TeleopView {
    const a = this.active;
    if (!a?.push) throw new ApiRefusal(409, 'No teleop recording is running; start one first.');
    a.push(action);
    return this.view()!;
  }

  async close(): Promise<void> {
    const a = this.active;
    if (!a) return;
    a.abort.abort();
    await a.done;
  }
}
