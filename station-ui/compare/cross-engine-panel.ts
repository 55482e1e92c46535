/**
 * The Compare view's "Across engines" panel: when the policies were swept on both physics engines,
 * each policy's progress per tier on each engine and on the real rig, the engines' Pearson r and
 * MMRV against each other and against real, and every pair of policies the engines order
 * differently. The report's numbers (GET /api/compare/report's crossEngine); nothing is computed here.
 */
import type { CrossEngineReport, EngineAgreement } from '../../src/analysis/cross-engine.js';
import { clear, h } from '../dom.js';

export interface CrossEngineData {
  readonly crossEngine?: (CrossEngineReport & { readonly sameRecordOtherwise?: boolean }) | null;
  readonly crossEngineUnavailable?: string;
}

const n2 = (x: number | null | undefined): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(2);

function agreementText(g: EngineAgreement): string {
  if (g.pearson === null) return `${g.of} against ${g.against}: ${g.unavailable ?? 'not measured'}.`;
  const r =
    g.pearson.r === null
      ? `Pearson r undefined (${g.pearson.undefinedBecause})`
      : `Pearson r ${g.pearson.r.toFixed(2)}`;
  return `${g.of} against ${g.against}: ${r} · MMRV ${g.mmrv!.toFixed(3)} over ${g.pairs.length} policies.`;
}

export class CrossEnginePanel {
  readonly root = h('div', { class: 'panel', id: 'compare-engines' });
  private readonly body = h('div');
  private readonly rows = h('tbody');

  constructor() {
    this.root.append(h('h2', {}, 'Across engines'), this.body);
    this.root.hidden = true;
  }

  /** Shown only when another engine ran these policies on this set (or why it cannot be paired). */
  show(d: CrossEngineData | null): void {
    clear(this.body);
    clear(this.rows);
    const x = d?.crossEngine;
    this.root.hidden = !x && !d?.crossEngineUnavailable;
    if (!x) {
      if (d?.crossEngineUnavailable)
        this.body.append(h('p', { class: 'words', role: 'status' }, d.crossEngineUnavailable));
      return;
    }
    const [a, b] = x.engines.map((e) => e.engine);
    const all = x.tiers.find((t) => t.tier === 'all');
    this.body.append(
      h(
        'p',
        { id: 'compare-engines-verdict', class: `words${all?.orderedDifferently.length ? ' decided' : ''}` },
        x.sentence,
      ),
      h(
        'p',
        { class: 'muted small' },
        `Each engine over the layouts both ran for that policy; against real over the layouts all three ran.${x.sameRecordOtherwise === false ? ' The two sim calibrations differ in more than their engine.' : ''}`,
      ),
    );
    if (all) for (const g of [all.engines, ...all.real]) this.body.append(h('p', { class: 'small' }, agreementText(g)));
    if (all?.orderedDifferently.length) {
      const list = h('ul', { id: 'compare-engines-disagree' });
      for (const p of all.orderedDifferently) {
        const real = p.real
          ? ` The real rig: ${n2(p.real.a)} vs ${n2(p.real.b)}${p.realSidesWith === 'neither' ? ' (a tie)' : `, as ${p.realSidesWith} orders them`}.`
          : ' No real results for both.';
        list.append(
          h(
            'li',
            {},
            `${p.a} vs ${p.b}: ${a} ${n2(p.engines[0].a)} vs ${n2(p.engines[0].b)}, ${b} ${n2(p.engines[1].a)} vs ${n2(p.engines[1].b)}.${real}`,
          ),
        );
      }
      this.body.append(h('p', {}, 'Ordered differently by the two engines:'), list);
    }
    let last = '';
    for (const p of x.progress) {
      this.rows.append(
        h(
          'tr',
          { class: p.tier === 'all' ? 'total' : undefined, 'data-tier': String(p.tier) },
          h('td', {}, p.policy === last ? '' : p.policy),
          h('td', {}, p.tier === 'all' ? 'all tiers' : `tier ${p.tier}`),
          h('td', { class: 'num' }, n2(p.engines?.[0].progress)),
          h('td', { class: 'num' }, n2(p.engines?.[1].progress)),
          h('td', { class: 'num' }, n2(p.real?.progress)),
          h('td', { class: 'num' }, `${p.engines?.[0].layouts ?? 0} / ${p.real?.layouts ?? 0}`),
        ),
      );
      last = p.policy;
    }
    this.body.append(
      h(
        'table',
        { id: 'compare-engines-tiers' },
        h(
          'thead',
          {},
          h('tr', {}, ...['policy', 'tier', a, b, 'real', 'layouts (engines / with real)'].map((t) => h('th', {}, t))),
        ),
        this.rows,
      ),
    );
  }
}
