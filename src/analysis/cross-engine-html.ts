/** The report file's cross-engine section: per policy and tier on each engine, the agreement table and the pairs the engines order differently. */
import type { CrossEngineReport, EngineAgreement } from './cross-engine.js';
import { escapeXml as esc } from './report-figures.js';

const n2 = (x: number | null | undefined): string =>
  x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(2);
const n3 = (x: number | null | undefined): string =>
  x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(3);

function agreementCells(a: EngineAgreement): string {
  if (a.pearson === null) return `<td class="l w" colspan="3">${esc(a.unavailable ?? '')}</td>`;
  return `<td>${a.pairs.length}</td><td>${a.pearson.r === null ? `undefined <span class="small">(${esc(a.pearson.undefinedBecause)})</span>` : n2(a.pearson.r)}</td><td>${n3(a.mmrv)}</td>`;
}

/** Empty when there is nothing to say: no other engine ran these policies on this set. */
export function crossEngineSection(
  r: {
    readonly crossEngine?: (CrossEngineReport & { readonly sameRecordOtherwise?: boolean }) | null;
    readonly crossEngineUnavailable?: string;
  },
  heading: string,
): string {
  const x = r.crossEngine;
  if (!x)
    return r.crossEngineUnavailable
      ? `<h2>${heading}</h2><p class="warn note">${esc(r.crossEngineUnavailable)}</p>`
      : '';
  const [a, b] = x.engines.map((e) => esc(e.engine));
  const records = x.engines
    .map((e) => `${esc(e.engine)} <code>${esc(e.calibration.slice(0, 12))}</code>`)
    .join(' and ');
  const progress = x.progress
    .map(
      (p) =>
        `<tr><td class="l">${esc(p.policy)}</td><td class="l">${p.tier === 'all' ? 'all' : `tier ${p.tier}`}</td><td>${p.engines ? p.engines[0].layouts : 0}</td><td>${n2(p.engines?.[0].progress)}</td><td>${n2(p.engines?.[1].progress)}</td><td>${p.real ? p.real.layouts : 0}</td><td>${n2(p.real?.progress)}</td></tr>`,
    )
    .join('');
  const agreement = x.tiers
    .flatMap((t) =>
      [t.engines, ...t.real].map(
        (g, i) =>
          `<tr><td class="l">${i === 0 ? (t.tier === 'all' ? 'all' : `tier ${t.tier}`) : ''}</td><td class="l">${esc(g.of)} against ${esc(g.against)}</td>${agreementCells(g)}</tr>`,
      ),
    )
    .join('');
  const all = x.tiers.find((t) => t.tier === 'all');
  const pairs = all?.orderedDifferently.length
    ? `<table><tr><th class="l">policies</th><th>${a}</th><th>${b}</th><th>real</th><th class="l">real orders them as</th></tr>${all.orderedDifferently
        .map(
          (d) =>
            `<tr><td class="l">${esc(d.a)} vs ${esc(d.b)}</td><td>${n2(d.engines[0].a)} vs ${n2(d.engines[0].b)}</td><td>${n2(d.engines[1].a)} vs ${n2(d.engines[1].b)}</td><td>${d.real ? `${n2(d.real.a)} vs ${n2(d.real.b)}` : '–'}</td><td class="l">${d.realSidesWith === null ? 'no real results' : d.realSidesWith === 'neither' ? 'a tie' : esc(d.realSidesWith)}</td></tr>`,
        )
        .join('')}</table>`
    : '';
  return `<h2>${heading}</h2>
<p class="${all?.orderedDifferently.length ? 'warn note' : 'note'}">${esc(x.sentence)}</p>
<p class="note">The same policies swept on this layout set by two physics engines: ${records}${x.sameRecordOtherwise === false ? ' (the two records differ in more than their engine)' : ' (the same sim calibration on each)'}. Each engine is read over the layouts both ran for that policy, and against real over the layouts all three ran. MMRV sizes each violation by the progress of the side it is measured against: ${a}'s between the engines, the real rig's for an engine against real.</p>
<table><tr><th class="l">policy</th><th class="l">tier</th><th>layouts, both engines</th><th>${a}</th><th>${b}</th><th>layouts, with real</th><th>real</th></tr>${progress}</table>
<table><tr><th class="l">tier</th><th class="l">agreement</th><th>policies</th><th>Pearson r</th><th>MMRV</th></tr>${agreement}</table>
${pairs}`;
}
