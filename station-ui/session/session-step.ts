/**
 * The session card's step panel: what the operator does now, one big button (and its key) per
 * answer — place the objects (with the placement check's refusal named on the object), watch the
 * policy run (abort it), score in the task's terms, clear the table, redo or close, carry on.
 */
import type {
  ScoringForm,
  SessionAnswer,
  ProjectorState,
  SessionView as SessionState,
} from '../../src/server/api-types.js';
import { h } from '../dom.js';
import type { SessionKey } from '../keys.js';
import { noScoreReason, scoreForm, type ScoreDraft } from './score-form.js';

/** What the step panel reads and how its buttons answer (the Session view's own state and calls). */
export interface StepContext {
  /** The engine's refusal of the last answer ('' when none). */
  readonly refusal: string;
  readonly projector: ProjectorState | null;
  /** What is entered on the score step. */
  readonly draft: ScoreDraft;
  send(answer: SessionAnswer): void;
  /** Abort the running rollout (S). */
  stop(): void;
  saveScore(f: ScoringForm): void;
  key(k: SessionKey): void;
  redraw(): void;
  /** Take over from the policy with the leader, or give back (E). */
  takeover(): void;
}

export function sessionStepPanel(s: SessionState, c: StepContext): HTMLElement {
  const box = h('div', { class: 'step-panel', id: 'session-step' });
  const p = s.prompt;
  const big = (
    id: string,
    text: string,
    key: string,
    answer: SessionAnswer | (() => void),
    cls = 'primary',
  ): HTMLElement => {
    const b = h('button', { class: `btn ${cls} big-btn`, id, type: 'button' }, text, h('kbd', {}, key));
    b.onclick = () => (typeof answer === 'function' ? answer() : c.send(answer));
    return b;
  };
  box.append(h('div', { class: 'refusal', id: 'session-refusal', role: 'alert' }, c.refusal));
  if (s.phase === 'ended') {
    box.append(
      h(
        'p',
        { class: 'lead' },
        `${s.progress.scored} of ${s.progress.total} rollouts scored. The results${s.blind ? ' and the blind key' : ''} are below.`,
      ),
      h(
        'details',
        { class: 'tech' },
        h('summary', {}, 'details'),
        h('p', {}, `For analysis outside the station, export it in a terminal: tandem session export ${s.id} --json`),
      ),
    );
  } else if (s.phase === 'stopped') {
    box.append(
      h('div', { class: 'big' }, 'Stopped for now'),
      h('p', {}, `${s.stoppedBecause ?? ''}. Every score is kept; resume it from the list below.`),
    );
  } else if (s.phase === 'running' && s.running) {
    const t = (Date.now() - Date.parse(s.running.startedAt)) / 1000;
    const pct = Math.min(100, (100 * t) / s.running.seconds);
    const bar = h('div');
    bar.style.width = `${pct.toFixed(1)}%`;
    // With a leader: who holds the arms now, in words (not colour alone), and the toggle.
    const tk = s.takeover;
    box.append(
      h('div', { class: 'big' }, tk?.driving ? 'You hold the arms' : `${s.running.label} is running`),
      h(
        'p',
        { class: 'muted' },
        tk?.driving
          ? `${s.running.label} is paused while you drive with the leader; give back and it resumes from where you leave the arms.`
          : c.projector?.configured
            ? 'Hands off the table. The projector is black.'
            : 'Hands off the table.',
      ),
      h('div', { class: 'progress', role: 'progressbar', 'aria-valuenow': Math.round(pct) }, bar),
      h('div', {}, `${Math.min(t, s.running.seconds).toFixed(0)} of ${s.running.seconds} s`),
      ...(tk
        ? [
            h(
              'div',
              {
                class: `takeover${tk.driving ? ' driving' : ''}`,
                id: 'session-takeover',
                'data-driving': String(tk.driving),
              },
              h('div', { class: 'reason-head' }, tk.driving ? 'Operator drives (leader)' : 'Policy drives'),
              h(
                'div',
                { class: 'muted', id: 'session-takeover-count' },
                `${tk.stretches} takeover${tk.stretches === 1 ? '' : 's'} in this rollout, ${tk.sessionStretches} in the session · ${tk.leader}`,
              ),
            ),
          ]
        : []),
      h(
        'div',
        { class: 'actions' },
        ...(tk
          ? [
              big(
                'session-takeover-toggle',
                tk.driving ? 'Give back' : 'Take over',
                'E',
                () => c.takeover(),
                tk.driving ? 'primary' : '',
              ),
            ]
          : []),
        big('session-abort', 'Abort rollout', 'S', () => c.stop(), 'stop'),
      ),
    );
  } else if (!p) {
    box.append(
      h('div', { class: 'big muted' }, 'One moment…'),
      h('p', { class: 'muted' }, 'The station is storing the last step.'),
    );
  } else if (p.kind === 'place') {
    const objects = s.step?.objects ?? [];
    // The placement check refused the last placement: the object to move is named and marked, with what was measured.
    const refused = p.placement;
    const measured = (id: string): string => {
      const m = refused?.objects.find((x) => x.id === id);
      if (!m) return '';
      return m.errorMm === null
        ? ' — not seen on its outline'
        : ` — ${m.errorMm.toFixed(1)} mm${m.errorDeg !== undefined ? `, ${m.errorDeg.toFixed(1)}°` : ''} off`;
    };
    box.append(
      h('div', { class: 'big' }, refused ? 'Place it again' : 'Place the objects'),
      ...(refused
        ? [
            h(
              'div',
              { class: 'reason bad', id: 'session-placement', role: 'alert' },
              h('div', { class: 'reason-head' }, 'Not started — the placement check:'),
              h('div', {}, refused.sentence),
            ),
          ]
        : []),
      h(
        'ul',
        { class: 'objects' },
        ...objects.map((o) =>
          h(
            'li',
            refused?.object === o.id ? { class: 'misplaced' } : {},
            `${o.id}`,
            h('span', { class: 'muted' }, ` ${o.posture}`),
            refused ? h('span', { class: refused.object === o.id ? 'bad' : 'muted' }, measured(o.id)) : '',
          ),
        ),
      ),
      h(
        'div',
        { class: 'actions' },
        big('session-confirm', 'Placed — start the policy', 'Enter', { action: 'confirm' }),
      ),
      h(
        'div',
        { class: 'actions secondary' },
        big('session-pause', 'Pause', 'P', { action: 'pause' }, ''),
        big('session-stop', 'Stop for now', 'Q', { action: 'stop' }, ''),
      ),
    );
  } else if (p.kind === 'score')
    box.append(
      scoreForm(s, p, c.draft, {
        save: (f) => c.saveScore(f),
        key: (k) => c.key(k),
        send: (a) => c.send(a),
        redraw: () => c.redraw(),
      }),
    );
  else if (p.kind === 'reset') {
    box.append(
      h('div', { class: 'big' }, 'Clear the table'),
      h('p', {}, 'Take every object off the table for the next layout.'),
      h('div', { class: 'actions' }, big('session-reset-done', 'Table is clear', 'Enter', { action: 'done' })),
    );
  } else if (p.kind === 'offer-redo') {
    box.append(
      h('div', { class: 'big' }, 'This rollout has no score'),
      noScoreReason(p.why),
      h(
        'div',
        { class: 'actions' },
        big('session-redo-yes', 'Redo it', 'Enter', { action: 'redo' }),
        big('session-redo-close', 'Close it unscored', 'N', { action: 'close' }, ''),
      ),
    );
  } else if (p.kind === 'paused') {
    box.append(
      h('div', { class: 'big' }, s.safety.estopped ? 'E-stopped — paused' : 'Paused'),
      h(
        'p',
        {},
        s.safety.estopped
          ? 'The E-stop stopped the arms. Check the cell — and release the E-stop button if one was pressed — before you carry on.'
          : 'Nothing moves while paused.',
      ),
      h(
        'div',
        { class: 'actions' },
        big('session-carry-on', 'Carry on', 'Enter', { action: 'carry-on' }),
        big('session-stop', 'Stop for now', 'Q', { action: 'stop' }, ''),
      ),
    );
  } else if (p.kind === 'break') {
    box.append(
      h('div', { class: 'big' }, 'Time for a break'),
      h('p', {}, 'Step away for a few minutes; the session waits.'),
      h('div', { class: 'actions' }, big('session-carry-on', "I'm back", 'Enter', { action: 'carry-on' })),
    );
  }
  return box;
}
