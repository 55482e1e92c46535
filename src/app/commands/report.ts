/**
 * `tandem report`: the paired sim/real report of several policies on one layout set, from the
 * station store — one self-contained HTML file, optionally PNG figures and the JSON behind every
 * number. The analysis lives in src/analysis (pure); this file reads the store and files, and
 * turns bad input into one sentence.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { intOption, requireString, UserError, type CliCommand } from '../command.js';
import { readLayoutSetFile, readUserFile } from './layouts.js';
import { withCommandStore } from '../station-store.js';
import { ReportInputError } from '../../analysis/paired-report.js';
import { storedPairedReport, type StoredReport } from '../../server/report-data.js';
import { checkDriftThresholds, DEFAULT_DRIFT_THRESHOLDS, type DriftThresholds } from '../../analysis/sim-drift.js';
import { readStationConfig, CELL_PRESET } from '../station-config.js';
import { renderReportHtml } from '../../analysis/report-html.js';
import type { ThroughputSummary } from '../../analysis/object-times.js';
import type { EngineAgreement } from '../../analysis/cross-engine.js';
import { reportFigures } from '../../analysis/report-figures.js';
import { checkCostConfig, DEFAULT_COST_CONFIG, type CostConfig } from '../../analysis/cost.js';
import { tandemVersion } from '../version.js';
import { ANALYSIS_METRICS, type AnalysisMetric } from '../../session/analysis-plan.js';
import type { AskedAnalysis } from '../../session/analysis-report.js';

/** --session ID [--alpha A] [--metric M]: the session's pre-registered analysis, checked against what is asked. */
function preregisteredArg(args: Parameters<CliCommand['run']>[0]): AskedAnalysis | undefined {
  const v = args.values;
  if (v.session === undefined) {
    if (v.alpha !== undefined || v.metric !== undefined)
      throw new UserError(
        "--alpha and --metric check a session's pre-registered analysis: give the session with --session ID.",
      );
    return undefined;
  }
  const session = Number(v.session);
  if (!Number.isSafeInteger(session) || session < 1)
    throw new UserError(
      `--session takes a session id (a whole number, as 'tandem session run' printed it), not '${String(v.session)}'.`,
    );
  const alpha = v.alpha === undefined ? undefined : Number(v.alpha);
  if (alpha !== undefined && !(alpha > 0 && alpha < 0.5))
    throw new UserError(`--alpha must be a number between 0 and 0.5, e.g. --alpha 0.05, not '${String(v.alpha)}'.`);
  const metric = v.metric === undefined ? undefined : String(v.metric);
  if (metric !== undefined && !(ANALYSIS_METRICS as readonly string[]).includes(metric))
    throw new UserError(`--metric is one of ${ANALYSIS_METRICS.join(', ')}, not '${metric}'.`);
  return {
    session,
    ...(alpha !== undefined ? { alpha } : {}),
    ...(metric !== undefined ? { metric: metric as AnalysisMetric } : {}),
  };
}

/** The drift alarm's thresholds: the station config's 'simDrift', then each --drift-* flag over it. */
function driftArg(
  args: Parameters<CliCommand['run']>[0],
  io: Parameters<CliCommand['run']>[1],
): Partial<DriftThresholds> {
  const v = args.values;
  const file = v['station-config'];
  const station =
    typeof file === 'string'
      ? readStationConfig(file === CELL_PRESET ? CELL_PRESET : resolve(io.cwd, file))
      : undefined;
  const out: Record<string, number> = { ...(station?.simDrift ?? {}) };
  const flags = [
    ['drift-min-r', 'minPearson', 'a number from -1 to 1, e.g. --drift-min-r 0.7'],
    ['drift-max-mmrv', 'maxMmrv', 'a number from 0 to 1, e.g. --drift-max-mmrv 0.15'],
    ['drift-max-gap', 'maxMeanAbsGap', 'a number from 0 to 1, e.g. --drift-max-gap 0.25'],
    ['drift-window', 'windowEvaluations', 'a whole number of evaluations of at least 1, e.g. --drift-window 3'],
  ] as const;
  for (const [flag, key, range] of flags) {
    const raw = v[flag];
    if (raw === undefined) continue;
    const x = String(raw).trim() === '' ? NaN : Number(raw);
    try {
      checkDriftThresholds({ [key]: x }, `--${flag}`);
    } catch {
      throw new UserError(`--${flag} must be ${range}, not '${String(raw)}'.`);
    }
    out[key] = x;
  }
  return out as Partial<DriftThresholds>;
}

function costArg(io: Parameters<CliCommand['run']>[1], file: unknown): Partial<CostConfig> | undefined {
  if (file === undefined) return undefined;
  if (typeof file !== 'string' || file === '')
    throw new UserError(
      '--cost needs a JSON file like {"operatorPerHour": 50, "robotPerHour": 20, "cpuCorePerHour": 0.05, "operatorOverheadS": 90, "currency": "USD"}.',
    );
  const { text } = readUserFile(io, file, 'cost config');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new UserError(`The cost config ${file} is not valid JSON (${(e as Error).message}).`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new UserError(`The cost config ${file} should be a JSON object like {"operatorPerHour": 50}.`);
  const known = new Set(Object.keys(DEFAULT_COST_CONFIG));
  for (const k of Object.keys(doc))
    if (!known.has(k))
      throw new UserError(
        `The cost config ${file} has '${k}', which is not a price tandem knows (${[...known].join(', ')}).`,
      );
  const merged = { ...DEFAULT_COST_CONFIG, ...(doc as Partial<CostConfig>) };
  try {
    checkCostConfig(merged);
  } catch (e) {
    throw new UserError(`The cost config ${file}: ${(e as Error).message}.`);
  }
  return doc as Partial<CostConfig>;
}

const duration = (s: number): string =>
  s < 60 ? `${s.toFixed(1)} s` : s < 3600 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(2)} h`;

/** Units per hour, MTBF and time to success in one line, beside the policy's progress. */
function throughputLine(t: ThroughputSummary): string {
  const uph = t.unitsPerHour === null ? '–' : t.unitsPerHour.toFixed(t.unitsPerHour < 10 ? 1 : 0);
  const mtbf = t.mtbfHours === null ? 'no failure' : `MTBF ${duration(t.mtbfHours * 3600)}`;
  const assisted =
    t.assists === 0
      ? ''
      : `, ${t.assists} assist${t.assists === 1 ? '' : 's'} in ${t.assistedRollouts} rollout${t.assistedRollouts === 1 ? '' : 's'} (MTBA ${duration(t.mtbaHours! * 3600)})`;
  const tts =
    t.medianS === null
      ? 'no time to success'
      : `median time to success ${t.medianS.toFixed(1)} s${t.halfDoneS === null ? '' : `, half the objects done by ${t.halfDoneS.toFixed(1)} s`}`;
  const untimed = t.untimedRolloutIds.length ? ` (${t.untimedRolloutIds.length} rollout(s) without times)` : '';
  return `${t.unitsDone}/${t.units} objects, ${uph} units/h, ${mtbf}${assisted}, ${tts}${untimed}`;
}

const rOf = (a: EngineAgreement): string =>
  a.pearson === null
    ? `not measured (${a.unavailable ?? ''})`
    : `r ${a.pearson.r === null ? 'undefined' : a.pearson.r.toFixed(3)}, MMRV ${a.mmrv!.toFixed(3)} over ${a.pairs.length} policies`;

/** Both engines on this set: each policy's progress on each (all tiers), the agreement, and the pairs they order differently. */
function crossEngineLines(r: StoredReport): string[] {
  const x = r.crossEngine;
  if (!x) return r.crossEngineUnavailable ? [r.crossEngineUnavailable] : [];
  const [a, b] = x.engines.map((e) => e.engine);
  const lines = [`Engines: ${x.sentence}`];
  for (const p of x.progress.filter((q) => q.tier === 'all')) {
    const engines = p.engines
      ? `${a} ${p.engines[0].progress.toFixed(2)}, ${b} ${p.engines[1].progress.toFixed(2)} (${p.engines[0].layouts} layouts)`
      : `not on both engines`;
    lines.push(
      `  ${p.policy}: ${engines}${p.real ? `; real ${p.real.progress.toFixed(2)} (${p.real.layouts} layouts with both engines)` : ''}`,
    );
  }
  const all = x.tiers.find((t) => t.tier === 'all');
  if (all) for (const g of [all.engines, ...all.real]) lines.push(`  ${g.of} against ${g.against}: ${rOf(g)}`);
  for (const d of all?.orderedDifferently ?? []) {
    const real = d.real
      ? `; real ${d.real.a.toFixed(2)} vs ${d.real.b.toFixed(2)}${d.realSidesWith === 'neither' ? ', a tie' : `, as ${d.realSidesWith}`}`
      : '';
    lines.push(
      `  ordered differently: ${d.a} vs ${d.b}: ${a} ${d.engines[0].a.toFixed(2)} vs ${d.engines[0].b.toFixed(2)}, ${b} ${d.engines[1].a.toFixed(2)} vs ${d.engines[1].b.toFixed(2)}${real}`,
    );
  }
  return lines;
}

function summaryText(r: StoredReport, htmlPath: string | undefined, pngs: readonly string[]): string {
  const lines: string[] = [];
  for (const p of r.policies) {
    const s = p.sim?.tiers.at(-1);
    const re = p.real?.tiers.at(-1);
    lines.push(
      `${p.label}: ${p.pairedLayouts} paired layouts; sim ${s ? s.meanProgress.toFixed(2) : '–'}, real ${re ? re.meanProgress.toFixed(2) : '–'}${p.controlVariate ? `, real with sim ${p.controlVariate.estimate.toFixed(2)} [${p.controlVariate.lower.toFixed(2)}, ${p.controlVariate.upper.toFixed(2)}]` : ''}`,
    );
    for (const side of ['sim', 'real'] as const) {
      const t = p.throughput[side];
      if (t) lines.push(`  ${side}: ${throughputLine(t)}`);
    }
    if (p.placement) lines.push(`  real: ${p.placement.sentence}`);
  }
  if (r.correlation) {
    const c = r.correlation;
    lines.push(
      `Pearson r ${c.pearson.r === null ? 'undefined' : c.pearson.r.toFixed(3)}, MMRV ${c.mmrv.value.toFixed(3)} over ${c.policies} policies; ${c.violations.length} rank violation${c.violations.length === 1 ? '' : 's'}.`,
    );
  } else if (r.correlationUnavailable) lines.push(r.correlationUnavailable);
  for (const a of r.abComparisons) lines.push(`${a.a} vs ${a.b}: ${a.verdict.sentence}`);
  if (r.preregistered) lines.push(r.preregistered.sentence);
  lines.push(r.simDrift.sentence);
  lines.push(...crossEngineLines(r));
  const s = r.segregated;
  if (s.awaitingScore.length)
    lines.push(
      `Not counted: ${s.awaitingScore.length} real rollout(s) await an operator score (${s.awaitingScore.join(', ')}).`,
    );
  if (s.invalidOrAborted.length) lines.push(`Not counted: ${s.invalidOrAborted.length} invalid or aborted rollout(s).`);
  if (s.otherCalibration.length)
    lines.push(`Not counted: ${s.otherCalibration.length} rollout(s) with another calibration.`);
  if (s.otherEpisodeLengthSentence) lines.push(s.otherEpisodeLengthSentence);
  for (const u of s.unpairedPolicies) lines.push(`${u.policy}: no paired data (${u.reason}).`);
  if (htmlPath) lines.push(`Wrote ${htmlPath}.`);
  for (const p of pngs) lines.push(`Wrote ${p}.`);
  return `${lines.join('\n')}\n`;
}

const report: CliCommand = {
  path: ['report'],
  summary: 'the paired sim/real report of several policies: HTML (inline SVG), PNG figures, JSON',
  help: `Usage: tandem report --policies SPEC,SPEC,… --layouts FILE [-o report.html] [--json] [--png DIR]
                     [--sim-calibration SHA256] [--real-calibration SHA256] [--episode-seconds S]
                     [--cost FILE] [--seed S] [--include-rehearsals]
                     [--session ID [--alpha A] [--metric M]]
                     [--station-config FILE] [--drift-min-r R] [--drift-max-mmrv M] [--drift-max-gap G] [--drift-window N]

For each policy (a spec as stored, e.g. code:bottles-in-the-bin?skill=0.5, or a store id), pairs
its real rollouts with its sim rollouts on the same layouts of the layout set, and writes one
self-contained HTML report: sim vs real with 95% intervals, Pearson r and MMRV with bootstrap
intervals over layouts (at least 3 policies), the rank violations, per-tier bars, the real mean
with sim as a control variate, a sequential A/B verdict, the failure breakdown and the cost
ledger. See docs/report.md.

  --policies LIST        comma-separated policy specs (or store ids), in iteration order
  --layouts FILE         the layout set (hash-verified); only rollouts on it are used
  -o, --output FILE      the HTML file (default report.html)
  --json                 print every number as JSON, each with the rollout ids behind it
  --png DIR              also write each figure as a PNG into DIR
  --sim-calibration SHA  use sim rollouts of this calibration only (needed when several are stored)
  --real-calibration SHA the same for the real side's calibration set
  --episode-seconds S    compare rollouts of this episode length only (needed when several are
                         stored: a 60 s sweep never pairs with 12 s real rollouts)
  --cost FILE            prices as JSON (operatorPerHour, robotPerHour, cpuCorePerHour,
                         operatorOverheadS, currency); defaults 50, 20, 0.05, 90, USD
  --seed S               bootstrap seed (default 1)
  --include-rehearsals   count rehearsals as results too: rollouts whose policy saw black frames
                         (--blank-cameras) or that ran on the emulated cell (left out by default)
  --session ID           add the session's pre-registered A/B analysis: its verdict by the plan's own
                         metric and α, and the rollouts stopping early saved against the fixed-N plan
  --alpha A, --metric M  what the analysis is expected to be: refused unless they are the plan's

The sim-twin drift alarm (every policy on the layout set, each real evaluation against the newest
sim calibration): thresholds from the station config's "simDrift", or these flags
  --station-config FILE  read "simDrift" from it (the thresholds the station's Rig page uses)
  --drift-min-r R        alarm when Pearson r across policies falls below R (default ${DEFAULT_DRIFT_THRESHOLDS.minPearson})
  --drift-max-mmrv M     alarm when MMRV rises above M (default ${DEFAULT_DRIFT_THRESHOLDS.maxMmrv})
  --drift-max-gap G      alarm when the mean |sim − real| of the policies' means rises above G (default ${DEFAULT_DRIFT_THRESHOLDS.maxMeanAbsGap})
  --drift-window N       evaluations (sessions, or days of rollouts outside one) pooled per point (default ${DEFAULT_DRIFT_THRESHOLDS.windowEvaluations})

Sweeps of these policies on both physics engines (one sim calibration per engine): the report
compares Rapier's with real and adds the engines' agreement — per policy and tier the progress on
each, their Pearson r and MMRV against each other and against real, and every pair of policies
they order differently (docs/report.md section 7).

Real rollouts awaiting a score, invalid or aborted rollouts, other calibrations and other
episode lengths are listed and left out, never averaged in.`,
  options: {
    policies: { type: 'string' },
    layouts: { type: 'string' },
    output: { type: 'string', short: 'o' },
    png: { type: 'string' },
    'sim-calibration': { type: 'string' },
    'real-calibration': { type: 'string' },
    'episode-seconds': { type: 'string' },
    cost: { type: 'string' },
    seed: { type: 'string' },
    'include-rehearsals': { type: 'boolean' },
    session: { type: 'string' },
    alpha: { type: 'string' },
    metric: { type: 'string' },
    'station-config': { type: 'string' },
    'drift-min-r': { type: 'string' },
    'drift-max-mmrv': { type: 'string' },
    'drift-max-gap': { type: 'string' },
    'drift-window': { type: 'string' },
  },
  async run(args, io) {
    const specs = requireString(args, 'policies')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    if (specs.length === 0)
      throw new UserError(
        '--policies needs at least one policy spec, e.g. --policies code:bottles-in-the-bin,code:bottles-in-the-bin?skill=0.5.',
      );
    const { set } = readLayoutSetFile(io, requireString(args, 'layouts'));
    const seed = intOption(args, 'seed', 1, 0, 2 ** 31 - 1);
    const cost = costArg(io, args.values.cost);
    const preregistered = preregisteredArg(args);
    const driftThresholds = driftArg(args, io);
    for (const flag of ['sim-calibration', 'real-calibration'] as const) {
      const v = args.values[flag];
      if (v !== undefined && !/^[0-9a-f]{64}(,[0-9a-f]{64})*$/.test(String(v)))
        throw new UserError(`--${flag} must be a calibration's 64-character hex SHA-256, not '${String(v)}'.`);
    }
    const episodeArg = args.values['episode-seconds'];
    const episodeSeconds = episodeArg === undefined ? undefined : Number(episodeArg);
    if (episodeSeconds !== undefined && !(Number.isFinite(episodeSeconds) && episodeSeconds > 0))
      throw new UserError(
        `--episode-seconds must be a positive number of seconds, e.g. --episode-seconds 12, not '${String(episodeArg)}'.`,
      );
    const { data, storeFile } = await withCommandStore(args.values, io, (store) => {
      try {
        const data = storedPairedReport(store, {
          policies: specs,
          layoutSet: set,
          simCalibration: args.values['sim-calibration'] as string | undefined,
          realCalibration: args.values['real-calibration'] as string | undefined,
          episodeSeconds,
          cost,
          seed,
          includeRehearsals: args.values['include-rehearsals'] === true,
          ...(preregistered ? { preregistered } : {}),
          driftThresholds,
        });
        return { data, storeFile: store.file };
      } catch (e) {
        if (e instanceof ReportInputError) throw new UserError(e.message);
        throw e;
      }
    });
    const meta = {
      generatedAt: new Date().toISOString(),
      tandemVersion: `${tandemVersion(io.env).version} (${tandemVersion(io.env).commit})`,
      store: storeFile,
    };
    const htmlPath = resolve(io.cwd, typeof args.values.output === 'string' ? args.values.output : 'report.html');
    try {
      writeFileSync(htmlPath, renderReportHtml(data, meta));
    } catch (e) {
      throw new UserError(`Cannot write the report to ${htmlPath}: ${(e as Error).message}.`);
    }
    const pngs: string[] = [];
    if (typeof args.values.png === 'string') {
      const dir = resolve(io.cwd, args.values.png);
      // sharp is loaded only here: other tandem commands start without it.
      const { default: sharp } = await import('sharp');
      try {
        mkdirSync(dir, { recursive: true });
        for (const f of reportFigures(data)) {
          const file = join(dir, `${f.name}.png`);
          await sharp(Buffer.from(f.svg), { density: 192 }).png().toFile(file);
          pngs.push(file);
        }
      } catch (e) {
        throw new UserError(`Cannot write the PNG figures into ${dir}: ${(e as Error).message}.`);
      }
    }
    if (args.values.json)
      io.out(`${JSON.stringify({ ...data, generatedAt: meta.generatedAt, html: htmlPath, png: pngs }, null, 2)}\n`);
    else io.out(summaryText(data, htmlPath, pngs));
    return 0;
  },
};

export const commands: CliCommand[] = [report];
