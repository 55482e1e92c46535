/**
 * The Session page's side: the session's progress (done, scored, elapsed, time left, the next
 * break), its safety (the E-stop and the cell's interlocks in words), what the projector shows,
 * and the engine's last lines.
 */
import {
  PROJECTOR_PAGE_PATH,
  type ProjectorState,
  type SessionView as SessionState,
} from '../../src/server/api-types.js';
import { stationLink } from '../token.js';
import { clear, h } from '../dom.js';

const min = (s: number): string => (s < 90 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`);

function projectorPanel(p: ProjectorState | null): HTMLElement {
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
      h(
        'p',
        { id: 'session-projector-now' },
        'No projector is set up: place each layout from its picture on the card.',
      ),
      h('details', { class: 'tech' }, h('summary', {}, 'details'), h('p', {}, p.description)),
    );
    return panel;
  }
  const now =
    p.showing === 'layout'
      ? `Showing layout ${p.layoutIndex ?? '?'}'s footprints on the table.`
      : p.showing === 'black'
        ? 'Black: the arms may move.'
        : 'Nothing shown yet (black).';
  panel.append(
    h('p', { id: 'session-projector-now' }, now),
    ...(p.problem ? [h('ul', { class: 'faults' }, h('li', {}, p.problem))] : []),
    ...(!shell
      ? [
          h(
            'p',
            {},
            h(
              'a',
              { href: stationLink(PROJECTOR_PAGE_PATH), target: '_blank', rel: 'noopener', id: 'open-projector' },
              'Open the projector page',
            ),
            ' on the projector’s display, full screen (F11).',
          ),
        ]
      : []),
    h('details', { class: 'tech' }, h('summary', {}, 'details'), h('p', {}, p.description)),
  );
  return panel;
}

export function drawSessionSide(into: HTMLElement, s: SessionState, projector: ProjectorState | null): void {
  clear(into);
  const pr = s.progress;
  const pct = pr.total > 0 ? (100 * pr.done) / pr.total : 0;
  const bar = h('div');
  bar.style.width = `${pct.toFixed(1)}%`;
  into.append(
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
        h(
          'dd',
          { id: 'session-break' },
          pr.breakInS === null ? '—' : pr.breakInS <= 0 ? 'due after this rollout' : `in ${min(pr.breakInS)}`,
        ),
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
        h(
          'li',
          { class: s.safety.estopped ? '' : 'none' },
          s.safety.estopped
            ? 'E-STOP pressed: the rollout was stopped; check the cell.'
            : 'E-stop: not pressed (Esc or the right pedal)',
        ),
        h(
          'li',
          { class: s.safety.interlocks.startsWith('OPEN') ? '' : 'none', id: 'session-interlocks' },
          `Interlocks: ${s.safety.interlocks}`,
        ),
      ),
    ),
    projectorPanel(projector),
    h(
      'div',
      { class: 'panel', id: 'session-lines' },
      h('h2', {}, 'Log'),
      h('ul', { class: 'lines' }, ...s.lines.slice(-6).map((l) => h('li', {}, l))),
    ),
  );
}
