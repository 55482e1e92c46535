/**
 * The operator in the station UI, as the session engine sees every operator: one more
 * implementation of the SessionOperator port, so the engine and its journal are the same for the
 * terminal, the emulated cell's scripted operator and the browser. Each question the engine asks
 * becomes a prompt (with an id) the UI shows; the API's answer resolves it.
 *
 * An answer is acknowledged only once it is committed: the engine writes its journal row (and the
 * score) synchronously before it asks anything next, so the answer's promise settles at the
 * engine's next call into this operator, its next rollout, or the session's end — or with the
 * engine's refusal (an impossible count), which the API returns as its one sentence.
 */
import type {
  OperatorStep,
  PlaceAnswer,
  ScoreAnswer,
  SessionOperator,
  SessionRunOutcome,
  Timed,
} from '../session/ports.js';
import type { SessionProgress, UnscoredKind } from '../session/journal-state.js';
import { countQuestion } from '../session/score-entry.js';
import type { ObjectEndState } from '../tasks/types.js';
import type { SessionAnswer, SessionPrompt, SessionRunView } from './api-types.js';
import { ApiRefusal } from './request-checks.js';

/** The station is shutting down (or the session was closed) while a prompt waited: nothing is journalled for it. */
export class OperatorGone extends Error {
  constructor() {
    super('the station stopped while the operator was being asked');
    this.name = 'OperatorGone';
  }
}

type PromptKind = SessionPrompt['kind'];

interface Pending {
  readonly prompt: SessionPrompt;
  /** Maps an answer to the engine's, or throws ApiRefusal(400) naming what this step takes. */
  accept(a: SessionAnswer): void;
  /** Resolves the engine's question directly (the E-stop while placing). */
  resolve(v: unknown): void;
  reject(e: Error): void;
}

const TAKES: Readonly<Record<PromptKind, string>> = {
  place: 'confirm, pause or stop',
  score: 'score, score-count or redo',
  reset: 'done',
  'offer-redo': 'redo or close',
  paused: 'carry-on or stop',
  break: 'carry-on',
};

function runView(run: SessionRunOutcome): SessionRunView {
  return {
    rolloutId: run.rolloutId,
    status: run.status,
    reason: run.reason ?? null,
    finalMode: run.finalMode,
    wallS: run.wallS,
  };
}

export class BrowserOperator implements SessionOperator {
  private pending: Pending | undefined;
  /** The last answer, waiting for the engine to commit it (undefined) or refuse it (the sentence). */
  private unacked: ((refusal: string | undefined) => void) | undefined;
  private promptCount = 0;
  private current: OperatorStep | undefined;
  private readonly said: string[] = [];

  constructor(
    readonly name: string,
    /** Called whenever the prompt, the step or the lines change: the host pushes the view. */
    private readonly changed: () => void,
  ) {}

  /** The question waiting for the operator, or undefined while the engine works. */
  get prompt(): SessionPrompt | undefined {
    return this.pending?.prompt;
  }

  get step(): OperatorStep | undefined {
    return this.current;
  }

  get lines(): readonly string[] {
    return this.said;
  }

  /**
   * Applies the operator's answer to the prompt it was given for and resolves once the engine has
   * committed it. A stale prompt id (a double press, a second tab) is refused, never applied to the
   * step that followed.
   */
  async answer(promptId: number, a: SessionAnswer): Promise<void> {
    const p = this.pending;
    if (!p || p.prompt.id !== promptId) {
      throw new ApiRefusal(
        409,
        p
          ? `That answer was for an earlier step; the session now asks to ${p.prompt.kind === 'offer-redo' ? 'redo or close a rollout' : p.prompt.kind}.`
          : 'The session is not asking anything now (a rollout runs or the session stopped); nothing was changed.',
      );
    }
    const committed = new Promise<string | undefined>((resolve) => (this.unacked = resolve));
    try {
      p.accept(a);
    } catch (e) {
      this.unacked = undefined;
      throw e;
    }
    this.pending = undefined;
    this.changed();
    const refusal = await committed;
    if (refusal !== undefined) throw new ApiRefusal(400, `Not stored: ${refusal}`);
  }

  /** The engine moved on (or stopped): the last answer is in the journal. */
  settle(): void {
    this.ack(undefined);
  }

  /** The E-stop while the operator places: the engine journals it and waits (nothing moves while placing). */
  estop(): boolean {
    const p = this.pending;
    if (p?.prompt.kind !== 'place') return false;
    this.pending = undefined;
    p.resolve({ action: 'estop' } satisfies PlaceAnswer);
    this.changed();
    return true;
  }

  /** Shutdown: a waiting prompt is withdrawn; the engine stops with nothing journalled for it. */
  withdraw(): void {
    const p = this.pending;
    this.pending = undefined;
    p?.reject(new OperatorGone());
    this.ack(undefined);
  }

  place(step: OperatorStep): Promise<PlaceAnswer> {
    return this.ask<PlaceAnswer>(
      'place',
      step,
      step.placementRefused ? { placement: step.placementRefused } : {},
      (a) => {
        if (a.action === 'confirm' || a.action === 'pause' || a.action === 'stop') return { action: a.action };
        return undefined;
      },
    );
  }

  score(step: OperatorStep & { readonly run: SessionRunOutcome }): Promise<ScoreAnswer> {
    const q = countQuestion(step.task);
    const scoring = {
      count: q ?? null,
      regions: [...step.task.regionIds],
      objects: step.layout.objects.map((o) => ({ id: o.id, kind: o.kind, posture: o.posture })),
    };
    return this.ask<ScoreAnswer>('score', step, { run: runView(step.run), scoring }, (a) => {
      if (a.action === 'score') {
        const endStates: ObjectEndState[] = a.endStates.map((e) => ({
          id: e.id,
          ...(e.region !== undefined ? { region: e.region } : {}),
          ...(e.upright !== undefined ? { upright: e.upright } : {}),
          ...(e.offTable ? { offTable: true } : {}),
        }));
        return { action: 'score', endStates, ...(a.note ? { note: a.note } : {}) };
      }
      if (a.action === 'score-count')
        return { action: 'score-count', count: a.count, ...(a.note ? { note: a.note } : {}) };
      if (a.action === 'redo') {
        if (!a.reason || a.reason.trim() === '')
          throw new ApiRefusal(
            400,
            'Say why the rollout is redone (a reason is stored with it), then press Redo again.',
          );
        return { action: 'redo', reason: a.reason.trim() };
      }
      return undefined;
    });
  }

  refused(problem: string): void {
    this.ack(problem);
  }

  async reset(step: OperatorStep): Promise<Timed> {
    await this.ask('reset', step, {}, (a) => (a.action === 'done' ? true : undefined));
    return {};
  }

  offerRedo(step: OperatorStep, why: { readonly kind: UnscoredKind; readonly reason: string }): Promise<boolean> {
    return this.ask<boolean>('offer-redo', step, { why }, (a) =>
      a.action === 'redo' ? true : a.action === 'close' ? false : undefined,
    );
  }

  paused(_progress: SessionProgress): Promise<boolean> {
    return this.ask<boolean>('paused', this.current, {}, (a) =>
      a.action === 'carry-on' ? true : a.action === 'stop' ? false : undefined,
    );
  }

  async breakReminder(_progress: SessionProgress): Promise<Timed> {
    await this.ask('break', this.current, {}, (a) => (a.action === 'carry-on' ? true : undefined));
    return {};
  }

  say(line: string): void {
    this.ack(undefined);
    this.said.push(line);
    if (this.said.length > 20) this.said.shift();
    this.changed();
  }

  private ack(refusal: string | undefined): void {
    const u = this.unacked;
    this.unacked = undefined;
    u?.(refusal);
  }

  private ask<T>(
    kind: PromptKind,
    step: OperatorStep | undefined,
    extra: object,
    map: (a: SessionAnswer) => T | undefined,
  ): Promise<T> {
    // Being asked means the previous answer has been journalled.
    this.ack(undefined);
    this.current = step;
    const prompt = { id: ++this.promptCount, kind, ...extra } as SessionPrompt;
    return new Promise<T>((resolve, reject) => {
      this.pending = {
        prompt,
        accept: (a) => {
          const mapped = map(a);
          if (mapped === undefined)
            throw new ApiRefusal(
              400,
              `The ${kind === 'offer-redo' ? 'redo question' : `${kind} step`} takes ${TAKES[kind]}, not '${a.action}'.`,
            );
          resolve(mapped);
        },
        resolve: (v) => resolve(v as T),
        reject,
      };
      this.changed();
    });
  }
}
