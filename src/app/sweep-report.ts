/**
 * How a sim sweep (in-process or queued) tells the operator how it went: the progress line while it
 * runs, then the per-tier table and the reasons rollouts were not scored, or one JSON line.
 */
import type { CliIo } from './command.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { SweepRollout } from '../sim/sweep.js';
import { summarizeByTier, type TierSummary } from '../analysis/tier-summary.js';

/** "12/40 ▕█████     ▏ 0.8 rollouts/s, ETA 35 s" — one line, redrawn in place on stderr. */
export function progressLine(done: number, total: number, elapsedS: number): string {
  const width = 24;
  const filled = Math.round((width * done) / Math.max(total, 1));
  const rate = elapsedS > 0 ? done / elapsedS : 0;
  const etaS = rate > 0 ? (total - done) / rate : NaN;
  const eta = Number.isFinite(etaS) ? (etaS >= 90 ? `${Math.round(etaS / 60)} min` : `${Math.round(etaS)} s`) : '…';
  return `${done}/${total} ▕${'█'.repeat(filled)}${' '.repeat(width - filled)}▏ ${rate.toFixed(2)} rollouts/s, ETA ${eta}`;
}

/** Per tier (and 'all'), the sum of a number over the tier's rollouts. */
function perTier(values: Iterable<readonly [number, number]>): (tier: number | 'all') => number {
  const byTier = new Map<number, number>();
  for (const [tier, v] of values) byTier.set(tier, (byTier.get(tier) ?? 0) + v);
  return (tier) => (tier === 'all' ? [...byTier.values()].reduce((a, b) => a + b, 0) : (byTier.get(tier) ?? 0));
}

interface TierCounts {
  readonly policyErrors: (tier: number | 'all') => number;
  readonly invalid: (tier: number | 'all') => number;
  readonly aborted: (tier: number | 'all') => number;
  readonly offTable: (tier: number | 'all') => number;
}

/**
 * The sweep's per-tier table. "policy errors" are valid, scored rollouts the policy's own error
 * ended early (inside the progress numbers); "invalid" and "aborted" are left out of them.
 */
export function tierTable(summaries: readonly TierSummary[], counts: TierCounts): string {
  const lines = [
    'tier  layouts  rollouts  mean progress  95% interval    policy errors  invalid  aborted  objects off table',
  ];
  for (const s of summaries) {
    lines.push(
      `${String(s.tier).padEnd(4)}  ${String(s.layouts).padStart(7)}  ${String(s.rollouts).padStart(8)}  ${s.meanProgress.toFixed(3).padStart(13)}  [${s.progressInterval.lower.toFixed(3)}, ${s.progressInterval.upper.toFixed(3)}]  ${String(counts.policyErrors(s.tier)).padStart(13)}  ${String(counts.invalid(s.tier)).padStart(7)}  ${String(counts.aborted(s.tier)).padStart(7)}  ${String(counts.offTable(s.tier)).padStart(17)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** What the sweep's summary needs of one rollout: from a worker's result, or a stored row. */
export interface SweepRow {
  readonly layoutIndex: number;
  readonly tier: number;
  readonly status: SweepRollout['status'];
  readonly outcome: SweepRollout['outcome'] | null;
  readonly reason?: string;
  readonly error?: string;
  readonly progress?: number;
  readonly counts?: Record<string, number>;
}

export function sweepRowOf(r: SweepRollout): SweepRow {
  return {
    layoutIndex: r.job.layoutIndex,
    tier: r.tier,
    status: r.status,
    outcome: r.outcome,
    reason: r.reason,
    error: r.error,
    progress: r.progress,
    counts: r.counts,
  };
}

export interface SweepReportInfo {
  readonly sessionId: number;
  readonly set: LayoutSet;
  readonly spec: string;
  readonly policyName: string;
  readonly total: number;
  readonly stopped: boolean;
  readonly calibrationSha256: string;
  readonly wallMs: number;
  /** Extra fields of the --json line (the queued sweep's). */
  readonly extraJson?: Record<string, unknown>;
}

/** Prints a sweep's outcome: the per-tier table and the reasons (or one JSON line). */
export function reportSweep(io: CliIo, json: boolean, info: SweepReportInfo, rows: readonly SweepRow[]): void {
  const { set, total } = info;
  const scored = rows.filter((r) => r.status === 'valid' && r.progress !== undefined);
  const countOf = (keep: (r: SweepRow) => boolean) => perTier(rows.filter(keep).map((r) => [r.tier, 1] as const));
  const counts: TierCounts = {
    policyErrors: countOf((r) => r.outcome === 'policy-error'),
    invalid: countOf((r) => r.status === 'invalid'),
    aborted: countOf((r) => r.status === 'aborted'),
    offTable: perTier(scored.map((r) => [r.tier, r.counts?.offTable ?? 0] as const)),
  };
  const offTable = counts.offTable;
  const summaries = summarizeByTier(
    scored.map((r) => ({ tier: r.tier, progress: r.progress!, layoutIndex: r.layoutIndex })),
    { seed: 0 },
  );
  if (json) {
    io.out(
      `${JSON.stringify({
        session: info.sessionId,
        layoutSet: set.sha256,
        policy: info.spec,
        rollouts: rows.length,
        total,
        stopped: info.stopped,
        invalid: rows.filter((r) => r.status === 'invalid').length,
        aborted: rows.filter((r) => r.status === 'aborted').length,
        policyErrors: rows.filter((r) => r.outcome === 'policy-error').length,
        simCalibration: info.calibrationSha256,
        wallSeconds: info.wallMs / 1000,
        ...info.extraJson,
        tiers: summaries.map((s) => ({
          tier: s.tier,
          layouts: s.layouts,
          rollouts: s.rollouts,
          meanProgress: s.meanProgress,
          low: s.progressInterval.lower,
          high: s.progressInterval.upper,
          successes: s.successes,
          policyErrors: counts.policyErrors(s.tier),
          invalid: counts.invalid(s.tier),
          aborted: counts.aborted(s.tier),
          offTable: offTable(s.tier),
        })),
      })}\n`,
    );
  } else {
    io.out(
      `${info.stopped ? `Stopped: ${rows.length} of ${total}` : `${total}`} rollouts of ${info.policyName} on ${set.task} stored as session ${info.sessionId} (${(info.wallMs / 1000).toFixed(1)} s).\n`,
    );
    if (summaries.length > 0) io.out(tierTable(summaries, counts));
    else io.out('No valid rollouts to summarise.\n');
    const reasons = [
      ...new Set(rows.filter((r) => r.status !== 'valid').map((r) => `${r.status}: ${r.reason ?? r.outcome}`)),
    ];
    for (const reason of reasons.slice(0, 5)) io.out(`not scored, ${reason}\n`);
    const errors = [...new Set(rows.filter((r) => r.error !== undefined).map((r) => r.error))];
    for (const error of errors.slice(0, 5)) io.out(`policy error (scored as it stood): ${error}\n`);
  }
}
