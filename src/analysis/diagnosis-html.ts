/**
 * The failure diagnosis as one self-contained HTML page: the top pattern in a sentence, per tier
 * the patterns ranked with their intervals and sim-vs-real agreement, example rollouts (linked to
 * their replays where there is one), and the conditions that predict failure. Pure.
 */
import type { ConditionEffect, FailureDiagnosis, PatternRow, RateCell, SimRealAgreement } from './failure-diagnosis.js';
import { escapeXml as esc } from './report-figures.js';

const pct = (x: number): string => `${Math.round(x * 100)}%`;
const cell = (c: RateCell | null): string =>
  c === null || c.of === 0 ? '–' : `${c.rollouts}/${c.of} = ${pct(c.rate)} [${pct(c.lower)}, ${pct(c.upper)}]`;

export const AGREEMENT_WORDS: Readonly<Record<SimRealAgreement, string>> = {
  reproduced: 'the sim reproduces it',
  'sim-higher': 'the sim shows it more often than real',
  'sim-lower': 'the sim shows it less often than real',
  'sim-only': 'seen in the sim only (too few rollouts to tell apart)',
  'real-only': 'seen on the real rig only (too few rollouts to tell apart)',
  'no-real-rollouts': 'no real rollouts to compare',
  'no-sim-rollouts': 'no sim rollouts to compare',
};

function examples(p: PatternRow): string {
  return p.examples
    .map((e) => {
      const label = `${e.kind} #${e.id} (layout ${e.layoutIndex}: ${e.objects.join(', ')})`;
      return e.replay ? `<a href="${esc(e.replay)}">${esc(label)}</a>` : esc(label);
    })
    .join('<br>');
}

function patternTable(rows: readonly PatternRow[]): string {
  const body = rows
    .map(
      (p, i) =>
        `<tr><td>${i + 1}</td><td>${esc(p.words)}</td><td>${cell(p.pooled)}</td><td>${cell(p.sim)}</td><td>${cell(p.real)}</td><td>${esc(AGREEMENT_WORDS[p.agreement])}</td><td>${examples(p)}</td></tr>`,
    )
    .join('\n');
  return `<table><thead><tr><th>#</th><th>pattern</th><th>rollouts with it (all), 95% interval</th><th>sim</th><th>real</th><th>sim vs real</th><th>examples</th></tr></thead><tbody>${body}</tbody></table>`;
}

function conditionTable(cs: readonly ConditionEffect[]): string {
  if (cs.length === 0) return '<p>No condition splits the objects (every object shares it, or none does).</p>';
  const body = cs
    .map(
      (c) =>
        `<tr><td>${esc(c.words)}</td><td>${c.withCondition.failed}/${c.withCondition.of} = ${pct(c.withCondition.rate)}</td><td>${c.without.failed}/${c.without.of} = ${pct(c.without.rate)}</td><td>${c.riskDifference >= 0 ? '+' : ''}${pct(c.riskDifference)} [${pct(c.lower)}, ${pct(c.upper)}]</td><td>${c.cohensH.toFixed(2)}</td><td>${c.clear ? 'yes' : 'no'}</td></tr>`,
    )
    .join('\n');
  return `<table><thead><tr><th>condition</th><th>fail with it</th><th>fail without</th><th>difference, 95% interval</th><th>Cohen's h</th><th>clear</th></tr></thead><tbody>${body}</tbody></table>`;
}

export function renderDiagnosisHtml(
  d: FailureDiagnosis,
  meta: { readonly generatedAt: string; readonly tandemVersion: string },
): string {
  const tiers = d.tiers
    .map(
      (t) =>
        `<h3>Tier ${t.tier} <small>(${t.rollouts.sim} sim, ${t.rollouts.real} real rollouts)</small></h3>${t.patterns.length ? patternTable(t.patterns) : '<p>No failures on this tier.</p>'}`,
    )
    .join('\n');
  const top = d.top;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Failure diagnosis: ${esc(d.policy)}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem;max-width:84rem;color:#111}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}th,td{border:1px solid #bbb;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#eee}.top{font-size:1.15rem;background:#fff6d6;border:2px solid #c90;padding:.8rem}small{color:#555}
</style></head><body>
<h1>Failure diagnosis</h1>
<p>${esc(d.policy)} on ${esc(d.task)}, layout set ${esc(d.layoutSet.slice(0, 12))}; ${d.rollouts.sim} sim and ${d.rollouts.real} real rollouts diagnosed from their task events; intervals ${pct(d.confidence)} (Wilson, by rollout).</p>
${top ? `<p class="top"><strong>Top pattern:</strong> ${esc(top.sentence)}</p>` : '<p class="top">No failures: every diagnosed rollout did the whole task.</p>'}
<h2>All tiers</h2>
${d.overall.length ? patternTable(d.overall) : '<p>No failures.</p>'}
<h2>Per tier</h2>
${tiers}
<h2>Conditions that predict failure (per object, any failure)</h2>
${conditionTable(d.conditions)}
${top ? `<h2>Conditions that predict “${esc(top.words)}”</h2>${conditionTable(top.conditions)}` : ''}
${d.notes.length ? `<h2>Notes</h2><ul>${d.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : ''}
<p><small>Generated ${esc(meta.generatedAt)} by tandem ${esc(meta.tandemVersion)}.</small></p>
</body></html>
`;
}
