/**
 * The session's score step: by a count in the task's terms, or object by object (regions or
 * upright, and off the table), with a note; or abort and redo with a reason. Also what a rollout
 * with no score says about why.
 */
import type {
  ScoringForm,
  SessionAnswer,
  SessionPrompt,
  SessionView as SessionState,
} from '../../src/server/api-types.js';
import { h } from '../dom.js';
import type { SessionKey } from '../keys.js';
import { splitReason } from '../words.js';

/** Where an object ended, as the operator scored it. */
export type ObjectEnd = { region?: string; upright?: boolean; offTable?: boolean };

/** What the operator has entered on the score step so far: kept across redraws (every event redraws the card), new for each prompt. */
export interface ScoreDraft {
  count: number;
  ends: Map<string, ObjectEnd>;
  /** The note and redo reason being typed. */
  note: string;
  reason: string;
  /** Scoring object by object rather than by a count (the count is then not shown, so it cannot be mistaken for the score). */
  objectWise: boolean;
}

export function newScoreDraft(): ScoreDraft {
  return { count: 0, ends: new Map(), note: '', reason: '', objectWise: false };
}

export interface ScoreFormActions {
  save(f: ScoringForm): void;
  key(k: SessionKey): void;
  send(answer: SessionAnswer): void;
  redraw(): void;
}

/** The answer the draft makes: by the count, or by each object's end state. */
export function scoreAnswer(f: ScoringForm, d: ScoreDraft): SessionAnswer {
  const note = d.note.trim();
  if (f.count !== null && !d.objectWise) return { action: 'score-count', count: d.count, ...(note ? { note } : {}) };
  const endStates = f.objects.map((o) => ({
    id: o.id,
    ...(d.ends.get(o.id) ?? (f.regions.length === 0 ? { upright: false } : {})),
  }));
  return { action: 'score', endStates, ...(note ? { note } : {}) };
}

/**
 * The score step's form. `d` is the draft (kept across redraws); `act` saves it, sends the step
 * keys and answers, and redraws the card after a choice.
 */
export function scoreForm(
  s: SessionState,
  p: Extract<SessionPrompt, { kind: 'score' }>,
  d: ScoreDraft,
  act: ScoreFormActions,
): HTMLElement {
  const f = p.scoring;
  const n = f.objects.length;
  // novalidate: the engine's own check (the terminal operator's too) says what a count can be, in one sentence.
  const form = h('form', { id: 'session-score-form', class: 'score-form', novalidate: true });
  form.onsubmit = (e) => {
    e.preventDefault();
    act.save(f);
  };
  const ran =
    p.run.status === 'valid'
      ? `The episode ran its ${s.episodeSeconds} s.`
      : `It ended early: ${p.run.reason ?? p.run.status}.`;
  form.append(
    h('div', { class: 'big' }, 'Score the table'),
    h('p', { class: 'muted' }, `${ran} Rollout ${p.run.rolloutId}.`),
  );
  const objectWise = f.count === null || d.objectWise;
  if (f.count && !objectWise) {
    const what = f.count.kind === 'region' ? `in the ${f.count.region}` : 'upright';
    const input = h('input', {
      id: 'session-count',
      type: 'number',
      min: 0,
      max: n,
      step: 1,
      value: d.count,
      inputmode: 'numeric',
    });
    input.oninput = () => (d.count = Number(input.value));
    const minus = h(
      'button',
      { class: 'btn count-btn', type: 'button', id: 'session-count-down', 'aria-label': 'one fewer' },
      '−',
    );
    const plus = h(
      'button',
      { class: 'btn count-btn', type: 'button', id: 'session-count-up', 'aria-label': 'one more' },
      '+',
    );
    minus.onclick = () => act.key('count-down');
    plus.onclick = () => act.key('count-up');
    form.append(
      h(
        'label',
        { for: 'session-count', class: 'count-q' },
        n === 1 ? `Is the object ${what}? Count it: 0 or 1.` : `How many of the ${n} objects are ${what}?`,
      ),
      h('div', { class: 'count-row' }, minus, input, plus, h('span', { class: 'muted' }, `of ${n}  (↑ ↓)`)),
    );
  }
  // Object by object: the task's own terms (regions, or upright), plus off the table.
  const rows = f.objects.map((o) => {
    const choices: { label: string; end: { region?: string; upright?: boolean; offTable?: boolean } }[] =
      f.regions.length > 0
        ? [
            ...f.regions.map((r) => ({ label: `in ${r}`, end: { region: r } })),
            { label: 'elsewhere', end: {} },
            { label: 'off the table', end: { offTable: true } },
          ]
        : [
            { label: 'upright', end: { upright: true } },
            { label: 'not upright', end: { upright: false } },
            { label: 'off the table', end: { offTable: true } },
          ];
    const cur = JSON.stringify(d.ends.get(o.id) ?? choices[choices.length - 2].end);
    const group = h('div', { class: 'choice-row', role: 'radiogroup', 'aria-label': o.id });
    for (const c of choices) {
      const on = JSON.stringify(c.end) === cur;
      const b = h(
        'button',
        {
          type: 'button',
          class: `choice${on ? ' on' : ''}`,
          'aria-pressed': on ? 'true' : 'false',
          'data-object': o.id,
          'data-choice': c.label,
        },
        on ? `✓ ${c.label}` : c.label,
      );
      b.onclick = () => {
        d.ends.set(o.id, c.end);
        act.redraw();
      };
      group.append(b);
    }
    return h('div', { class: 'object-score' }, h('span', { class: 'object-id' }, o.id), group);
  });
  if (f.count) {
    const toggle = h(
      'button',
      { type: 'button', class: 'linkish', id: 'session-objects-toggle' },
      objectWise ? '← Score by a count instead' : 'Object by object instead →',
    );
    toggle.onclick = () => {
      d.objectWise = !d.objectWise;
      act.redraw();
    };
    form.append(toggle);
  }
  if (objectWise) form.append(h('div', { id: 'session-objects', class: 'objects-score' }, ...rows));
  const noteInput = h('input', { id: 'session-note', autocomplete: 'off', value: d.note });
  noteInput.oninput = () => (d.note = noteInput.value);
  form.append(h('label', { for: 'session-note', class: 'muted' }, 'Note (optional)'), noteInput);
  const save = h(
    'button',
    { class: 'btn primary big-btn', type: 'submit', id: 'session-save-score' },
    'Save score',
    h('kbd', {}, 'Enter'),
  );
  const reason = h('input', {
    id: 'session-redo-reason',
    autocomplete: 'off',
    value: d.reason,
    placeholder: 'why redo it? (e.g. a bottle fell before the start)',
  });
  reason.oninput = () => (d.reason = reason.value);
  const redo = h('button', { class: 'btn', type: 'button', id: 'session-redo' }, 'Abort & redo', h('kbd', {}, 'X'));
  redo.onclick = () => act.send({ action: 'redo', reason: reason.value });
  reason.onkeydown = (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      act.send({ action: 'redo', reason: reason.value });
    }
  };
  form.append(h('div', { class: 'actions' }, save), h('div', { class: 'redo-row' }, reason, redo));
  return form;
}

/** Why a rollout has no score: fourteen motors that stopped answering are one line, not fourteen. */
export function noScoreReason(w: { kind: string; reason: string }): HTMLElement {
  const { head, lines } = splitReason(w.reason);
  const words =
    {
      'policy-failed': 'The policy failed',
      'rig-fault': 'The rig faulted',
      interrupted: 'Cut off',
      abandoned: 'Aborted by the operator',
      estopped: 'E-stopped',
      stopped: 'Stopped by the operator',
      'not-run': 'It could not run',
    }[w.kind] ?? w.kind;
  // A reason that only repeats the heading ("Stopped by the operator: stopped by the operator") is said once.
  const same = !head && lines.length === 1 && lines[0].replace(/\.$/, '').toLowerCase() === words.toLowerCase();
  if (same)
    return h('div', { class: 'reason bad', id: 'session-why' }, h('div', { class: 'reason-head' }, `${words}.`));
  return h(
    'div',
    { class: 'reason bad', id: 'session-why' },
    h('div', { class: 'reason-head' }, `${words}${head ? ` — ${head}` : ''}:`),
    lines.length === 1 ? h('div', {}, lines[0]) : h('ul', {}, ...lines.map((l) => h('li', {}, l))),
  );
}
