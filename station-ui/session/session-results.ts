/**
 * A session's Results panel (per policy and tier, the A/B verdict) and its pre-registered analysis
 * panel, drawn from the station's session results.
 */
import type { SessionResults } from '../../src/server/api-types.js';
import { clear, h } from '../dom.js';
import { analysisWords, type SessionAnalysis } from './analysis-words.js';

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** The Results panel: readable from the desk, printable (Ctrl-P prints this panel alone). */
export function drawResults(
  panel: HTMLElement,
  id: number,
  r: SessionResults,
  openRollout?: (id: number) => void,
): void {
  clear(panel);
  panel.hidden = false;
  const name = (label: string): string => (r.key?.[label] ? `${label} = ${r.key[label]}` : label);
  // A pre-registered analysis is the session's verdict (its own panel, B − A by the plan's rule): not a second one here.
  const verdict = r.analysis
    ? h(
        'p',
        { class: 'muted', id: 'session-verdict' },
        `The A/B verdict is the pre-registered analysis above (${r.policies[1]?.label ?? 'B'} − ${r.policies[0]?.label ?? 'A'}, by the rule fixed before the first rollout).`,
      )
    : r.verdict && r.verdict.pairs > 0
      ? h(
          'div',
          { class: `verdict ${r.verdict.decided ? 'decided' : ''}`, id: 'session-verdict' },
          h('div', { class: 'big' }, r.verdict.sentence),
          h(
            'div',
            { class: 'muted' },
            `${r.verdict.pairs} pair${r.verdict.pairs === 1 ? '' : 's'} scored; ${r.policies[0]?.label ?? 'A'} − ${r.policies[1]?.label ?? 'B'} ${r.verdict.meanDifference >= 0 ? '+' : ''}${Number.isFinite(r.verdict.meanDifference) ? r.verdict.meanDifference.toFixed(2) : '—'} (95% anytime-valid bounds ${r.verdict.lower.toFixed(2)} to ${r.verdict.upper.toFixed(2)})`,
          ),
        )
      : h(
          'p',
          { class: 'muted', id: 'session-verdict' },
          r.policies.length !== 2
            ? 'An A/B verdict needs exactly two policies.'
            : r.ended
              ? 'No pair was scored: the session ended with nothing to compare.'
              : 'No pair scored yet.',
        );
  const table = h(
    'table',
    { class: 'results' },
    h(
      'thead',
      {},
      h('tr', {}, ...['policy', 'tier', 'scored', 'mean progress', '95% interval'].map((t) => h('th', {}, t))),
    ),
  );
  const body = h('tbody');
  for (const p of r.policies) {
    if (p.tiers.length === 0)
      body.append(
        h(
          'tr',
          {},
          h('td', {}, name(p.label)),
          h('td', {}, '—'),
          h('td', { class: 'num' }, '0'),
          h('td', {}, '—'),
          h('td', {}, '—'),
        ),
      );
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
          h(
            'td',
            { class: 'num' },
            t.layouts > 1
              ? `${pct(t.progressInterval.lower)} – ${pct(t.progressInterval.upper)}`
              : 'one layout: no interval',
          ),
        ),
      );
    });
  }
  table.append(body);
  const key = r.key
    ? h(
        'dl',
        { class: 'kv', id: 'session-key' },
        ...Object.entries(r.key).flatMap(([label, spec]) => [h('dt', {}, label), h('dd', {}, spec)]),
      )
    : h('p', { class: 'muted', id: 'session-key' }, 'The blind key is shown once the session has ended.');
  const episodes = h(
    'ul',
    { class: 'lines' },
    ...r.episodes.map((e) => {
      const line = h(
        'li',
        {},
        `rollout ${e.slot + 1} · ${e.label} · layout ${e.layoutIndex} (tier ${e.tier}) · ${pct(e.progress)}`,
      );
      if (e.rolloutId !== null && openRollout) {
        const id = e.rolloutId;
        const open = h(
          'button',
          { class: 'link', type: 'button', 'data-open-rollout': id },
          `open stored rollout ${id}`,
        );
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
  panel.append(
    h('h2', {}, `Results · session ${id}${r.ended ? ' (ended)' : ' (so far)'}`),
    verdict,
    table,
    assistsLine(r, name),
    h('h3', {}, r.blind ? 'Blind key' : 'Policies'),
    key,
    h('details', {}, h('summary', {}, `Scored episodes (${r.episodes.length})`), episodes),
    h('div', { class: 'actions' }, print),
  );
}

const hours = (h: number): string => (h * 60 < 90 ? `${(h * 3600).toFixed(0)} s` : `${(h * 60).toFixed(0)} min`);

/** The operator's takeovers with the leader per policy (PhAIL's assists): how many, per hour, mean time between. */
function assistsLine(r: SessionResults, name: (label: string) => string): HTMLElement {
  const assisted = r.assists.filter((a) => a.assists > 0);
  if (assisted.length === 0) return h('p', { class: 'muted', id: 'session-assists' }, 'No takeover with the leader.');
  return h(
    'p',
    { id: 'session-assists' },
    `Assists (the operator took over with the leader): ${assisted
      .map(
        (a) =>
          `${name(a.label)} ${a.assists} in ${a.assistedRollouts} of ${a.rollouts} rollout${a.rollouts === 1 ? '' : 's'}, ${a.assistsPerHour!.toFixed(0)} per hour, mean time between ${hours(a.mtbaHours!)}`,
      )
      .join('; ')}.`,
  );
}

/** Where a value of B − A sits on the panel's −1…+1 scale, in percent of its width. */
const along = (x: number): string => `${(((Math.max(-1, Math.min(1, x)) + 1) / 2) * 100).toFixed(1)}%`;

/**
 * The pre-registered analysis panel: the headline in words, the running B − A estimate on a −1…+1
 * scale with its confidence sequence as a bar (zero and the no-difference margin marked), and the
 * numbers. The words carry everything; the picture is for a glance from the desk.
 */
export function drawAnalysis(panel: HTMLElement, id: number, r: SessionResults): void {
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
  const ends = h(
    'div',
    { class: 'cs-ends muted', 'aria-hidden': 'true' },
    h('span', {}, `−1 (${names.a} better)`),
    h('span', {}, '0'),
    h('span', {}, `+1 (${names.b} better)`),
  );
  panel.append(
    h('h2', {}, `Pre-registered A/B analysis · session ${id}`),
    h('div', { class: 'big', id: 'session-analysis-headline' }, w.headline),
    ...(w.outcome ? [h('p', { id: 'session-analysis-outcome' }, w.outcome)] : []),
    scale,
    ends,
    h(
      'dl',
      { class: 'kv', id: 'session-analysis-numbers' },
      h('dt', {}, 'estimate'),
      h('dd', {}, w.estimate),
      h('dt', {}, 'bounds'),
      h('dd', {}, w.range),
      h('dt', {}, 'pairs'),
      h('dd', {}, w.pairs),
    ),
    h(
      'details',
      { class: 'tech' },
      h('summary', {}, 'details'),
      h(
        'p',
        {},
        `${x.sentence} Rule: ${x.stoppingRule === 'difference' ? 'stop on a difference' : `stop on a difference, or on none larger than ${x.margin.toFixed(2)}`}; α ${x.alpha}; betting confidence sequence on the paired differences; analysis ${x.analysisSha256.slice(0, 12)}.`,
      ),
    ),
  );
}
