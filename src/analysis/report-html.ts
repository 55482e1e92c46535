/**
 * The paired report as one self-contained HTML file: inline SVG figures, inline CSS, no scripts,
 * nothing fetched. Every table row names the rollouts behind it in the JSON (`--json`); the HTML
 * says how many and where they were left out.
 */
import type { PairedReport, PolicyReport } from './paired-report.js';
import { escapeXml as esc, reportFigures } from './report-figures.js';
import { FAILURE_PATTERN_WORDS } from '../tasks/failure-patterns.js';
import type { SimDrift } from './sim-drift.js';
import { crossEngineSection } from './cross-engine-html.js';

export interface ReportMeta {
  /** When it was generated (ISO 8601), from the caller's clock. */
  readonly generatedAt: string;
  readonly tandemVersion: string;
  /** The store file the rollouts came from. */
  readonly store: string;
}

const n2 = (x: number | null | undefined): string =>
  x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(2);
const n3 = (x: number | null | undefined): string =>
  x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(3);
const ci = (lo: number | null, hi: number | null): string =>
  lo === null || hi === null ? '–' : `[${n2(lo)}, ${n2(hi)}]`;
const pct = (x: number): string => `${Math.round(x * 100)}%`;
const short = (h: string | null): string => (h === null || h === '' ? 'none' : h.slice(0, 12));
const money = (x: number | null, cur: string): string =>
  x === null ? '–' : `${x < 10 ? x.toFixed(2) : x.toFixed(0)} ${cur}`;
const hours = (h: number): string => (h < 1 ? `${(h * 60).toFixed(1)} min` : `${h.toFixed(2)} h`);

const CSS = `
body{font-family:Georgia,"Times New Roman",serif;color:#222;max-width:940px;margin:24px auto;padding:0 20px;line-height:1.45;font-size:15px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:3px}
.meta{color:#555;font-size:13px;margin-bottom:12px}.meta code{font-size:12px}
table{border-collapse:collapse;margin:8px 0 4px;font-size:13px;font-family:Helvetica,Arial,sans-serif}
th,td{padding:4px 9px;border-bottom:1px solid #e3e3e3;text-align:right;vertical-align:top;white-space:nowrap}td.w{white-space:normal}
th{background:#f4f4f4;font-weight:600;white-space:normal}td.l,th.l{text-align:left}
figure{margin:10px 0}figcaption{font-size:13px;color:#444;font-family:Helvetica,Arial,sans-serif}
.note{font-size:13px;color:#444;font-family:Helvetica,Arial,sans-serif}.warn{background:#fff6e0;border-left:4px solid #d09a1a;padding:6px 10px}
.decided{font-weight:600}.small{font-size:12px;color:#666}
@media print{body{margin:0}h2{break-after:avoid}figure,table{break-inside:avoid}}
`;

function policyRows(r: PairedReport): string {
  return r.policies
    .map((p, i) => {
      const s = p.sim?.tiers.at(-1);
      const re = p.real?.tiers.at(-1);
      const simAll = p.simAllLayouts?.tiers.at(-1);
      return `<tr><td>${i + 1}</td><td class="l w">${esc(p.label)}<div class="small">${esc(p.spec)}${p.checkpointSha256 ? ` · ${short(p.checkpointSha256)}` : ''}</div></td><td>${p.pairedLayouts}</td>
<td>${n2(s?.meanProgress)}</td><td>${s ? ci(s.progressInterval.lower, s.progressInterval.upper) : '–'}</td>
<td>${n2(re?.meanProgress)}</td><td>${re ? ci(re.progressInterval.lower, re.progressInterval.upper) : '–'}</td>
<td>${re ? `${re.successes}/${re.rollouts}` : '–'}</td><td>${simAll ? `${n2(simAll.meanProgress)} <span class="small">(${simAll.layouts} layouts, ${simAll.rollouts} rollouts)</span>` : '–'}</td></tr>`;
    })
    .join('\n');
}

function tierTable(p: PolicyReport): string {
  if (!p.real || !p.sim) return '';
  const rows = p.real.tiers.map((t) => {
    const s = p.sim!.tiers.find((q) => q.tier === t.tier);
    return `<tr><td class="l">${t.tier === 'all' ? 'all' : `tier ${t.tier}`}</td><td>${t.layouts}</td><td>${s?.rollouts ?? 0}</td><td>${n2(s?.meanProgress)}</td><td>${s ? ci(s.progressInterval.lower, s.progressInterval.upper) : '–'}</td><td>${t.rollouts}</td><td>${n2(t.meanProgress)}</td><td>${ci(t.progressInterval.lower, t.progressInterval.upper)}</td></tr>`;
  });
  return `<table><tr><th class="l">${esc(p.label)}</th><th>layouts</th><th>sim rollouts</th><th>sim</th><th>95%</th><th>real rollouts</th><th>real</th><th>95%</th></tr>${rows.join('')}</table>`;
}

export function renderReportHtml(
  r: PairedReport & { readonly simDrift?: SimDrift } & Parameters<typeof crossEngineSection>[0],
  meta: ReportMeta,
): string {
  const figs = reportFigures(r);
  const fig = (name: string, caption: string): string => {
    const f = figs.find((x) => x.name === name);
    return f ? `<figure>${f.svg}<figcaption>${caption}</figcaption></figure>` : '';
  };
  const c = r.correlation;
  const cur = r.cost.config.currency;
  const seg = r.segregated;
  const segLines: string[] = [];
  if (seg.awaitingScore.length)
    segLines.push(
      `${seg.awaitingScore.length} real rollout(s) await an operator score and are not counted (rollouts ${seg.awaitingScore.join(', ')}).`,
    );
  if (seg.invalidOrAborted.length)
    segLines.push(
      `${seg.invalidOrAborted.length} invalid or aborted rollout(s) are left out: ${seg.invalidOrAborted
        .slice(0, 6)
        .map((x) => `#${x.id} ${x.kind} ${x.status} (${esc(x.reason)})`)
        .join('; ')}${seg.invalidOrAborted.length > 6 ? '; …' : ''}.`,
    );
  if (seg.otherCalibration.length)
    segLines.push(
      `${seg.otherCalibration.length} rollout(s) ran with another calibration and are left out (rollouts ${seg.otherCalibration
        .slice(0, 12)
        .map((x) => x.id)
        .join(', ')}${seg.otherCalibration.length > 12 ? ', …' : ''}).`,
    );
  if (seg.otherEpisodeLengthSentence) segLines.push(esc(seg.otherEpisodeLengthSentence));
  for (const u of seg.unpairedPolicies) segLines.push(`${esc(u.policy)} has no paired data: ${esc(u.reason)}.`);
  if (seg.simWithoutObjectCounts.length)
    segLines.push(
      `${seg.simWithoutObjectCounts.length} sim rollout(s) were stored before per-object outcomes were kept and are not in the failure breakdown.`,
    );

  const violations = c
    ? c.violations.length
      ? `<table><tr><th class="l">policy</th><th class="l">ranked the other way against</th><th>sim</th><th>sim (other)</th><th>real</th><th>real (other)</th><th>violation |Δreal|</th><th class="l">drives MMRV</th></tr>${c.violations
          .map(
            (v) =>
              `<tr><td class="l">${esc(v.policy)}</td><td class="l">${esc(v.against)}</td><td>${n2(v.sim)}</td><td>${n2(v.againstSim)}</td><td>${n2(v.real)}</td><td>${n2(v.againstReal)}</td><td>${n3(v.size)}</td><td class="l">${v.drivesMmrv ? 'yes' : ''}</td></tr>`,
          )
          .join('')}</table>`
      : '<p class="note">No rank violations: sim orders these policies exactly as the real rig does.</p>'
    : '';

  const cvRows = r.policies
    .map((p) => {
      const cv = p.controlVariate;
      if (!cv)
        return `<tr><td class="l">${esc(p.label)}</td><td class="l w" colspan="6">${esc(p.controlVariateUnavailable ?? 'not available')}</td></tr>`;
      // A wider interval is no gain: sim does not track the real rig well enough on these layouts; read the real-only one.
      const gain =
        cv.widthRatio === null
          ? '–'
          : cv.widthRatio < 1
            ? `${pct(1 - cv.widthRatio)} narrower`
            : `no gain (${pct(cv.widthRatio - 1)} wider): read real only`;
      return `<tr><td class="l">${esc(p.label)}</td><td>${cv.pairedLayouts} / ${cv.simLayouts}</td><td>${n2(cv.realOnly.estimate)} ${ci(cv.realOnly.lower, cv.realOnly.upper)}</td><td>${n2(cv.estimate)} ${ci(cv.lower, cv.upper)}</td><td>${n2(cv.beta)}</td><td class="w">${gain}</td><td>${cv.equivalentRealLayouts === null ? '–' : cv.equivalentRealLayouts.toFixed(1)}</td></tr>`;
    })
    .join('');

  const ab = r.abComparisons.length
    ? `<table><tr><th class="l">A</th><th class="l">B</th><th>pairs</th><th>mean A − B</th><th>anytime-valid 95%</th><th class="l">verdict</th></tr>${r.abComparisons
        .map(
          (a) =>
            `<tr><td class="l">${esc(a.a)}</td><td class="l">${esc(a.b)}</td><td>${a.pairs}</td><td>${n2(a.verdict.meanDifference)}</td><td>${a.pairs ? ci(a.verdict.lower, a.verdict.upper) : '–'}</td><td class="l w${a.verdict.decided ? ' decided' : ''}">${esc(a.verdict.sentence)}</td></tr>`,
        )
        .join('')}</table>`
    : '<p class="note">Fewer than two policies with real rollouts: no A/B comparison.</p>';

  const pre = r.preregistered;
  const preregistered = pre
    ? `<h3>Pre-registered A/B analysis (session ${pre.session})</h3><p class="note">Analysis plan <code>${esc(short(pre.analysisSha256))}</code>, fixed before the first rollout: ${esc(pre.metric)}, α ${pre.alpha}, at most ${pre.verdict.maxPairs} pairs, stopping rule ${esc(pre.stoppingRule)} (margin ${n2(pre.margin)}); anytime-valid betting confidence sequence on ${esc(pre.b)} − ${esc(pre.a)}.</p>` +
      `<table><tr><th>pairs</th><th>mean ${esc(pre.b)} − ${esc(pre.a)}</th><th>anytime-valid ${Math.round((1 - pre.alpha) * 100)}%</th><th class="l">verdict</th><th>rollouts run / planned</th><th>saved</th></tr>` +
      `<tr><td>${pre.verdict.pairs} / ${pre.verdict.maxPairs}</td><td>${pre.verdict.pairs ? n2(pre.verdict.estimate) : '–'}</td><td>${ci(pre.verdict.lower, pre.verdict.upper)}</td><td class="l w${pre.verdict.stop ? ' decided' : ''}">${esc(pre.verdict.sentence)}</td><td>${pre.rolloutsRun} / ${pre.plannedRollouts}</td><td>${pre.stoppedEarly ? `${pre.rolloutsSaved} rollouts (≈ ${pre.minutesSaved} min)` : 'not stopped early'}</td></tr></table>`
    : '';

  const fails = r.failures.rows.filter((f) => f.sim.objects + f.real.objects > 0);
  const failTable = fails.length
    ? `<table><tr><th class="l">tier</th><th class="l">object</th><th class="l">failure pattern</th><th>sim</th><th>share of sim objects</th><th>real</th><th>share of real objects</th></tr>${fails
        .map(
          (f) =>
            `<tr><td class="l">${f.tier}</td><td class="l">${esc(f.kind)}</td><td class="l w">${esc(FAILURE_PATTERN_WORDS[f.pattern] ?? f.pattern)}</td><td>${f.sim.objects}/${f.sim.of}${f.sim.fromEndState ? '†' : ''}</td><td>${f.sim.of ? pct(f.sim.share) : '–'}</td><td>${f.real.objects}/${f.real.of}${f.real.fromEndState ? '†' : ''}</td><td>${f.real.of ? pct(f.real.share) : '–'}</td></tr>`,
        )
        .join('')}</table>`
    : '<p class="note">No failed objects in the scored rollouts.</p>';
  const failKey = fails.some((f) => f.sim.fromEndState || f.real.fromEndState)
    ? '<p class="note">† some of these objects are classified from the end state alone (their rollouts have no usable task events; listed below).</p>'
    : '';
  const ootTable = `<table><tr><th class="l">tier</th><th>sim rollouts out of time</th><th>real rollouts out of time</th></tr>${r.failures.outOfTime
    .map(
      (o) =>
        `<tr><td class="l">${o.tier}</td><td>${o.sim.rollouts}/${o.sim.of}</td><td>${o.real.rollouts}/${o.real.of}</td></tr>`,
    )
    .join('')}</table>`;

  const costRows = r.policies
    .map((p) => {
      const k = p.cost;
      return `<tr><td class="l">${esc(p.label)}</td><td>${k.realRollouts}</td><td>${hours(k.robotHours)}</td><td>${hours(k.operatorHours)}${k.operatorSecondsRecorded < k.realRollouts ? '*' : ''}</td><td>${money(k.realCost, cur)}</td><td>${k.simRollouts}</td><td>${hours(k.cpuCoreHours)}</td><td>${money(k.simCost, cur)}</td><td>${money(k.realOnlyEquivalentCost, cur)}</td></tr>`;
    })
    .join('');
  const cfg = r.cost.config;
  const d = r.simDrift;
  const driftSection = d
    ? `
<h2>9. Is the sim twin drifting?</h2>
<p class="${d.alarm ? 'warn note' : 'note'}">${esc(d.sentence)}</p>
<p class="note">Every policy with scored rollouts on this layout set, each real evaluation (a session, or a day of rollouts outside one) in time order, pooled with the ${d.thresholds.windowEvaluations - 1} before it, against the sim calibration <code>${esc(short(d.simCalibration))}</code> (the newest sim rollout's): Pearson r and MMRV across the policies' sim and real means, and their mean |sim − real|. Alarm thresholds: r &lt; ${d.thresholds.minPearson}, MMRV &gt; ${d.thresholds.maxMmrv}, mean |sim − real| &gt; ${d.thresholds.maxMeanAbsGap} (station config <code>simDrift</code>, or <code>--drift-*</code>).${d.unpairedRealRollouts ? ` ${d.unpairedRealRollouts} real rollout(s) have no sim result of that calibration on their layout and are not tracked.` : ''}</p>
${
  d.points.length
    ? `<table><tr><th class="l">evaluation</th><th class="l">date</th><th>policies</th><th>Pearson r</th><th>MMRV</th><th>mean |sim − real|</th><th class="l">status</th></tr>${d.points
        .map(
          (p) =>
            `<tr><td class="l">${esc(p.evaluation.name)}</td><td class="l">${esc(p.evaluation.lastAt.slice(0, 10))}</td><td>${p.pairs.length}</td><td>${p.pearson === null ? '–' : n2(p.pearson)}</td><td>${p.mmrv === null ? '–' : n3(p.mmrv)}</td><td>${n3(p.meanAbsGap)}</td><td class="l">${p.status === 'drift' ? `<b>beyond: ${p.breaches.map((b) => esc(b.metric)).join(', ')}</b>` : 'ok'}</td></tr>`,
        )
        .join('')}</table>`
    : ''
}`
    : '';
  const perHour = (x: number | null): string => (x === null ? '–' : x < 10 ? x.toFixed(1) : x.toFixed(0));
  const seconds = (x: number | null): string => (x === null ? '–' : `${x.toFixed(1)} s`);
  const throughputRows = r.policies
    .flatMap((p) =>
      (['sim', 'real'] as const).map((side) => {
        const t = p.throughput[side];
        if (!t) return '';
        return `<tr><td class="l">${esc(p.label)}</td><td class="l">${side}</td><td>${t.rollouts}</td><td>${t.unitsDone}/${t.units}</td><td>${perHour(t.unitsPerHour)}</td><td>${t.failures}</td><td>${t.mtbfHours === null ? 'no failure' : hours(t.mtbfHours)}</td><td>${t.assists === 0 ? 'none' : `${t.assists} in ${t.assistedRollouts} (${perHour(t.assistsPerHour)}/h)`}</td><td>${t.mtbaHours === null ? '–' : hours(t.mtbaHours)}</td><td>${seconds(t.medianS)}</td><td>${seconds(t.halfDoneS)}</td><td>${t.timedRollouts}/${t.rollouts}</td></tr>`;
      }),
    )
    .join('');
  const mm = (x: number | null): string => (x === null ? '–' : `${x.toFixed(1)} mm`);
  const placementRows = r.policies
    .filter((p) => p.placement)
    .map((p) => {
      const c = p.placement!;
      return `<tr><td class="l">${esc(p.label)}</td><td>${c.checked}/${c.rollouts}</td><td>${c.unchecked}</td><td>${mm(c.meanMaxErrorMm)}</td><td>${mm(c.worstMaxErrorMm)}</td><td>${c.errorProgressR === null ? '–' : n2(c.errorProgressR)}</td></tr>`;
    })
    .join('');
  const placement = placementRows
    ? `<h3>Placement before start</h3>
<p class="note">The placement check before each session rollout on the rig: the worst object's error between the overhead camera's frame and the sim twin's picture of the layout, as a covariate of progress (Pearson r of that error against the rollout's progress, over checked and scored rollouts; – below 3 or without spread). Unchecked: no calibrated overhead camera; the operator ran it unchecked.</p>
<table><tr><th class="l">policy</th><th>checked</th><th>unchecked</th><th>worst object, mean</th><th>worst object, max</th><th>r against progress</th></tr>${placementRows}</table>`
    : '';

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tandem report: ${esc(r.task)} · ${short(r.layoutSet)}</title><style>${CSS}</style></head>
<body>
<h1>Does sim rank these policies the way the real rig does?</h1>
<div class="meta">Task <b>${esc(r.task)}</b> · layout set <code>${esc(r.layoutSet)}</code><br>
sim calibration <code>${esc(short(r.simCalibration))}</code> · real calibration <code>${esc(short(r.realCalibration))}</code> · bootstrap seed ${r.seed}<br>
generated ${esc(meta.generatedAt)} by tandem ${esc(meta.tandemVersion)} from <code>${esc(meta.store)}</code>. Every number here is in the <code>--json</code> output with the rollout ids behind it.</div>
${segLines.length ? `<div class="warn note">${segLines.map((l) => `<div>${l}</div>`).join('')}</div>` : ''}

<h2>1. Sim vs real</h2>
${c ? `<p>Over ${c.policies} policies: Pearson <b>r = ${c.pearson.r === null ? `undefined (${esc(c.pearson.undefinedBecause ?? '')})` : n2(c.pearson.r)}</b> ${c.pearson.lower !== null ? `(95% ${ci(c.pearson.lower, c.pearson.upper)})` : ''}, <b>MMRV = ${n3(c.mmrv.value)}</b> (95% [${n3(c.mmrv.lower)}, ${n3(c.mmrv.upper)}]; 0 = sim ranks the policies as the real rig does). Intervals: percentile bootstrap over layouts, resampled jointly for all policies (${c.bootstrap.used} of ${c.bootstrap.resamples} resamples drew a layout of every policy).</p>` : `<p class="warn note">${esc(r.correlationUnavailable ?? '')}</p>`}
${fig('sim-vs-real', 'Each point is one policy: mean task progress over the layouts it ran both in sim and on the real rig; bars are 95% bootstrap intervals over layouts; dashed: sim = real.')}
<table><tr><th>#</th><th class="l">policy</th><th>paired layouts</th><th>sim</th><th>95%</th><th>real</th><th>95%</th><th>real full successes</th><th>sim, every layout</th></tr>
${policyRows(r)}</table>

<h2>2. Rank violations</h2>
<p class="note">A pair of policies sim orders one way and the real rig the other. MMRV averages, over policies, the largest real-progress gap among that policy's violations.</p>
${violations}

<h2>3. Per tier</h2>
${fig('tiers', 'Mean task progress per tier on paired layouts; whiskers are 95% bootstrap intervals over layouts.')}
${r.policies.map(tierTable).join('\n')}

<h2>4. Fewer real rollouts: sim as a control variate</h2>
<p class="note">Real mean estimated as mean(real − β·sim) over paired layouts + β·mean(sim) over every sim layout (prediction-powered inference); β = Cov/((1 + n/N)·Var) cross-fitted over ${r.policies.find((p) => p.controlVariate)?.controlVariate?.folds ?? 5} folds; 95% percentile bootstrap, paired and sim-only layouts resampled separately, β refitted each time. "Equivalent real layouts": how many real rollouts a real-only interval would need to be as narrow.</p>
${fig('control-variate', 'Grey: real rollouts alone. Blue: the same real rollouts with sim as a control variate.')}
<table><tr><th class="l">policy</th><th>layouts real / sim</th><th>real only, 95%</th><th>with sim, 95%</th><th>β</th><th>interval</th><th>equivalent real layouts</th></tr>${cvRows}</table>

<h2>5. Is the A/B answer already clear?</h2>
<p class="note">Neighbouring policies by real mean, compared on the layouts both ran on the real rig, one pair per layout in the order they ran: an anytime-valid confidence sequence for the mean difference (betting, Waudby-Smith &amp; Ramdas 2024). It may be read after every pair; once it excludes 0 the session can stop.</p>
${ab}
${preregistered}

<h2>6. How they fail</h2>
<p class="note">Per tier and object kind, pooled over the policies above: how each object that was not done failed, read from its rollout's task events (grasped, released, entered or left a region, knocked over, off the table), with the end state (the operator's score; the sim's measured one) deciding whether it failed at all. Out of time: still in a hand when the episode ran its length.</p>
${failTable}
${failKey}
${ootTable}
${r.failures.notes.map((n) => `<p class="note">${esc(n)}</p>`).join('')}

<h2>7. Throughput and time to success</h2>
<p class="note">Per object, when it became done for good: from the rollout's task events (the done count's last rise to it; sim and the emulated cell), else from the operator's "object done" marks during a session rollout, as many as the score counts done. Units per hour: objects done ÷ busy time, where a rollout that did every object is busy until its last success and any other for its whole episode. Mean time between failures: busy time ÷ objects not done. Over every scored rollout of the comparison (not only paired layouts); rollouts without times count in both, not in the curve.</p>
${fig('time-to-success', 'Share of all target objects (of the rollouts with times) done by each second of the episode; real solid, sim dashed.')}
<table><tr><th class="l">policy</th><th class="l">side</th><th>rollouts</th><th>objects done</th><th>units per hour</th><th>failures</th><th>mean time between failures</th><th>operator assists</th><th>mean time between assists</th><th>median time to success</th><th>half done by</th><th>rollouts with times</th></tr>${throughputRows}</table>
${placement}

<h2>8. What it cost</h2>
${fig('cost', 'Policies in the order given. Real only: the real rollouts a real-only evaluation needs for the same interval width. Sim-enabled: the real rollouts run plus the sim sweep.')}
<table><tr><th class="l">policy</th><th>real rollouts</th><th>robot time</th><th>operator time</th><th>real cost</th><th>sim rollouts</th><th>CPU core time</th><th>sim cost</th><th>real-only, same precision</th></tr>${costRows}</table>
<p class="note">Prices (edit with <code>--cost FILE</code>): operator ${cfg.operatorPerHour} ${esc(cur)}/h, rig ${cfg.robotPerHour} ${esc(cur)}/h, ${cfg.cpuCorePerHour} ${esc(cur)} per CPU core-hour. Robot time is each real rollout's stored duration. Operator time is what each rollout's evaluation-session journal recorded: placing the layout, standing by while the rig runs it, scoring, resetting. *Where no session journal has a rollout (it ran outside a session), the episode plus ${cfg.operatorOverheadS} s of placing, resetting and scoring is assumed. Sim CPU time is each sweep worker's wall time (one thread holds one core; an over-count when workers outnumber cores).</p>
${driftSection}
${crossEngineSection(r, '10. Does the verdict survive another physics engine?')}
</body></html>
`;
}
