// Prints the policy-level comparison scripts/sysid-policy-gap.sh ran: per policy and layout, the
// cell's progress beside the sim twin's with the built-in record and with the fitted one, the
// mean |sim − cell| over the paired layouts, and each report's Pearson r / MMRV. Reads only the
// files in WORK (the two `tandem report --json` outputs and the fit's --json), so every number is
// the report's own; nothing is recomputed here but the mean absolute gap.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const work = process.argv[2];
if (!work) {
  console.error('usage: node scripts/sysid-policy-gap-summary.mjs WORK');
  process.exit(2);
}
const read = (name) => JSON.parse(readFileSync(join(work, name), 'utf8'));
const reports = { default: read('report-default.json'), fitted: read('report-fitted.json') };
const fit = read('fit.json');

const fmt = (x) => (x === null || x === undefined || Number.isNaN(x) ? '  —  ' : x.toFixed(2).padStart(5));
const gaps = { default: [], fitted: [] };
console.log(
  `\nsim calibrations: built-in ${reports.default.simCalibration?.slice(0, 12)}…, fitted ${reports.fitted.simCalibration?.slice(0, 12)}…`,
);
console.log('policy                                   layout   cell  sim(built-in)  sim(fitted)');
for (const p of reports.default.policies) {
  const q = reports.fitted.policies.find((x) => x.key === p.key);
  for (const l of p.layouts) {
    const m = q?.layouts.find((x) => x.layoutIndex === l.layoutIndex);
    console.log(
      `${p.spec.padEnd(40)} ${String(l.layoutIndex).padStart(6)}  ${fmt(l.real)}  ${fmt(l.sim).padStart(13)}  ${fmt(m?.sim).padStart(11)}`,
    );
    if (l.real !== null && l.sim !== null) gaps.default.push(Math.abs(l.sim - l.real));
    if (m && m.real !== null && m.sim !== null) gaps.fitted.push(Math.abs(m.sim - m.real));
  }
}
const mean = (a) => (a.length ? a.reduce((s, x) => s + x, 0) / a.length : NaN);
for (const which of ['default', 'fitted']) {
  const r = reports[which];
  const c = r.correlation;
  const corr = c
    ? `Pearson r ${c.pearson.r === null ? `undefined (${c.pearson.undefinedBecause})` : c.pearson.r.toFixed(2)}, MMRV ${c.mmrv.value.toFixed(3)}`
    : `no correlation: ${r.correlationUnavailable}`;
  console.log(
    `${which === 'default' ? 'built-in record' : 'fitted record  '}: mean |sim − cell| ${mean(gaps[which]).toFixed(3)} over ${gaps[which].length} layout pairs; ${corr}`,
  );
}
const ho = fit.heldOut;
console.log(
  `fit ${fit.calibrationSha256.slice(0, 12)}… on ${fit.episodes.filter((e) => e.role === 'fit').length} takes, ${fit.episodes.filter((e) => e.role === 'holdout').length} held out (${fit.excluded.length} left out): held-out RMS ${(ho.beforeAll * 1000).toFixed(1)} → ${(ho.afterAll * 1000).toFixed(1)} mrad`,
);
