/**
 * The Session view: plan and start an eval session (or resume one), then work it — the current
 * rollout card (layout from above, the state-machine step, one big button per step), scoring in
 * the task's terms, progress / ETA / break, the E-stop and interlocks, the engine's lines. The
 * station's session engine asks; this view only shows its prompt and sends the answer. An answer
 * the engine refuses (an impossible count) comes back as its one sentence and nothing is stored.
 */
import {
  type ProjectorState,
  type LayoutSetSummary,
  type ScoringForm,
  SessionAnswer,
  SessionSummary,
  type SessionView as SessionState,
  type StationInfo,
} from '../../src/server/api-types.js';
import { api } from '../api.js';
import { loadApiImage } from '../token.js';
import { agoEl, clear, h, stamp } from '../dom.js';
import type { SessionKey } from '../keys.js';
import { drawAnalysis, drawResults } from './session-results.js';
import { drawSessionSide } from './session-side.js';
import { sessionStepPanel } from './session-step.js';
import { newScoreDraft, scoreAnswer } from './score-form.js';

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

export class SessionView {
  private readonly planPanel = h('div', { class: 'panel', id: 'session-plan' });
  private readonly card = h('div', { class: 'panel session-card', id: 'session-card' });
  private readonly setSelect = h('select', { id: 'session-layout-set' });
  private readonly policiesInput = h('input', {
    id: 'session-policies',
    autocomplete: 'off',
    value: 'code:hold,code:bottles-in-the-bin',
    placeholder: 'onnx:model-a.onnx, ws://policy-server:8000',
  });
  private readonly perLayoutInput = h('input', { id: 'session-per-layout', type: 'number', min: 1, value: 1 });
  private readonly blindInput = h('input', { id: 'session-blind', type: 'checkbox', checked: true });
  private readonly minutesInput = h('input', { id: 'session-minutes', type: 'number', min: 1, value: 75 });
  private readonly secondsInput = h('input', { id: 'session-seconds', type: 'number', min: 0.1, step: 0.1 });
  private readonly seedInput = h('input', { id: 'session-seed', type: 'number', min: 0, placeholder: 'new at random' });
  private readonly operatorInput = h('input', {
    id: 'session-operator',
    autocomplete: 'off',
    placeholder: 'your name (stored with each score)',
  });
  private readonly preregisterInput = h('input', { id: 'session-preregister', type: 'checkbox' });
  private readonly alphaInput = h('input', {
    id: 'session-alpha',
    type: 'number',
    min: 0.01,
    max: 0.49,
    step: 0.01,
    value: 0.05,
    'aria-label': 'α (error rate)',
  });
  private readonly stopEarlyInput = h('input', { id: 'session-stop-early', type: 'checkbox' });
  private readonly sessionsList = h('div', { id: 'session-list' });
  private readonly sessionsPanel = h(
    'div',
    { class: 'panel', id: 'session-store' },
    h('h2', {}, 'Sessions in the store'),
    this.sessionsList,
  );
  private readonly sideLive = h('div');
  private readonly resultsPanel = h('div', { class: 'panel', id: 'session-results', hidden: true });
  /** The pre-registered A/B analysis after every scored pair (sessions planned with one). */
  private readonly analysisPanel = h('div', {
    class: 'panel',
    id: 'session-analysis',
    hidden: true,
    'aria-live': 'polite',
  });
  /** Sessions a crash left open (not stopped for now): flagged above everything, with resume and end. */
  private readonly interruptedPanel = h('div', { id: 'session-interrupted' });
  private readonly side = h('div', { id: 'session-side' }, this.sideLive, this.sessionsPanel);
  /** The session whose results are shown, and the scored count they were fetched at (refetched when it changes). */
  private resultsOf: { id: number; scored: number } | undefined;
  private state: SessionState | null = null;
  private sets: LayoutSetSummary[] = [];
  /** What is entered on the score step, kept across redraws of the same prompt. */
  private draft = newScoreDraft();
  private countPrompt = -1;
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
    root.append(
      h(
        'div',
        { class: 'grid session-grid' },
        h('div', {}, this.interruptedPanel, this.card, this.analysisPanel, this.resultsPanel, this.planPanel),
        this.side,
      ),
    );
    this.buildPlanForm();
    this.show(null);
  }

  /** The policies field starts with code policies only where they can run (the emulated cell): elsewhere it starts empty. */
  setInfo(info: StationInfo): void {
    if (
      !info.policySpecs.some((x) => x.startsWith('code:')) &&
      this.policiesInput.value === this.policiesInput.defaultValue
    )
      this.policiesInput.value = '';
  }

  async reload(): Promise<void> {
    const [sets, sessions] = await Promise.all([api.layoutSets(), api.sessions()]);
    this.sets = sets;
    const keep = this.setSelect.value;
    clear(this.setSelect);
    for (const s of sets)
      this.setSelect.append(
        h(
          'option',
          { value: s.sha256 },
          `${s.task} v${s.version} · ${s.layoutCount} layouts · ${s.sha256.slice(0, 10)}`,
        ),
      );
    if (sets.length === 0)
      this.setSelect.append(h('option', { value: '' }, 'No layout sets yet: sample one on Rollouts'));
    if (keep && sets.some((s) => s.sha256 === keep)) this.setSelect.value = keep;
    if (!this.secondsInput.value)
      this.secondsInput.value = String(sets.find((s) => s.sha256 === this.setSelect.value)?.episodeSeconds ?? '');
    this.showSessions(sessions);
  }

  /** The session's state from the event stream (null: none on this station since it started). */
  show(s: SessionState | null): void {
    // An answer's HTTP reply can arrive after the events that followed it: the newer view wins.
    if (s && this.state && s.id === this.state.id && s.seq < this.state.seq) return;
    this.state = s;
    if (s?.prompt?.kind === 'score' && s.prompt.id !== this.countPrompt) {
      this.countPrompt = s.prompt.id;
      this.draft = newScoreDraft();
    }
    const working = s !== null && s.phase !== 'stopped' && s.phase !== 'ended';
    this.planPanel.hidden = working;
    this.interruptedPanel.hidden = working;
    // The same question while the operator types in it: leave the card (and the caret) alone.
    const typing = document.activeElement instanceof HTMLInputElement && this.card.contains(document.activeElement);
    const samePrompt = s?.prompt?.id !== undefined && s.prompt.id === this.drawnPrompt;
    if (!(typing && samePrompt)) this.drawCard();
    this.drawSide();
    if (
      s &&
      (this.resultsOf?.id !== s.id ||
        this.resultsOf.scored !== s.progress.scored ||
        (s.phase === 'ended' && this.drawnPhase !== 'ended'))
    )
      this.showResults(s.id, s.progress.scored);
    // The running rollout's bar moves with the wall clock; nothing else redraws on a timer.
    if (s && (s.phase === 'ended' || s.phase === 'stopped') && this.drawnPhase !== s.phase)
      void this.reload().catch(() => {});
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
    if (k === 'take-over') {
      if (this.state?.takeover) this.takeover();
      return;
    }
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
      this.draft.count = Math.max(0, Math.min(n, this.draft.count + (k === 'count-up' ? 1 : -1)));
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

  /** Takes over the running rollout with the leader, or gives back; the station answers with the new view. */
  private takeover(): void {
    api.sessionTakeover().then(
      (v) => this.show(v),
      (e: Error) => this.hooks.report(e.message, true),
    );
  }

  private saveScore(f: ScoringForm): void {
    this.send(scoreAnswer(f, this.draft));
  }

  private buildPlanForm(): void {
    const start = h(
      'button',
      { class: 'btn primary big-btn', type: 'submit', id: 'session-start' },
      'Start the session',
    );
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
      h(
        'div',
        { class: 'check' },
        this.blindInput,
        h('span', { class: 'muted' }, 'show "policy A", "policy B" — never the specs — until the session ends'),
      ),
      h('label', { for: 'session-minutes' }, 'Minutes'),
      this.minutesInput,
      h('label', { for: 'session-seconds' }, 'Episode s'),
      this.secondsInput,
      h('label', { for: 'session-seed' }, 'Seed'),
      this.seedInput,
      h('label', { for: 'session-operator' }, 'Operator'),
      this.operatorInput,
      h('label', { for: 'session-preregister' }, 'A/B analysis'),
      h(
        'div',
        { class: 'check' },
        this.preregisterInput,
        h('span', { class: 'muted' }, 'pre-register it: task progress at α'),
        this.alphaInput,
      ),
      h(
        'div',
        { class: 'hint' },
        'two policies; fixed before the first rollout, then after every pair this page says whether you may stop',
      ),
      h('label', { for: 'session-stop-early' }, 'Stop early'),
      h(
        'div',
        { class: 'check' },
        this.stopEarlyInput,
        h('span', { class: 'muted' }, 'end the session by itself once the pre-registered rule holds'),
      ),
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
          policies: this.policiesInput.value
            .split(',')
            .map((x) => x.trim())
            .filter((x) => x !== ''),
          perLayout: Number(this.perLayoutInput.value),
          blind: this.blindInput.checked,
          minutes: Number(this.minutesInput.value),
          ...(this.secondsInput.value ? { seconds } : {}),
          // Empty: the station draws a fresh seed, so two sessions of the same policies get different letters.
          ...(this.seedInput.value.trim() !== '' ? { seed: Number(this.seedInput.value) } : {}),
          ...(this.operatorInput.value.trim() ? { operator: this.operatorInput.value.trim() } : {}),
          // Stopping early needs the analysis it stops by: ticking it pre-registers one.
          ...(this.preregisterInput.checked || this.stopEarlyInput.checked
            ? { analysis: { alpha: Number(this.alphaInput.value) } }
            : {}),
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
    const resume = h(
      'button',
      { class: primary ? 'btn primary big-btn' : 'btn', type: 'button', 'data-action': 'resume' },
      words,
    );
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
        h(
          'p',
          {},
          `The station stopped without closing it (a crash, a kill or a power cut); its last step was journalled at ${stamp(s.interrupted!.at)}. ${s.interrupted!.words} Every score stored before is kept (${s.scored} of ${s.rollouts}).`,
        ),
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
      const row = h(
        'div',
        { class: 'session-row', 'data-session': s.id },
        h('span', { class: 'num' }, `#${s.id}`),
        h('span', {}, `${s.task} · ${s.labels.join(' vs ')} · ${s.done}/${s.rollouts} done · `, agoEl(s.startedAt)),
      );
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
    const reason = h('input', {
      class: 'end-reason',
      autocomplete: 'off',
      placeholder: 'why end it here? (journalled)',
      'aria-label': `Why end session ${id}`,
    });
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
        h(
          'div',
          { class: 'card-title', id: 'session-title' },
          st
            ? `Rollout ${st.slot + 1} of ${st.total}`
            : s.phase === 'ended'
              ? `Session ${s.id} ended`
              : `Session ${s.id}`,
        ),
        st
          ? h(
              'div',
              {
                class: 'label-pill',
                id: 'session-label',
                title: s.blind ? 'Blind session: which policy this is stays hidden until the session ends' : '',
              },
              st.label,
            )
          : null,
        st
          ? h(
              'div',
              { class: 'muted' },
              `layout ${st.layoutIndex}${st.tier >= 0 ? ` · tier ${st.tier}` : ''}${st.attempt > 0 ? ` · redo ${st.attempt}` : ''}`,
            )
          : null,
      ),
    );
    // The state machine's steps, the current one marked in words and weight (not colour alone).
    const over = s.phase === 'ended' || s.phase === 'stopped';
    if (!over)
      this.card.append(
        h(
          'ol',
          { class: 'steps', id: 'session-steps' },
          ...STEPS.map((x) => {
            const here = x.phase.includes(s.phase);
            return h(
              'li',
              { class: here ? 'here' : '', 'aria-current': here ? 'step' : undefined },
              here ? `▶ ${x.words}` : x.words,
            );
          }),
        ),
      );
    const body = h('div', { class: `card-body${over ? ' no-image' : ''}` });
    if (st && !over) {
      const img = h('img', { class: 'top-view', id: 'session-top-view', alt: `Layout ${st.layoutIndex} from above` });
      // Fetched with the token (an <img src> cannot send it); a failed load leaves the alt text.
      loadApiImage(img, `/api/layout-sets/${s.layoutSetSha256}/layouts/${st.layoutIndex}/top-view.svg`, true).catch(
        () => {},
      );
      body.append(img);
    }
    body.append(this.stepPanel(s));
    this.card.append(body);
  }

  private stepPanel(s: SessionState): HTMLElement {
    return sessionStepPanel(s, {
      refusal: this.refusal,
      projector: this.projector,
      draft: this.draft,
      send: (a) => this.send(a),
      stop: () => this.hooks.stop(),
      saveScore: (f) => this.saveScore(f),
      key: (k) => this.key(k),
      redraw: () => this.drawCard(),
      takeover: () => this.takeover(),
    });
  }

  private drawSide(): void {
    const s = this.state;
    // While a session works the picker is not needed; stopped or ended, it is how to resume.
    this.sessionsPanel.hidden = s !== null && s.phase !== 'stopped' && s.phase !== 'ended';
    if (s) drawSessionSide(this.sideLive, s, this.projector);
    else clear(this.sideLive);
  }
}
