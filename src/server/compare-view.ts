/**
 * The compare view's numbers: one policy on one layout set, real vs sim task progress per layout
 * and per tier, from the store's rollout rows. A rollout counts when it is valid and scored (its
 * latest operator score, else its own sim score); the others are listed, never averaged. Tier
 * means and their intervals come from src/analysis (the same numbers as the sweep and the report).
 */
import { summarizeByTier, type TierSummary } from '../analysis/tier-summary.js';
import type { RolloutRecord } from '../store/records.js';
import type {
  CompareChoice,
  CompareLayoutRow,
  CompareReport,
  CompareSide,
  CompareTierRow,
  CompareTierSide,
  CompareView,
} from './api-types.js';
import { ReportInputError } from '../analysis/paired-report.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import { ApiRefusal } from './request-checks.js';
import { parseLayoutSetSha } from './request-bodies.js';
import type { StoredReport, StoredReportOptions } from './report-data.js';

/** Bootstrap seed of the compare view's intervals: fixed, so a reload shows the same numbers. */
const INTERVAL_SEED = 0;

const counts = (r: RolloutRecord): boolean => r.status === 'valid' && r.effectiveProgress !== null;

function side(rows: readonly RolloutRecord[]): CompareSide {
  const counted = rows.filter(counts);
  const meanProgress = counted.length ? counted.reduce((s, r) => s + r.effectiveProgress!, 0) / counted.length : null;
  return { rollouts: rows.length, counted: counted.length, meanProgress, notCounted: rows.length - counted.length };
}

function tierSide(t: TierSummary | undefined): CompareTierSide | null {
  if (!t) return null;
  return {
    layouts: t.layouts,
    rollouts: t.rollouts,
    meanProgress: t.meanProgress,
    lower: t.progressInterval.lower,
    upper: t.progressInterval.upper,
  };
}

export interface CompareInput {
  readonly policy: CompareView['policy'];
  readonly layoutSet: {
    readonly sha256: string;
    readonly task: string;
    readonly layouts: readonly { readonly index: number; readonly tier: number }[];
  };
  /** This policy's rollouts on this set, real and sim. */
  readonly rollouts: readonly RolloutRecord[];
  isCellMarker(calibrationSha256: string): boolean;
}

export function compareView(o: CompareInput): CompareView {
  const real = o.rollouts.filter((r) => r.kind === 'real');
  const sim = o.rollouts.filter((r) => r.kind === 'sim');
  const layouts: CompareLayoutRow[] = o.layoutSet.layouts.map((l) => {
    const r = side(real.filter((x) => x.layoutIndex === l.index));
    const s = side(sim.filter((x) => x.layoutIndex === l.index));
    return {
      layout: l.index,
      tier: l.tier,
      real: r,
      sim: s,
      gap: r.meanProgress !== null && s.meanProgress !== null ? r.meanProgress - s.meanProgress : null,
    };
  });
  const summary = (rows: readonly RolloutRecord[]): TierSummary[] =>
    summarizeByTier(
      rows.filter(counts).map((r) => ({ tier: r.tier, progress: r.effectiveProgress!, layoutIndex: r.layoutIndex })),
      { seed: INTERVAL_SEED },
    );
  const realTiers = summary(real);
  const simTiers = summary(sim);
  const tierKeys: (number | 'all')[] = [...new Set(o.layoutSet.layouts.map((l) => l.tier))].sort((a, b) => a - b);
  tierKeys.push('all');
  const tiers: CompareTierRow[] = tierKeys.map((tier) => ({
    tier,
    real: tierSide(realTiers.find((t) => t.tier === tier)),
    sim: tierSide(simTiers.find((t) => t.tier === tier)),
  }));
  return {
    policy: o.policy,
    layoutSet: { sha256: o.layoutSet.sha256, task: o.layoutSet.task, layoutCount: o.layoutSet.layouts.length },
    layouts,
    tiers,
    realOnEmulatedCell: real.some((r) => r.calibrationSha256s.some((h) => o.isCellMarker(h))),
  };
}

/** Every (policy, layout set) with stored rollouts, most recently run first. */
export function compareChoices(
  rollouts: readonly RolloutRecord[],
  policyOf: (id: number) => CompareChoice['policy'],
  taskOf: (sha: string) => string | null,
): CompareChoice[] {
  const byKey = new Map<string, { policyId: number; sha: string; real: number; sim: number; last: number }>();
  for (const r of rollouts) {
    const key = `${r.policyId}:${r.layoutSetSha256}`;
    const e = byKey.get(key) ?? { policyId: r.policyId, sha: r.layoutSetSha256, real: 0, sim: 0, last: 0 };
    if (r.kind === 'real') e.real += 1;
    else e.sim += 1;
    e.last = Math.max(e.last, r.id);
    byKey.set(key, e);
  }
  return [...byKey.values()]
    .sort((a, b) => b.last - a.last)
    .map((e) => ({
      policy: policyOf(e.policyId),
      layoutSet: e.sha,
      task: taskOf(e.sha),
      realRollouts: e.real,
      simRollouts: e.sim,
    }));
}

/**
 * GET /api/compare/report?layoutSet=SHA[&policies=ID,ID,…][&simCalibration=SHA][&realCalibration=SHA][&episodeSeconds=S]:
 * the paired report of these policies (store ids or specs, in iteration order; default every
 * policy with rollouts on the set, oldest first) — `tandem report --json`'s data. Pure parsing;
 * the station builds it on its report thread.
 */
export function compareReportQuery(
  params: URLSearchParams,
  o: { loadLayoutSet(sha: string): LayoutSet | undefined; policiesOnSet(sha: string): readonly number[] },
): StoredReportOptions {
  const sha = parseLayoutSetSha(params.get('layoutSet') ?? '');
  const layoutSet = o.loadLayoutSet(sha);
  if (!layoutSet) throw new ApiRefusal(404, `There is no layout set ${sha.slice(0, 12)}… in the store.`);
  const listed = (params.get('policies') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const policies = listed.length > 0 ? listed : o.policiesOnSet(sha).map(String);
  if (policies.length === 0)
    throw new ApiRefusal(
      404,
      `No policy has rollouts on layout set ${sha.slice(0, 12)}… yet: run rollouts on the rig and a sim sweep on it first.`,
    );
  const calibration = (name: string): string | undefined => {
    const v = params.get(name);
    if (v === null || v === '') return undefined;
    if (!/^[0-9a-f]{64}(,[0-9a-f]{64})*$/.test(v))
      throw new ApiRefusal(400, `${name} must be a calibration's 64-character hex SHA-256, not '${v.slice(0, 80)}'.`);
    return v;
  };
  const simCalibration = calibration('simCalibration');
  const realCalibration = calibration('realCalibration');
  const seconds = params.get('episodeSeconds');
  const episodeSeconds = seconds === null || seconds === '' ? undefined : Number(seconds);
  if (episodeSeconds !== undefined && !(Number.isFinite(episodeSeconds) && episodeSeconds > 0))
    throw new ApiRefusal(
      400,
      `episodeSeconds must be a positive number of seconds, not '${String(seconds).slice(0, 80)}'.`,
    );
  // Rehearsals (black frames, the emulated cell) count as results only when asked.
  const includeRehearsals = params.get('rehearsals') === 'include';
  return {
    policies,
    layoutSet,
    ...(simCalibration ? { simCalibration } : {}),
    ...(realCalibration ? { realCalibration } : {}),
    ...(episodeSeconds !== undefined ? { episodeSeconds } : {}),
    ...(includeRehearsals ? { includeRehearsals } : {}),
  };
}

/** The report as the compare view gets it: a refusal in words (400) when it cannot be made as asked. */
export async function compareReport(
  build: (o: StoredReportOptions) => Promise<StoredReport>,
  options: StoredReportOptions,
  isCellMarker: (sha: string) => boolean,
): Promise<CompareReport> {
  let report: StoredReport;
  try {
    report = await build(options);
  } catch (e) {
    if (e instanceof ReportInputError) throw new ApiRefusal(400, e.message, e.choices);
    throw e;
  }
  const realOnEmulatedCell = (report.realCalibration ?? '').split(',').some((h) => h !== '' && isCellMarker(h));
  return { ...report, realOnEmulatedCell, layoutTiers: options.layoutSet.layouts.map((l) => l.tier) };
}
