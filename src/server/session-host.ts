/**
 * The station's eval session: at most one at a time, run by the session engine (src/session) with
 * the UI's operator (browser-operator.ts) and the composition root's rollout runner on the
 * station's rig. This file plans and starts or resumes sessions, keeps the view the UI shows, and
 * ties the station's E-stop to the engine's interlock signal — no state machine of its own.
 */
import { randomInt } from 'node:crypto';
import type { Store } from '../store/store.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import { getTask } from '../tasks/registry.js';
import {
  buildSessionPlan,
  checkPlanLayoutSet,
  parseSessionPlan,
  SessionPlanError,
  type RolloutCostS,
  type SessionPlan,
} from '../session/plan.js';
import { DEFAULT_BREAK_EVERY_S, runSession, startSession } from '../session/engine.js';
import { interruption, JOURNAL, sessionProgress, slotStates } from '../session/journal-state.js';
import {
  OPERATOR_STOP,
  type SessionGate,
  type PlacementGate,
  type SessionProjector,
  type SessionRolloutRunner,
} from '../session/ports.js';
import type {
  SessionAnswerRequest,
  SessionPhase,
  SessionResults,
  SessionSummary,
  SessionView,
  StartSessionRequest,
} from './api-types.js';
import { sessionResults } from './session-results.js';
import { BrowserOperator, OperatorGone } from './browser-operator.js';
import { ApiRefusal } from './request-checks.js';
import { RigBusyError } from './rig-host.js';
import { interruptedWords } from './interrupted-words.js';
import { takeoverView, toggleTakeover, type TakeoverControl } from './session-takeover.js';

/** What the composition root provides: the rig runner for a plan's policies. */
export interface SessionParts {
  /** Opens the plan's policies on the station's rig; a spec that does not load throws one sentence (ApiRefusal 400). */
  openRunner(
    plan: SessionPlan,
    set: LayoutSet,
    log: (line: string) => void,
  ): Promise<SessionRolloutRunner & { close(): Promise<void>; readonly takeover?: TakeoverControl }>;
  /** Per-rollout times measured in the store, for fitting a plan to the minutes. */
  cost(): { readonly cost: RolloutCostS; readonly source: 'measured' | 'defaults' };
  /** The cell's interlocks now, in words ("door open", "no cell I/O configured"). */
  interlocks(): string;
  /**
   * Why the cell is not safe to start a rollout now (the PLC's reason), or undefined. The stop
   * mid-rollout is the rig's own safety supervisor's, which reads the PLC every cycle.
   */
  blocked?(): string | undefined;
  /** Shows each layout's footprints and blanks before the arms move; absent: no projector. */
  readonly projector?: SessionProjector;
  /** The placement check before start (the overhead camera against the twin); absent: nothing checked. */
  readonly placement?: PlacementGate;
}

interface Active {
  readonly id: number;
  readonly plan: SessionPlan;
  readonly operator: BrowserOperator;
  readonly breakEveryS: number;
  running: { startedAt: string; label: string; seconds: number } | null;
  estopped: boolean;
  state: 'working' | 'stopped' | 'ended';
  stoppedBecause: string | null;
  done: Promise<void>;
  abort: AbortController;
  /** The current rollout's safety signal: the station's E-stop aborts it. */
  safety: AbortController | undefined;
  /** The leader's takeover of the running rollout (a station with a leader). */
  readonly takeover?: TakeoverControl;
}

const DEFAULT_OPERATOR = 'operator (station UI)';

/** How many start/resume request ids are remembered to refuse a repeat (a double click, a retried request). */
const REMEMBERED_REQUESTS = 200;

export class SessionHost {
  private active: Active | undefined;
  private seq = 0;
  /** A start or resume in flight (its policies opening): a second one is refused, not run beside it. */
  private opening: string | undefined;
  /** Request ids already acted on, with what they did, so a repeated click says so instead of acting twice. */
  private readonly requests = new Map<string, string>();
  /** The event stream's sender (the server sets it). */
  publish: (view: SessionView | null) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly parts: SessionParts,
    private readonly now: () => number = Date.now,
  ) {}

  private shownInterlocks = '';

  /**
   * Publishes the view when the interlocks' words changed. The station calls this on a timer: a
   * PLC that goes silent is a change in time, not an event, and the panel must not show "closed".
   */
  refreshSafety(): void {
    const words = this.parts.interlocks();
    if (words === this.shownInterlocks) return;
    this.shownInterlocks = words;
    if (this.active) this.changed();
  }

  /** True while a session's engine is working (a single rollout must not take the rig then). */
  working(): boolean {
    return this.active?.state === 'working';
  }

  /** A stored session's plan, or undefined when it has none or it no longer parses (listed as nothing, never thrown). */
  private storedPlan(sessionId: number): SessionPlan | undefined {
    const stored = this.store.getSessionPlan(sessionId);
    if (!stored) return undefined;
    try {
      return parseSessionPlan(stored.planJson, `session ${sessionId}'s plan`);
    } catch {
      return undefined;
    }
  }

  list(): SessionSummary[] {
    const out: SessionSummary[] = [];
    for (const s of this.store.listSessions()) {
      if (s.kind !== 'real-eval' && s.kind !== 'ab-test') continue;
      const plan = this.storedPlan(s.id);
      if (!plan) continue;
      const journal = this.store.listSessionJournal(s.id);
      const p = sessionProgress(plan, journal, this.now());
      // The session this station is working on is not interrupted, whatever its journal's last row.
      const cut = this.active?.id === s.id && this.active.state === 'working' ? undefined : interruption(plan, journal);
      const interrupted = cut ? { at: cut.at, words: interruptedWords(cut, p.total) } : null;
      out.push({
        id: s.id,
        task: plan.task,
        layoutSetSha256: plan.layoutSetSha256,
        blind: plan.blind,
        labels: plan.policies.map((x) => x.label),
        rollouts: p.total,
        done: p.done,
        scored: p.scored,
        startedAt: s.startedAt,
        endedAt: s.endedAt,
        operator: s.operator,
        interrupted,
      });
    }
    return out.reverse();
  }

  view(): SessionView | null {
    const a = this.active;
    if (!a) return null;
    const journal = this.store.listSessionJournal(a.id);
    const p = sessionProgress(a.plan, journal, this.now());
    const prompt = a.operator.prompt ?? null;
    const step = a.operator.step;
    const slot = p.current !== undefined ? slotStates(a.plan, journal)[p.current] : undefined;
    let phase: SessionPhase;
    if (a.state === 'ended' || p.ended) phase = 'ended';
    else if (a.state === 'stopped') phase = 'stopped';
    else if (a.running) phase = 'running';
    else if (prompt) phase = prompt.kind === 'offer-redo' ? 'decide' : prompt.kind;
    else phase = 'between';
    const last = [...journal]
      .reverse()
      .find(
        (e) =>
          e.action === JOURNAL.breakReminder ||
          e.action === JOURNAL.sessionStarted ||
          e.action === JOURNAL.sessionResumed,
      );
    const breakInS =
      last && a.state === 'working' ? Math.max(0, a.breakEveryS - (this.now() - Date.parse(last.at)) / 1000) : null;
    const planned = slot ? a.plan.rollouts[slot.slot] : undefined;
    const layout = step?.layout;
    return {
      seq: ++this.seq,
      id: a.id,
      task: a.plan.task,
      layoutSetSha256: a.plan.layoutSetSha256,
      blind: a.plan.blind,
      labels: a.plan.policies.map((x) => x.label),
      episodeSeconds: a.plan.episodeSeconds,
      phase,
      step:
        step && layout
          ? {
              slot: step.slot,
              attempt: step.attempt,
              total: step.total,
              label: step.label,
              layoutIndex: layout.index,
              tier: layout.tier,
              objects: layout.objects.map((o) => ({ id: o.id, kind: o.kind, posture: o.posture })),
            }
          : planned && slot
            ? {
                slot: slot.slot,
                attempt: slot.attempt,
                total: p.total,
                label: planned.policyLabel,
                layoutIndex: planned.layoutIndex,
                tier: -1,
                objects: [],
              }
            : null,
      prompt,
      running: a.running,
      progress: {
        total: p.total,
        done: p.done,
        scored: p.scored,
        closed: p.closed,
        elapsedS: p.elapsedS,
        etaS: p.etaS,
        breakInS,
      },
      stoppedBecause: a.stoppedBecause,
      safety: { estopped: a.estopped, interlocks: this.parts.interlocks() },
      lines: [...a.operator.lines],
      takeover: a.running ? takeoverView(this.store, a.id, a.takeover) : null,
    };
  }

  /** The operator takes over the running rollout with the leader, or gives it back (the page's button, E). */
  toggleTakeover(): SessionView {
    const a = this.active;
    toggleTakeover(a?.takeover, a?.state === 'working' && a.running !== null);
    return this.view()!;
  }

  /**
   * The label each rollout of a blind session still running (not ended) ran as: the Rollouts page
   * shows "policy A" for them, never the policy, until the session ends and its key may be seen.
   */
  blindLabels(): Map<number, string> {
    const out = new Map<number, string>();
    for (const s of this.store.listSessions({ kind: 'ab-test' })) {
      if (s.endedAt !== null) continue;
      const plan = this.storedPlan(s.id);
      if (!plan) continue;
      for (const e of this.store.listSessionJournal(s.id)) {
        if (e.rolloutId !== null && e.slot !== null && plan.rollouts[e.slot])
          out.set(e.rolloutId, plan.rollouts[e.slot].policyLabel);
      }
      // A rollout stored in the last moments before its journal row: still the session's, still hidden.
      for (const r of this.store.listRollouts({ sessionId: s.id }))
        if (!out.has(r.id)) out.set(r.id, "a blind session's policy");
    }
    return out;
  }

  /** The policy specs of blind sessions still running, each with its session: not to be compared until it ends. */
  blindSpecs(): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.store.listSessions({ kind: 'ab-test' })) {
      if (s.endedAt !== null) continue;
      for (const p of this.storedPlan(s.id)?.policies ?? []) out.set(p.spec, s.id);
    }
    return out;
  }

  /** Plans a session as 'tandem session plan' would (fitted to the minutes), stores it and starts it. */
  async start(req: StartSessionRequest): Promise<SessionView> {
    this.refuseRepeat(req.requestId);
    this.refuseIfWorking();
    return this.exclusively('starting a session', () => this.startNow(req));
  }

  private async startNow(req: StartSessionRequest): Promise<SessionView> {
    const set = this.store.loadLayoutSet(req.layoutSet);
    if (!set)
      throw new ApiRefusal(
        400,
        `There is no layout set ${req.layoutSet.slice(0, 12)}… in the store; sample or upload one first.`,
      );
    const task = getTask(set.task);
    const { cost, source } = this.parts.cost();
    let plan: SessionPlan;
    try {
      plan = buildSessionPlan({
        set,
        specs: req.policies,
        perLayout: req.perLayout,
        blind: req.blind,
        // A fresh seed per plan unless one is given: the same policies in the next session get
        // another letter assignment, so revealing one session's key unblinds no other.
        seed: req.seed ?? randomInt(0, 2 ** 31 - 1),
        ...(req.minutes !== undefined ? { minutes: req.minutes } : {}),
        ...(req.layouts ? { layouts: req.layouts } : {}),
        episodeSeconds: req.seconds ?? task.episodeSeconds,
        cost,
        costSource: source,
        ...(req.analysis ? { analysis: req.analysis } : {}),
      });
    } catch (e) {
      if (e instanceof SessionPlanError) throw new ApiRefusal(400, e.message);
      throw e;
    }
    const operator = req.operator?.trim() || DEFAULT_OPERATOR;
    // Policies open before the session exists: a spec that does not load leaves nothing behind.
    const opened = await this.openRunner(plan, set);
    const id = startSession(this.store, plan, set, operator, { stopEarly: req.stopEarly === true });
    this.remember(req.requestId, `started session ${id}`);
    return this.begin(id, plan, set, operator, opened, (req.breakMinutes ?? DEFAULT_BREAK_EVERY_S / 60) * 60);
  }

  /** Carries on a stopped session at its exact step (as 'tandem session resume'). */
  async resume(id: number, breakMinutes?: number, requestId?: string): Promise<SessionView> {
    this.refuseRepeat(requestId);
    this.refuseIfWorking();
    return this.exclusively(`resuming session ${id}`, () => this.resumeNow(id, breakMinutes, requestId));
  }

  private async resumeNow(
    id: number,
    breakMinutes: number | undefined,
    requestId: string | undefined,
  ): Promise<SessionView> {
    const session = this.store.getSession(id);
    const stored = this.store.getSessionPlan(id);
    if (!session || !stored) throw new ApiRefusal(404, `There is no evaluation session ${id} in the store.`);
    if (session.endedAt !== null)
      throw new ApiRefusal(
        409,
        `Session ${id} ended at ${session.endedAt}; export it with: tandem session export ${id} --json`,
      );
    let plan: SessionPlan;
    try {
      plan = parseSessionPlan(stored.planJson, `session ${id}'s plan`);
    } catch (e) {
      if (e instanceof SessionPlanError) throw new ApiRefusal(409, e.message);
      throw e;
    }
    const set = this.store.loadLayoutSet(plan.layoutSetSha256);
    if (!set)
      throw new ApiRefusal(
        409,
        `Session ${id}'s layout set ${plan.layoutSetSha256.slice(0, 12)}… is not in the store; upload it, then resume.`,
      );
    checkPlanLayoutSet(plan, set, 'in the store');
    const opened = await this.openRunner(plan, set);
    this.store.appendSessionJournal({ sessionId: id, action: JOURNAL.sessionResumed });
    this.remember(requestId, `resumed session ${id}`);
    return this.begin(
      id,
      plan,
      set,
      session.operator ?? DEFAULT_OPERATOR,
      opened,
      (breakMinutes ?? DEFAULT_BREAK_EVERY_S / 60) * 60,
    );
  }

  /**
   * Ends a session that is not running (stopped for now, or left open by a crash) with the
   * operator's reason, journalled: its scored rollouts stay results, its unfinished slots are not
   * run, and a blind session's key may then be seen.
   */
  end(id: number, reason: string): SessionSummary {
    const session = this.store.getSession(id);
    if (!session || !this.store.getSessionPlan(id))
      throw new ApiRefusal(404, `There is no evaluation session ${id} in the store.`);
    if (session.endedAt !== null) throw new ApiRefusal(409, `Session ${id} already ended at ${session.endedAt}.`);
    if (this.active?.id === id && this.active.state === 'working')
      throw new ApiRefusal(409, `Session ${id} is running; stop it for now (Q) first, then end it.`);
    if (this.opening !== undefined)
      throw new ApiRefusal(409, `The station is ${this.opening}; wait for it, then end session ${id}.`);
    this.store.appendSessionJournal({ sessionId: id, action: JOURNAL.ended, detail: { byOperator: true, reason } });
    this.store.endSession(id);
    if (this.active?.id === id) {
      this.active.state = 'ended';
      this.changed();
    }
    return this.list().find((s) => s.id === id)!;
  }

  /** A session's results so far (the current one live, any stored one); a blind key only once it ended. */
  results(id: number): SessionResults {
    const session = this.store.getSession(id);
    const plan = session ? this.storedPlan(id) : undefined;
    if (!session || !plan) throw new ApiRefusal(404, `There is no evaluation session ${id} in the store.`);
    const set = this.store.loadLayoutSet(plan.layoutSetSha256);
    const tierOf = (i: number): number => set?.layouts[i]?.tier ?? 0;
    return sessionResults(
      plan,
      this.store.listSessionJournal(id),
      tierOf,
      session.endedAt !== null,
      (r) => this.store.listTakeovers(r).length,
    );
  }

  /**
   * The operator's Abort (S, the card's button) during a session rollout: the rollout stops at its
   * next step (the rig holds, then damps), is stored unscored as stopped by the operator, and the
   * session offers it for redo. False when no session rollout is running.
   */
  stopRollout(): boolean {
    const a = this.active;
    if (!a || a.state !== 'working' || !a.running || !a.safety || a.safety.signal.aborted) return false;
    a.safety.abort(OPERATOR_STOP);
    a.operator.say(
      `Stopping rollout ${a.running.label === '' ? '' : `(${a.running.label}) `}at the operator's request: the rig holds its pose, then damps; it is stored unscored and offered for redo.`,
    );
    this.changed();
    return true;
  }

  /** The operator's answer, resolved once the engine has committed it to the journal. */
  async answer(req: SessionAnswerRequest): Promise<SessionView> {
    const a = this.active;
    if (!a || a.state !== 'working')
      throw new ApiRefusal(409, 'No session is running; start one, or resume a stopped one.');
    await a.operator.answer(req.prompt, req.answer);
    return this.view()!;
  }

  /**
   * The station's E-stop: the rollout in flight ends (journalled e-stopped, offered for redo); while
   * the operator places, the engine journals the e-stop and waits.
   */
  estop(): void {
    const a = this.active;
    if (!a || a.state !== 'working') return;
    a.estopped = true;
    a.safety?.abort();
    a.operator.estop();
    this.changed();
  }

  /** Shutdown: the rollout stops (the rig holds, then damps), a waiting prompt is withdrawn; the session stays resumable. */
  async close(): Promise<void> {
    const a = this.active;
    if (!a) return;
    a.abort.abort();
    a.operator.withdraw();
    await a.done;
  }

  private refuseRepeat(requestId: string | undefined): void {
    const done = requestId === undefined ? undefined : this.requests.get(requestId);
    if (done !== undefined)
      throw new ApiRefusal(409, `This request was already received and ${done}; it was not done twice.`);
  }

  private remember(requestId: string | undefined, what: string): void {
    if (requestId === undefined) return;
    this.requests.set(requestId, what);
    if (this.requests.size > REMEMBERED_REQUESTS) this.requests.delete(this.requests.keys().next().value!);
  }

  /** One start or resume at a time: a double click's second request finds the first still opening its policies. */
  private async exclusively<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (this.opening !== undefined)
      throw new ApiRefusal(409, `The station is already ${this.opening}; this second request was not acted on.`);
    this.opening = what;
    try {
      return await work();
    } finally {
      this.opening = undefined;
    }
  }

  private refuseIfWorking(): void {
    if (this.working())
      throw new RigBusyError(
        `Session ${this.active!.id} is running; stop it for now (pause, then stop) before starting another.`,
      );
  }

  private async openRunner(
    plan: SessionPlan,
    set: LayoutSet,
  ): Promise<SessionRolloutRunner & { close(): Promise<void>; readonly takeover?: TakeoverControl }> {
    // The runner's lines go to the session's operator once it exists.
    return this.parts.openRunner(plan, set, (line) => this.active?.operator.say(line));
  }

  private changed(): void {
    this.publish(this.view());
  }

  private begin(
    id: number,
    plan: SessionPlan,
    set: LayoutSet,
    operatorName: string,
    runner: SessionRolloutRunner & { close(): Promise<void>; readonly takeover?: TakeoverControl },
    breakEveryS: number,
  ): SessionView {
    const operator = new BrowserOperator(operatorName, () => this.changed());
    const a: Active = {
      id,
      plan,
      operator,
      breakEveryS,
      running: null,
      estopped: false,
      state: 'working',
      stoppedBecause: null,
      done: Promise.resolve(),
      abort: new AbortController(),
      safety: undefined,
      ...(runner.takeover ? { takeover: runner.takeover } : {}),
    };
    this.active = a;
    const interlocks: SessionGate = {
      armed: () => {
        operator.settle();
        a.safety = new AbortController();
        a.estopped = false;
        return a.safety.signal;
      },
      blocked: () => this.parts.blocked?.(),
    };
    const counted: SessionRolloutRunner = {
      run: async (r) => {
        operator.settle();
        a.running = { startedAt: new Date(this.now()).toISOString(), label: r.label, seconds: r.episodeSeconds };
        this.changed();
        try {
          return await runner.run(r);
        } finally {
          a.running = null;
          this.changed();
        }
      },
    };
    // A session started to stop early does so after a resume too (its first journal row says so).
    const stopEarly =
      plan.analysis !== undefined &&
      this.store.listSessionJournal(id).some((e) => e.action === JOURNAL.sessionStarted && e.detail.stopEarly === true);
    a.done = runSession({
      store: this.store,
      sessionId: id,
      plan,
      set,
      task: getTask(set.task),
      runner: counted,
      operator,
      interlocks,
      ...(this.parts.projector ? { projector: this.parts.projector } : {}),
      ...(this.parts.placement ? { placement: this.parts.placement } : {}),
      signal: a.abort.signal,
      breakEveryS,
      stopEarly,
    })
      .then(
        (r) => {
          a.state = r.ended ? 'ended' : 'stopped';
          a.stoppedBecause = r.stoppedBecause ?? null;
        },
        (e: unknown) => {
          a.state = 'stopped';
          a.stoppedBecause =
            e instanceof OperatorGone
              ? 'the station stopped'
              : `the session failed: ${(e as Error).message ?? String(e)}`;
          // A shutdown that withdrew the operator's prompt stops the session knowingly: journalled, so it is not shown as interrupted.
          if (e instanceof OperatorGone)
            this.store.appendSessionJournal({
              sessionId: id,
              action: JOURNAL.stopped,
              detail: { reason: 'the station was shut down' },
            });
        },
      )
      .finally(async () => {
        operator.settle();
        await runner.close();
        this.changed();
      });
    this.changed();
    return this.view()!;
  }
}
