/** Store records → the API's shapes (what the UI lists), in one place. */
import type { LayoutSetRecord, PolicyRecord, RolloutRecord } from '../store/records.js';
import type { LayoutSetSummary, RolloutDetail, RolloutSummary } from './api-types.js';

/** Calibration kind of the emulated cell's marker (src/emulated-cell/cell-truth.ts EMULATED_CELL_KIND), read by hash only. */
export interface ViewContext {
  policy(id: number): PolicyRecord | undefined;
  taskOf(layoutSetSha256: string): string | null;
  isCellMarker(calibrationSha256: string): boolean;
  episodeSecondsOf(task: string): number;
}

export function layoutSetSummary(r: LayoutSetRecord, episodeSeconds: number): LayoutSetSummary {
  let tiers: number[] = [];
  try {
    const parsed = JSON.parse(r.canonicalJson) as { layouts?: { tier?: unknown }[] };
    tiers = [...new Set((parsed.layouts ?? []).map((l) => Number(l.tier)).filter(Number.isFinite))].sort(
      (a, b) => a - b,
    );
  } catch {
    // The store checked this JSON when it was put; an unreadable one just lists no tiers.
  }
  return {
    sha256: r.sha256,
    task: r.task,
    version: r.version,
    seed: r.seed,
    layoutCount: r.layoutCount,
    tiers,
    importedAt: r.importedAt,
    episodeSeconds,
  };
}

export function rolloutSummary(r: RolloutRecord, ctx: ViewContext): RolloutSummary {
  const p = ctx.policy(r.policyId);
  return {
    id: r.id,
    kind: r.kind,
    policy: { id: r.policyId, name: p?.name ?? `policy ${r.policyId}`, spec: p?.spec ?? '' },
    layoutSetSha256: r.layoutSetSha256,
    task: ctx.taskOf(r.layoutSetSha256),
    layoutIndex: r.layoutIndex,
    tier: r.tier,
    status: r.status,
    outcome: r.outcome,
    statusReason: r.statusReason,
    policyError: r.policyError,
    progress: r.effectiveProgress,
    scoredBy: r.latestScore ? (r.latestScore.operator ?? 'an operator') : r.progress !== null ? 'the sim' : null,
    startedAt: r.startedAt,
    durationS: r.durationS,
    episodeSeconds: r.episodeSeconds,
    controlHz: r.controlHz,
    emulatedCell: r.calibrationSha256s.some((h) => ctx.isCellMarker(h)),
    rehearsal: r.rehearsal,
    sessionId: r.sessionId,
  };
}

export function rolloutDetail(r: RolloutRecord, ctx: ViewContext): RolloutDetail {
  const s = r.latestScore;
  return {
    ...rolloutSummary(r, ctx),
    seed: r.seed,
    counts: s?.counts ?? r.counts,
    finalStateHash: r.finalStateHash,
    calibrationSha256s: r.calibrationSha256s,
    episodeFile: r.episodeFile,
    score: s
      ? { progress: s.progress, counts: s.counts, operator: s.operator, note: s.note, enteredAt: s.enteredAt }
      : null,
  };
}
