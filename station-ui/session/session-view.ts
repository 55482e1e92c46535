/**
 * The Session view: plan and start an eval session (or resume one), then work it — the current
 * rollout card (layout from above, the state-machine step, one big button per step), scoring in
 * the task's terms, progress / ETA / break, the E-stop and interlocks, the engine's lines. The
 * station's session engine asks; this view only shows its prompt and sends the answer. An answer
 * the engine refuses (an impossible count) comes back as its one sentence and nothing is stored.
 */
import { PROJECTOR_PAGE_PATH, type ProjectorState, type LayoutSetSummary, type ScoringForm, SessionAnswer, SessionPrompt, SessionSummary, type SessionView as SessionState, type SessionResults, type StationInfo } from '../../src/server/api-types.js';
import { api } from '../api.js';
import { loadApiImage, stationLink } from '../token.js';
import { agoEl, clear, h, stamp } from '../dom.js';
import type { SessionKey } from '../keys.js';
import { splitReason } from '../words.js';
import { analysisWords, type SessionAnalysis } from './analysis-words.js';

export interface SessionViewHooks {
  report(message: string, error?: boolean): void;
  /** Stop the running rollout (S): it ends aborted and is offered for redo. */
  stop(): void;
  /** Show a stored rollout (its detail and recording) on the Rollouts page. */
  openRollout?(id: number): void;
}

const STEPS: readonly { readonly phase: readonly string[]; readonly words: string }[] = [
  { phase: ['place'], words: 'Place' },
  { phase: ['running'], words: 'Policy runs' },
  { phase: ['score'], words: 'Score' },
  { phase: ['reset', 'decide'], words: 'Clear the table' },
];

const min = (s: number): string => (s < 90 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`);

export class SessionView {
  private readonly planPanel = h('div', { class: 'panel', id: 'session-plan' });
  private readonly card = h('div', { class: 'panel session-card', id: 'session-card' });
  private readonly setSelect = h('select', { id: 'session-layout-set' });
  private readonly policiesInput = h('input', { id: 'session-policies', autocomplete: 'off', value: 'code:hold,code:bottles-in-the-bin', placeholder: 'onnx:model-a.onnx, ws://policy-server:8000' });
  private readonly perLayoutInput = h('input', { id: 'session-per-layout', type: 'number', min: 1, value: 1 });
  private readonly blindInput = h('input', { id: 'session-blind', type: 'checkbox', checked: true });
  private readonly minutesInput = h('input', { id: 'session-minutes', type: 'number', min: 1, value: 75 });
  private readonly secondsInput = h('input', { id: 'session-seconds', type: 'number', min: 0.1, step: 0.1 });
  private readonly seedInput = h('input', { id: 'session-seed', type: 'number', min: 0, placeholder: 'new at random' });
  private readonly operatorInput = h('input', { id: 'session-operator', autocomplete: 'off', placeholder: 'your name (stored with each score)' });
  private readonly preregisterInput = h('input', { id: 'session-preregister', type: 'checkbox' });
  private readonly alphaInput = h('input', { id: 'session-alpha', type: 'number', min: 0.01, max: 0.49, step: 0.01, value: 0.05, 'aria-label': 'α (error rate)' });
  private readonly stopEarlyInput = h('input', { id: 'session-stop-early', type: 'checkbox' });
  private readonly sessionsList = h('div', { id: 'session-list' });
  private readonly sessionsPanel = h('div', { class: 'panel', id: 'session-store' }, h('h2', {}, 'Sessions in the store'), this.sessionsList);
  private readonly sideLive = h('div');
  private readonly resultsPanel = h('div', { class: 'panel', id: 'session-results', hidden: true });
  /** The pre-registered A/B analysis after every scored pair (sessions planned with one). */
  private readonly analysisPanel = h('div', { class: 'panel', id: 'session-analysis', hidden: true, 'aria-live': 'polite' });
  /** Sessions a crash left open (not stopped for now): flagged above everything, with resume and end. */
  private readonly interruptedPanel = h('div', { id: 'session-interrupted' });
  private readonly side = h('div', { id: 'session-side' }, this.sideLive, this.sessionsPanel);
  /** The session whose results are shown, and the scored count they were fetched at (refetched when it changes). */
  private resultsOf: { id: number; scored: number } | undefined;
  private state: SessionState | null = null;
  private sets: LayoutSetSummary[] = [];
  /** The count being entered on the score step, kept across redraws of the same prompt. */
  private count = 0;
  private countPrompt = -1;
  private ends = new Map<string, { region?: string; upright?: boolean; offTable?: boolean }>();
  /** The note and redo reason being typed: kept across redraws (every event redraws the card). */
  private note = '';
  /** Scoring object by object rather than by a count (the count is then not shown, so it cannot be mistaken for the score). */
  private objectWise = false;
  private reason = '';
  /**
   * The prompt an answer is on its way for: a second press on it is dropped (one click, one
   * answer). The engine's next prompt can arrive on the event stream before that answer's reply
   * does — a press on the new prompt is then for it, and is sent.
   */
  private answering: number | undefined;
  /** The engine's refusal of the last answer (shown until an answer is taken). */
  private refusal = '';
  private tick: ReturnType<typeof setInterval> | undefined;
  private projector: ProjectorState | null = null;

  constructor(
    root: HTMLElement,
    private readonly hooks: SessionViewHooks,
  ) {
    root.append(h('div', { class: 'grid session-grid' }, h('div', {}, this.interruptedPanel, this.card, this.analysisPanel, this.resultsPanel, this.planPanel), this.side));
    this.buildPlanForm();
    this.show(null);
  }

  /** The policies field starts with code policies only where they can run (the emulated cell): elsewhere it starts empty. */
  setInfo(info: StationInfo): void {
    if (!info.policySpecs.some((x) => x.startsWith('code:')) && this.policiesInput.value === this.policiesInput.defaultValue) this.policiesInput.value = '';
  }

  async reload(): Promise<void> {
    const [sets, sessions] = await Promise.all([api.layoutSets(), api.sessions()]);
    this.sets = sets;
    const keep = this.setSelect.value;
    clear(this.setSelect);
    for (const s of sets) this.setSelect.append(h('option', { value: s.sha256 }, `${s.task} v${s.version} · ${s.layoutCount} layouts · ${s.sha256.slice(0, 10)}`));
    if (sets.length === 0) this.setSelect.append(h('option', { value: '' }, 'No layout sets yet: sample one on Rollouts'));
    if (keep && sets.some((s) => s.sha256 === keep)) this.setSelect.value = keep;
    if (!this.secondsInput.value) this.secondsInput.value = String(sets.find((s) => s.sha256 === this.setSelect.value)?.episodeSeconds ?? '');
    this.showSessions(sessions);
  }

  /** The session's state from the event stream (null: none on this station since it started). */
  show(s: SessionState | null): void {
    // An answer's HTTP reply can arrive after the events that followed it: the newer view wins.
    if (s && this.state && s.id === this.state.id && s.seq < this.state.seq) return;
    this.state = s;
    if (s?.prompt?.kind === 'score' && s.prompt.id !== this.countPrompt) {
      this.countPrompt = s.prompt.id;
      this.count = 0;
      this.ends = new Map();
      this.note = '';
      this.reason = '';
      this.objectWise = false;
    }
    const working = s !== null && s.phase !== 'stopped' && s.phase !== 'ended';
    this.planPanel.hidden = working;
    this.interruptedPanel.hidden = working;
    // The same question while the operator types in it: leave the card (and the caret) alone.
    const typing = document.activeElement instanceof HTMLInputElement && this.card.contains(document.activeElement);
    const samePrompt = s?.prompt?.id !== undefined && s.prompt.id === this.drawnPrompt;
    if (!(typing && samePrompt)) this.drawCard();
    this.drawSide();
    if (s && (this.resultsOf?.id !== s.id || this.resultsOf.scored !== s.progress.scored || (s.phase === 'ended' && this.drawnPhase !== 'ended'))) this.showResults(s.id, s.progress.scored);
    // The running rollout's bar moves with the wall clock; nothing else redraws on a timer.
    if (s && (s.phase === 'ended' || s.phase === 'stopped') && this.drawnPhase !== s.phase) void this.reload().catch(() => {});
    this.drawnPhase = s?.phase;
    clearInterval(this.tick);
    if (s?.phase === 'running') this.tick = setInterval(() => this.drawCard(), 500);
  }

  /** The station is gone: the running rollout's bar stops moving (it would show time passing on a rollout nobody runs). */
  freeze(): void {
    clearInterval(this.tick);
  }

  /** What the projector shows (the event stream's projector events). */
  showProjector(p: ProjectorState): void {
    this.projector = p;
    this.drawSide();
  }

  /** A step key (keys.ts) on this page. */
  key(k: SessionKey): void {
    const p = this.state?.prompt;
    if (k === 'stop-for-now') {
      if (p?.kind === 'place' || p?.kind === 'paused') this.send({ action: 'stop' });
      return;
    }
    if (!p) return;
    if (k === 'go') {
      if (p.kind === 'place') this.send({ action: 'confirm' });
      else if (p.kind === 'score') this.saveScore(p.scoring);
      else if (p.kind === 'reset') this.send({ action: 'done' });
      else if (p.kind === 'offer-redo') this.send({ action: 'redo' });
      else this.send({ action: 'carry-on' });
    } else if (k === 'pause' && p.kind === 'place') this.send({ action: 'pause' });
    else if (k === 'close' && p.kind === 'offer-redo') this.send({ action: 'close' });
    else if (k === 'redo' && p.kind === 'score') document.getElementById('session-redo-reason')?.focus();
    else if ((k === 'count-up' || k === 'count-down') && p.kind === 'score') {
      const n = this.state?.step?.objects.length ?? 0;
      this.count = Math.max(0, Math.min(n, this.count + (k === 'count-up' ? 1 : -1)));
      this.drawCard();
    }
  }

  private send(answer: SessionAnswer): void {
    const p = this.state?.prompt;
    if (!p || this.answering === p.id) return;
    const sent = p.id;
    this.answering = sent;
    api.sessionAnswer({ prompt: p.id, answer }).then(
      (r) => {
        if (this.answering === sent) this.answering = undefined;
        this.refusal = '';
        this.hooks.report(answer.action === 'score' || answer.action === 'score-count' ? 'Score stored.' : '');
        this.show(r.session);
      },
      (e: Error) => {
        if (this.answering === sent) this.answering = undefined;
        this.refusal = e.message;
        this.hooks.report(e.message, true);
        this.drawCard();
      },
    );
  }

  private saveScore(f: ScoringForm): void {
    const note = this.note.trim();
    if (f.count !== null && !this.objectWise) {
      this.send({ action: 'score-count', count: this.count, ...(note ? { note } : {}) });
      return;
    }
    const endStates = f.objects.map((o) => ({ id: o.id, ...(this.ends.get(o.id) ?? (f.regions.length === 0 ? { upright: false } : {})) }));
    this.send({ action: 'score', endStates, ...(note ? { note } : {}) });
  }

  private buildPlanForm(): void {
    const start = h('button', { class: 'btn primary big-btn', type: 'submit', id: 'session-start' }, 'Start the session');
    const form = h(
      'form',
      { class: 'run', id: 'session-form' },
      h('label', { for: 'session-layout-set' }, 'Layout set'),
      this.setSelect,
      h('label', { for: 'session-policies' }, 'Policies'),
      this.policiesInput,
      h('div', { class: 'hint' }, 'comma-separated specs: code:NAME, onnx:path.onnx, ws://host:port'),
      h('label', { for: 'session-per-layout' }, 'Per layout'),
      this.perLayoutInput,
      h('label', { for: 'session-blind' }, 'Blind'),
      h('div', { class: 'check' }, this.blindInput, h('span', { class: 'muted' }, 'show "policy A", "policy B" — never the specs — until the session ends')),
      h('label', { for: 'session-minutes' }, 'Minutes'),
      this.minutesInput,
      h('label', { for: 'session-seconds' }, 'Episode s'),
      this.secondsInput,
      h('label', { for: 'session-seed' }, 'Seed'),
      this.seedInput,
      h('label', { for: 'session-operator' }, 'Operator'),
      this.operatorInput,
      h('label', { for: 'session-preregister' }, 'A/B analysis'),
      h('div', { class: 'check' }, this.preregisterInput, h('span', { class: 'muted' }, 'pre-register it: task progress at α'), this.alphaInput),
      h('div', { class: 'hint' }, 'two policies; fixed before the first rollout, then after every pair this page says whether you may stop'),
      h('label', { for: 'session-stop-early' }, 'Stop early'),
      h('div', { class: 'check' }, this.stopEarlyInput, h('span', { class: 'muted' }, 'end the session by itself once the pre-registered rule holds')),
      h('span'),
      h('div', { class: 'actions' }, start),
    );
    form.onsubmit = (e) => {
      e.preventDefault();
      // One click, one session: the button stays off until the answer, and the request's id makes a
      // repeat (a retried request) a refusal on the station rather than a second session.
      if (start.disabled) return;
      start.disabled = true;
      const seconds = Number(this.secondsInput.value);
      api
        .startSession({
          requestId: crypto.randomUUID(),
          layoutSet: this.setSelect.value,
          policies: this.policiesInput.value.split(',').map((x) => x.trim()).filter((x) => x !== ''),
          perLayout: Number(this.perLayoutInput.value),
          blind: this.blindInput.checked,
          minutes: Number(this.minutesInput.value),
          ...(this.secondsInput.value ? { seconds } : {}),
          // Empty: the station draws a fresh seed, so two sessions of the same policies get different letters.
          ...(this.seedInput.value.trim() !== '' ? { seed: Number(this.seedInput.value) } : {}),
          ...(this.operatorInput.value.trim() ? { operator: this.operatorInput.value.trim() } : {}),
          // Stopping early needs the analysis it stops by: ticking it pre-registers one.
          ...(this.preregisterInput.checked || this.stopEarlyInput.checked ? { analysis: { alpha: Number(this.alphaInput.value) } } : {}),
          ...(this.stopEarlyInput.checked ? { stopEarly: true } : {}),
        })
        .then(
          (s) => {
            this.hooks.report(`Session ${s.id} started: ${s.progress.total} rollouts of ${s.labels.join(', ')}.`);
            this.show(s);
          },
          (err: Error) => this.hooks.report(err.message, true),
        )
        .finally(() => (start.disabled = false));
    };
    this.planPanel.append(h('h2', {}, 'Plan a session'), form);
  }

  /** A Resume button for session `id`: one request id per button, so a double click resumes once. */
  private resumeButton(id: number, words: string, primary = false): HTMLButtonElement {
    const resume = h('button', { class: primary ? 'btn primary big-btn' : 'btn', type: 'button', 'data-action': 'resume' }, words);
    const requestId = crypto.randomUUID();
    resume.onclick = () => {
      if (resume.disabled) return;
      resume.disabled = true;
      api
        .resumeSession(id, requestId)
        .then(
          (v) => {
            this.hooks.report(`Session ${id} resumed.`);
            this.show(v);
            void this.reload().catch(() => {});
          },
          (e: Error) => this.hooks.report(e.message, true),
        )
        .finally(() => (resume.disabled = false));
    };
    return resume;
  }

  /** Open sessions a crash cut off, flagged with where each was; hidden while a session is worked. */
  private showInterrupted(list: SessionSummary[]): void {
    clear(this.interruptedPanel);
    const working = this.state !== null && this.state.phase !== 'stopped' && this.state.phase !== 'ended';
    const cut = working ? [] : list.filter((s) => s.endedAt === null && s.interrupted !== null);
    for (const s of cut) {
      const box = h(
        'div',
        { class: 'panel interrupted', 'data-session': s.id, role: 'alert' },
        h('div', { class: 'big' }, `Session ${s.id} was interrupted`),
        h('p', {}, `The station stopped without closing it (a crash, a kill or a power cut); its last step was journalled at ${stamp(s.interrupted!.at)}. ${s.interrupted!.words} Every score stored before is kept (${s.scored} of ${s.rollouts}).`),
        h('p', { class: 'muted' }, `${s.task} · ${s.labels.join(' vs ')}${s.blind ? ' (blind)' : ''}`),
      );
      const end = h('button', { class: 'btn', type: 'button', 'data-action': 'end' }, 'End it…');
      const actions = h('div', { class: 'actions' }, this.resumeButton(s.id, `Resume session ${s.id}`, true), end);
      end.onclick = () => this.askEnd(actions, s.id);
      box.append(actions);
      this.interruptedPanel.append(box);
    }
  }

  private showSessions(list: SessionSummary[]): void {
    this.showInterrupted(list);
    clear(this.sessionsList);
    if (list.length === 0) this.sessionsList.append(h('p', { class: 'muted' }, 'None yet.'));
    for (const s of list.slice(0, 8)) {
      const row = h('div', { class: 'session-row', 'data-session': s.id }, h('span', { class: 'num' }, `#${s.id}`), h('span', {}, `${s.task} · ${s.labels.join(' vs ')} · ${s.done}/${s.rollouts} done · `, agoEl(s.startedAt)));
      if (s.endedAt === null) {
        if (s.interrupted) row.append(h('span', { class: 'pill bad', title: s.interrupted.words }, 'interrupted'));
        const resume = this.resumeButton(s.id, 'Resume');
        const results = h('button', { class: 'btn', type: 'button', 'data-action': 'results' }, 'Results');
        results.onclick = () => this.showResults(s.id, s.done);
        row.append(results);
        // An open session that will not be finished (an orphan, a plan gone wrong) is ended here, with a reason.
        const end = h('button', { class: 'btn', type: 'button', 'data-action': 'end' }, 'End…');
        end.onclick = () => this.askEnd(row, s.id);
        row.append(resume, end);
      } else {
        const results = h('button', { class: 'btn', type: 'button', 'data-action': 'results' }, 'Results');
        results.onclick = () => this.showResults(s.id, s.done);
        row.append(h('span', { class: 'pill idle' }, 'ended'), results);
      }
      this.sessionsList.append(row);
    }
  }

  /** Fetches and draws a session's results (per policy and tier with intervals, the A/B verdict, the key once ended). */
  private showResults(id: number, scored: number): void {
    this.resultsOf = { id, scored };
    api.sessionResults(id).then(
      (r) => {
        if (this.resultsOf?.id !== id) return;
        drawResults(this.resultsPanel, id, r, this.hooks.openRollout);
        drawAnalysis(this.analysisPanel, id, r);
      },
      (e: Error) => this.hooks.report(e.message, true),
    );
  }

  /** Asks for the reason in the row itself (no modal: nothing may block an e-stop), then ends the session. */
  private askEnd(row: HTMLElement, id: number): void {
    if (row.querySelector('.end-reason')) return;
    const reason = h('input', { class: 'end-reason', autocomplete: 'off', placeholder: 'why end it here? (journalled)', 'aria-label': `Why end session ${id}` });
    const confirm = h('button', { class: 'btn', type: 'button', 'data-action': 'confirm-end' }, 'End session');
    const send = (): void => {
      api.endSession(id, reason.value).then(
        () => {
          this.hooks.report(`Session ${id} ended: ${reason.value.trim()}.`);
          void this.reload();
        },
        (e: Error) => this.hooks.report(e.message, true),
      );
    };
    confirm.onclick = send;
    reason.onkeydown = (e) => {
      if (e.key === 'Enter') send();
    };
    row.append(reason, confirm);
    reason.focus();
  }

  private drawnPrompt: number | undefined;
  private drawnPhase: string | undefined;

  private drawCard(): void {
    clear(this.card);
    const s = this.state;
    this.drawnPrompt = s?.prompt?.id;
    this.card.hidden = s === null;
    if (!s) return;
    // An ended session has no current rollout: the card names the session, not a rollout or a policy.
    const st = s.phase === 'ended' ? null : s.step;
    this.card.setAttribute('data-phase', s.phase);
    this.card.append(
      h(
        'div',
        { class: 'card-head' },
        h('div', { class: 'card-title', id: 'session-title' }, st ? `Rollout ${st.slot + 1} of ${st.total}` : s.phase === 'ended' ? `Session ${s.id} ended` : `Session ${s.id}`),
        st ? h('div', { class: 'label-pill', id: 'session-label', title: s.blind ? 'Blind session: which policy this is stays hidden until the session ends' : '' }, st.label) : null,
        st ? h('div', { class: 'muted' }, `layout ${st.layoutIndex}${st.tier >= 0 ? ` · tier ${st.tier}` : ''}${st.attempt > 0 ? ` · redo ${st.attempt}` : ''}`) : null,
      ),
    );
    // The state machine's steps, the current one marked in words and weight (not colour alone).
    const over = s.phase === 'ended' || s.phase === 'stopped';
    if (!over) this.card.append(
      h(
        'ol',
        { class: 'steps', id: 'session-steps' },
        ...STEPS.map((x) => {
          const here = x.phase.includes(s.phase);
          return h('li', { class: here ? 'here' : '', 'aria-current': here ? 'step' : undefined }, here ? `▶ ${x.words}` : x.words);
        }),
      ),
    );
    const body = h('div', { class: `card-body${over ? ' no-image' : ''}` });
    if (st && !over) {
      const img = h('img', { class: 'top-view', id: 'session-top-view', alt: `Layout ${st.layoutIndex} from above` });
      // Fetched with the token (an <img src> cannot send it); a failed load leaves the alt text.
      loadApiImage(img, `/api/layout-sets/${s.layoutSetSha256}/layouts/${st.layoutIndex}/top-view.svg`, true).catch(() => {});
      body.append(img);
    }
    body.append(this.stepPanel(s));
    this.card.append(body);
  }

  private stepPanel(s: SessionState): HTMLElement {
    const box = h('div', { class: 'step-panel', id: 'session-step' });
    const p = s.prompt;
    const big = (id: string, text: string, key: string, answer: SessionAnswer | (() => void), cls = 'primary'): HTMLElement => {
      const b = h('button', { class: `btn ${cls} big-btn`, id, type: 'button' }, text, h('kbd', {}, key));
      b.onclick = () => (typeof answer === 'function' ? answer() : this.send(answer));
      return b;
    };
    box.append(h('div', { class: 'refusal', id: 'session-refusal', role: 'alert' }, this.refusal));
    if (s.phase === 'ended') {
      box.append(
        h('p', { class: 'lead' }, `${s.progress.scored} of ${s.progress.total} rollouts scored. The results${s.blind ? ' and the blind key' : ''} are below.`),
        h('details', { class: 'tech' }, h('summary', {}, 'details'), h('p', {}, `For analysis outside the station, export it in a terminal: tandem session export ${s.id} --json`)),
      );
    } else if (s.phase === 'stopped') {
      box.append(h('div', { class: 'big' }, 'Stopped for now'), h('p', {}, `${s.stoppedBecause ?? ''}. Every score is kept; resume it from the list below.`));
    } else if (s.phase === 'running' && s.running) {
      const t = (Date.now() - Date.parse(s.running.startedAt)) / 1000;
      const pct = Math.min(100, (100 * t) / s.running.seconds);
      const bar = h('div');
      bar.style.width = `${pct.toFixed(1)}%`;
      box.append(
        h('div', { class: 'big' }, `${s.running.label} is running`),
        h('p', { class: 'muted' }, this.projector?.configured ? 'Hands off the table. The projector is black.' : 'Hands off the table.'),
        h('div', { class: 'progress', role: 'progressbar', 'aria-valuenow': Math.round(pct) }, bar),
        h('div', {}, `${Math.min(t, s.running.seconds).toFixed(0)} of ${s.running.seconds} s`),
        h('div', { class: 'actions' }, big('session-abort', 'Abort rollout', 'S', () => this.hooks.stop(), 'stop')),
      );
    } else if (!p) {
      box.append(h('div', { class: 'big muted' }, 'One moment…'), h('p', { class: 'muted' }, 'The station is storing the last step.'));
    } else if (p.kind === 'place') {
      const objects = s.step?.objects ?? [];
      // The placement check refused the last placement: the object to move is named and marked, with what was measured.
      const refused = p.placement;
      const measured = (id: string): string => {
        const m = refused?.objects.find((x) => x.id === id);
        if (!m) return '';
        return m.errorMm === null ? ' — not seen on its outline' : ` — ${m.errorMm.toFixed(1)} mm${m.errorDeg !== undefined ? `, ${m.errorDeg.toFixed(1)}°` : ''} off`;
      };
      box.append(
        h('div', { class: 'big' }, refused ? 'Place it again' : 'Place the objects'),
        ...(refused ? [h('div', { class: 'reason bad', id: 'session-placement', role: 'alert' }, h('div', { class: 'reason-head' }, 'Not started — the placement check:'), h('div', {}, refused.sentence))] : []),
        h(
          'ul',
          { class: 'objects' },
          ...objects.map((o) => h('li', refused?.object === o.id ? { class: 'misplaced' } : {}, `${o.id}`, h('span', { class: 'muted' }, ` ${o.posture}`), refused ? h('span', { class: refused.object === o.id ? 'bad' : 'muted' }, measured(o.id)) : '')),
        ),
        h('div', { class: 'actions' }, big('session-confirm', 'Placed — start the policy', 'Enter', { action: 'confirm' })),
        h('div', { class: 'actions secondary' }, big('session-pause', 'Pause', 'P', { action: 'pause' }, ''), big('session-stop', 'Stop for now', 'Q', { action: 'stop' }, '')),
      );
    } else if (p.kind === 'score') box.append(this.scoreForm(s, p));
    else if (p.kind === 'reset') {
      box.append(h('div', { class: 'big' }, 'Clear the table'), h('p', {}, 'Take every object off the table for the next layout.'), h('div', { class: 'actions' }, big('session-reset-done', 'Table is clear', 'Enter', { action: 'done' })));
    } else if (p.kind === 'offer-redo') {
      box.append(
        h('div', { class: 'big' }, 'This rollout has no score'),
        this.why(p.why),
        h('div', { class: 'actions' }, big('session-redo-yes', 'Redo it', 'Enter', { action: 'redo' }), big('session-redo-close', 'Close it unscored', 'N', { action: 'close' }, '')),
      );
    } else if (p.kind === 'paused') {
      box.append(
        h('div', { class: 'big' }, s.safety.estopped ? 'E-stopped — paused' : 'Paused'),
        h('p', {}, s.safety.estopped ? 'The E-stop stopped the arms. Check the cell — and release the E-stop button if one was pressed — before you carry on.' : 'Nothing moves while paused.'),
        h('div', { class: 'actions' }, big('session-carry-on', 'Carry on', 'Enter', { action: 'carry-on' }), big('session-stop', 'Stop for now', 'Q', { action: 'stop' }, '')),
      );
    } else if (p.kind === 'break') {
      box.append(h('div', { class: 'big' }, 'Time for a break'), h('p', {}, 'Step away for a few minutes; the session waits.'), h('div', { class: 'actions' }, big('session-carry-on', "I'm back", 'Enter', { action: 'carry-on' })));
    }
    return box;
  }

  /** Why a rollout has no score: fourteen motors that stopped answering are one line, not fourteen. */
  private why(w: { kind: string; reason: string }): HTMLElement {
    const { head, lines } = splitReason(w.reason);
    const words = { 'policy-failed': 'The policy failed', 'rig-fault': 'The rig faulted', interrupted: 'Cut off', abandoned: 'Aborted by the operator', estopped: 'E-stopped', stopped: 'Stopped by the operator', 'not-run': 'It could not run' }[w.kind] ?? w.kind;
    // A reason that only repeats the heading ("Stopped by the operator: stopped by the operator") is said once.
    const same = !head && lines.length === 1 && lines[0].replace(/\.$/, '').toLowerCase() === words.toLowerCase();
    if (same) return h('div', { class: 'reason bad', id: 'session-why' }, h('div', { class: 'reason-head' }, `${words}.`));
    return h('div', { class: 'reason bad', id: 'session-why' }, h('div', { class: 'reason-head' }, `${words}${head ? ` — ${head}` : ''}:`), lines.length === 1 ? h('div', {}, lines[0]) : h('ul', {}, ...lines.map((l) => h('li', {}, l))));
  }

  private scoreForm(s: SessionState, p: Extract<SessionPrompt, { kind: 'score' }>): HTMLElement {
    const f = p.scoring;
    const n = f.objects.length;
    // novalidate: the engine's own check (the terminal operator's too) says what a count can be, in one sentence.
    const form = h('form', { id: 'session-score-form', class: 'score-form', novalidate: true });
    form.onsubmit = (e) => {
      e.preventDefault();
      this.saveScore(f);
    };
    const ran = p.run.status === 'valid' ? `The episode ran its ${s.episodeSeconds} s.` : `It ended early: ${p.run.reason ?? p.run.status}.`;
    form.append(h('div', { class: 'big' }, 'Score the table'), h('p', { class: 'muted' }, `${ran} Rollout ${p.run.rolloutId}.`));
    const objectWise = f.count === null || this.objectWise;
    if (f.count && !objectWise) {
      const what = f.count.kind === 'region' ? `in the ${f.count.region}` : 'upright';
      const input = h('input', { id: 'session-count', type: 'number', min: 0, max: n, step: 1, value: this.count, inputmode: 'numeric' });
      input.oninput = () => (this.count = Number(input.value));
      const minus = h('button', { class: 'btn count-btn', type: 'button', id: 'session-count-down', 'aria-label': 'one fewer' }, '−');
      const plus = h('button', { class: 'btn count-btn', type: 'button', id: 'session-count-up', 'aria-label': 'one more' }, '+');
      minus.onclick = () => this.key('count-down');
      plus.onclick = () => this.key('count-up');
      form.append(h('label', { for: 'session-count', class: 'count-q' }, n === 1 ? `Is the object ${what}? Count it: 0 or 1.` : `How many of the ${n} objects are ${what}?`), h('div', { class: 'count-row' }, minus, input, plus, h('span', { class: 'muted' }, `of ${n}  (↑ ↓)`)));
    }
    // Object by object: the task's own terms (regions, or upright), plus off the table.
    const rows = f.objects.map((o) => {
      const choices: { label: string; end: { region?: string; upright?: boolean; offTable?: boolean } }[] =
        f.regions.length > 0
          ? [...f.regions.map((r) => ({ label: `in ${r}`, end: { region: r } })), { label: 'elsewhere', end: {} }, { label: 'off the table', end: { offTable: true } }]
          : [
              { label: 'upright', end: { upright: true } },
              { label: 'not upright', end: { upright: false } },
              { label: 'off the table', end: { offTable: true } },
            ];
      const cur = JSON.stringify(this.ends.get(o.id) ?? choices[choices.length - 2].end);
      const group = h('div', { class: 'choice-row', role: 'radiogroup', 'aria-label': o.id });
      for (const c of choices) {
        const on = JSON.stringify(c.end) === cur;
        const b = h('button', { type: 'button', class: `choice${on ? ' on' : ''}`, 'aria-pressed': on ? 'true' : 'false', 'data-object': o.id, 'data-choice': c.label }, on ? `✓ ${c.label}` : c.label);
        b.onclick = () => {
          this.ends.set(o.id, c.end);
          this.drawCard();
        };
        group.append(b);
      }
      return h('div', { class: 'object-score' }, h('span', { class: 'object-id' }, o.id), group);
    });
    if (f.count) {
      const toggle = h('button', { type: 'button', class: 'linkish', id: 'session-objects-toggle' }, objectWise ? '← Score by a count instead' : 'Object by object instead →');
      toggle.onclick = () => {
        this.objectWise = !this.objectWise;
        this.drawCard();
      };
      form.append(toggle);
    }
    if (objectWise) form.append(h('div', { id: 'session-objects', class: 'objects-score' }, ...rows));
    const noteInput = h('input', { id: 'session-note', autocomplete: 'off', value: this.note });
    noteInput.oninput = () => (this.note = noteInput.value);
    form.append(h('label', { for: 'session-note', class: 'muted' }, 'Note (optional)'), noteInput);
    const save = h('button', { class: 'btn primary big-btn', type: 'submit', id: 'session-save-score' }, 'Save score', h('kbd', {}, 'Enter'));
    const reason = h('input', { id: 'session-redo-reason', autocomplete: 'off', value: this.reason, placeholder: 'why redo it? (e.g. a bottle fell before the start)' });
    reason.oninput = () => (this.reason = reason.value);
    const redo = h('button', { class: 'btn', type: 'button', id: 'session-redo' }, 'Abort & redo', h('kbd', {}, 'X'));
    redo.onclick = () => this.send({ action: 'redo', reason: reason.value });
    reason.onkeydown = (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.send({ action: 'redo', reason: reason.value });
      }
    };
    form.append(h('div', { class: 'actions' }, save), h('div', { class: 'redo-row' }, reason, redo));
    return form;
  }

  private projectorPanel(): HTMLElement {
    const p = this.projector;
    // In the Electron shell the projector has its own window; in a browser, a page on the projector's display.
    const shell = 'tandemShell' in window;
    const panel = h('div', { class: 'panel', id: 'session-projector' }, h('h2', {}, 'Projector'));
    if (!p) {
      panel.append(h('p', { class: 'muted' }, 'connecting…'));
      return panel;
    }
    if (!p.configured) {
      // What to do about it is a terminal's job: a plain sentence first, the commands behind "details".
      panel.append(
        h('p', { id: 'session-projector-now' }, 'No projector is set up: place each layout from its picture on the card.'),
        h('details', { class: 'tech' }, h('summary', {}, 'details'), h('p', {}, p.description)),
      );
      return panel;
    }
    const now = p.showing === 'layout' ? `Showing layout ${p.layoutIndex ?? '?'}'s footprints on the table.` : p.showing === 'black' ? 'Black: the arms may move.' : 'Nothing shown yet (black).';
    panel.append(
      h('p', { id: 'session-projector-now' }, now),
      ...(p.problem ? [h('ul', { class: 'faults' }, h('li', {}, p.problem))] : []),
      ...(!shell ? [h('p', {}, h('a', { href: stationLink(PROJECTOR_PAGE_PATH), target: '_blank', rel: 'noopener', id: 'open-projector' }, 'Open the projector page'), ' on the projector’s display, full screen (F11).')] : []),
      h('details', { class: 'tech' }, h('summary', {}, 'details'), h('p', {}, p.description)),
    );
    return panel;
  }

  private drawSide(): void {
    clear(this.sideLive);
    const s = this.state;
    // While a session works the picker is not needed; stopped or ended, it is how to resume.
    this.sessionsPanel.hidden = s !== null && s.phase !== 'stopped' && s.phase !== 'ended';
    if (!s) return;
    const pr = s.progress;
    const pct = pr.total > 0 ? (100 * pr.done) / pr.total : 0;
    const bar = h('div');
    bar.style.width = `${pct.toFixed(1)}%`;
    this.sideLive.append(
      h(
        'div',
        { class: 'panel', id: 'session-progress' },
        h('h2', {}, `Session ${s.id} · ${s.task}`),
        h('div', { class: 'big' }, `${pr.done} of ${pr.total} done`),
        h('div', { class: 'progress', role: 'progressbar', 'aria-valuenow': Math.round(pct) }, bar),
        h(
          'dl',
          { class: 'kv' },
          h('dt', {}, 'scored'),
          h('dd', {}, `${pr.scored}${pr.closed ? ` (${pr.closed} closed unscored)` : ''}`),
          h('dt', {}, 'elapsed'),
          h('dd', {}, min(pr.elapsedS)),
          h('dt', {}, 'left'),
          h('dd', { id: 'session-eta' }, `about ${min(pr.etaS)}`),
          h('dt', {}, 'break'),
          h('dd', { id: 'session-break' }, pr.breakInS === null ? '—' : pr.breakInS <= 0 ? 'due after this rollout' : `in ${min(pr.breakInS)}`),
          h('dt', {}, 'policies'),
          h('dd', {}, `${s.labels.join(', ')}${s.blind ? ' (blind)' : ''}`),
        ),
      ),
      h(
        'div',
        { class: 'panel', id: 'session-safety' },
        h('h2', {}, 'Safety'),
        h(
          'ul',
          { class: 'faults' },
          h('li', { class: s.safety.estopped ? '' : 'none' }, s.safety.estopped ? 'E-STOP pressed: the rollout was stopped; check the cell.' : 'E-stop: not pressed (Esc or the right pedal)'),
          h('li', { class: s.safety.interlocks.startsWith('OPEN') ? '' : 'none', id: 'session-interlocks' }, `Interlocks: ${s.safety.interlocks}`),
        ),
      ),
      this.projectorPanel(),
      h('div', { class: 'panel', id: 'session-lines' }, h('h2', {}, 'Log'), h('ul', { class: 'lines' }, ...s.lines.slice(-6).map((l) => h('li', {}, l)))),
    );
  }
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** The Results panel: readable from the desk, printable (Ctrl-P prints this panel alone). */
function drawResults(panel: HTMLElement, id: number, r: SessionResults, openRollout?: (id: number) => void): void {
  clear(panel);
  panel.hidden = false;
  const name = (label: string): string => (r.key?.[label] ? `${label} = ${r.key[label]}` : label);
  // A pre-registered analysis is the session's verdict (its own panel, B − A by the plan's rule): not a second one here.
  const verdict = r.analysis
    ? h('p', { class: 'muted', id: 'session-verdict' }, `The A/B verdict is the pre-registered analysis above (${r.policies[1]?.label ?? 'B'} − ${r.policies[0]?.label ?? 'A'}, by the rule fixed before the first rollout).`)
    : r.verdict && r.verdict.pairs > 0
    ? h('div', { class: `verdict ${r.verdict.decided ? 'decided' : ''}`, id: 'session-verdict' }, h('div', { class: 'big' }, r.verdict.sentence), h('div', { class: 'muted' }, `${r.verdict.pairs} pair${r.verdict.pairs === 1 ? '' : 's'} scored; ${r.policies[0]?.label ?? 'A'} − ${r.policies[1]?.label ?? 'B'} ${r.verdict.meanDifference >= 0 ? '+' : ''}${Number.isFinite(r.verdict.meanDifference) ? r.verdict.meanDifference.toFixed(2) : '—'} (95% anytime-valid bounds ${r.verdict.lower.toFixed(2)} to ${r.verdict.upper.toFixed(2)})`))
    : h('p', { class: 'muted', id: 'session-verdict' }, r.policies.length !== 2 ? 'An A/B verdict needs exactly two policies.' : r.ended ? 'No pair was scored: the session ended with nothing to compare.' : 'No pair scored yet.');
  const table = h('table', { class: 'results' }, h('thead', {}, h('tr', {}, ...['policy', 'tier', 'scored', 'mean progress', '95% interval'].map((t) => h('th', {}, t)))));
  const body = h('tbody');
  for (const p of r.policies) {
    if (p.tiers.length === 0) body.append(h('tr', {}, h('td', {}, name(p.label)), h('td', {}, '—'), h('td', { class: 'num' }, '0'), h('td', {}, '—'), h('td', {}, '—')));
    p.tiers.forEach((t, i) => {
      const all = t.tier === 'all';
      body.append(
        h(
          'tr',
          { class: all ? 'total' : undefined },
          h('td', {}, i === 0 ? name(p.label) : ''),
          h('td', {}, all ? 'all' : `tier ${t.tier}`),
          h('td', { class: 'num' }, String(t.rollouts)),
          h('td', { class: 'num' }, pct(t.meanProgress)),
          h('td', { class: 'num' }, t.layouts > 1 ? `${pct(t.progressInterval.lower)} – ${pct(t.progressInterval.upper)}` : 'one layout: no interval'),
        ),
      );
    });
  }
  table.append(body);
  const key = r.key ? h('dl', { class: 'kv', id: 'session-key' }, ...Object.entries(r.key).flatMap(([label, spec]) => [h('dt', {}, label), h('dd', {}, spec)])) : h('p', { class: 'muted', id: 'session-key' }, 'The blind key is shown once the session has ended.');
  const episodes = h(
    'ul',
    { class: 'lines' },
    ...r.episodes.map((e) => {
      const line = h('li', {}, `rollout ${e.slot + 1} · ${e.label} · layout ${e.layoutIndex} (tier ${e.tier}) · ${pct(e.progress)}`);
      if (e.rolloutId !== null && openRollout) {
        const id = e.rolloutId;
        const open = h('button', { class: 'link', type: 'button', 'data-open-rollout': id }, `open stored rollout ${id}`);
        open.onclick = () => openRollout(id);
        line.append(' · ', open);
      } else if (e.rolloutId !== null) line.append(` · stored as rollout ${e.rolloutId} (Rollouts page)`);
      return line;
    }),
  );
  const print = h('button', { class: 'btn', type: 'button', id: 'session-results-print' }, 'Print');
  print.onclick = () => {
    document.body.classList.add('print-results');
    window.print();
    document.body.classList.remove('print-results');
  };
  panel.append(h('h2', {}, `Results · session ${id}${r.ended ? ' (ended)' : ' (so far)'}`), verdict, table, h('h3', {}, r.blind ? 'Blind key' : 'Policies'), key, h('details', {}, h('summary', {}, `Scored episodes (${r.episodes.length})`), episodes), h('div', { class: 'actions' }, print));
}

/** Where a value of B − A sits on the panel's −1…+1 scale, in percent of its width. */
const along = (x: number): string => `${(((Math.max(-1, Math.min(1, x)) + 1) / 2) * 100).toFixed(1)}%`;

/**
 * The pre-registered analysis panel: the headline in words, the running B − A estimate on a −1…+1
 * scale with its confidence sequence as a bar (zero and the no-difference margin marked), and the
 * numbers. The words carry everything; the picture is for a glance from the desk.
 */
function drawAnalysis(panel: HTMLElement, id: number, r: SessionResults): void {
  clear(panel);
  const x: SessionAnalysis | null = r.analysis;
  panel.hidden = x === null;
  if (!x || r.policies.length !== 2) return;
  const names = { a: r.policies[0].label, b: r.policies[1].label };
  const w = analysisWords(x, names, r.ended);
  panel.setAttribute('data-state', w.state);
  const scale = h('div', { class: 'cs-scale', 'aria-hidden': 'true' });
  if (x.stoppingRule === 'difference-or-no-difference') {
    const band = h('div', { class: 'cs-margin' });
    band.style.left = along(-x.margin);
    band.style.width = `${(x.margin * 100).toFixed(1)}%`;
    scale.append(band);
  }
  const zero = h('div', { class: 'cs-zero' });
  zero.style.left = along(0);
  scale.append(zero);
  if (x.pairs > 0) {
    const bar = h('div', { class: 'cs-bar' });
    bar.style.left = along(x.lower);
    bar.style.width = `${(((Math.min(1, x.upper) - Math.max(-1, x.lower)) / 2) * 100).toFixed(1)}%`;
    const dot = h('div', { class: 'cs-dot' });
    dot.style.left = along(x.estimate);
    scale.append(bar, dot);
  }
  const ends = h('div', { class: 'cs-ends muted', 'aria-hidden': 'true' }, h('span', {}, `−1 (${names.a} better)`), h('span', {}, '0'), h('span', {}, `+1 (${names.b} better)`));
  panel.append(
    h('h2', {}, `Pre-registered A/B analysis · session ${id}`),
    h('div', { class: 'big', id: 'session-analysis-headline' }, w.headline),
    ...(w.outcome ? [h('p', { id: 'session-analysis-outcome' }, w.outcome)] : []),
    scale,
    ends,
    h('dl', { class: 'kv', id: 'session-analysis-numbers' }, h('dt', {}, 'estimate'), h('dd', {}, w.estimate), h('dt', {}, 'bounds'), h('dd', {}, w.range), h('dt', {}, 'pairs'), h('dd', {}, w.pairs)),
    h('details', { class: 'tech' }, h('summary', {}, 'details'), h('p', {}, `${x.sentence} Rule: ${x.stoppingRule === 'difference' ? 'stop on a difference' : `stop on a difference, or on none larger than ${x.margin.toFixed(2)}`}; α ${x.alpha}; betting confidence sequence on the paired differences; analysis ${x.analysisSha256.slice(0, 12)}.`)),
  );
}
