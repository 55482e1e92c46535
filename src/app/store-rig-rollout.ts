/**
 * A rig rollout into the station store: its row (layout, policy, outcome, task events, the
 * operator's takeover stretches, its calibrations) and score, then its episode file finished and
 * linked to the row — the one way `tandem rig rollout`, sessions and the station store a rollout.
 */
import type { PolicyInfo } from '../policy/contract.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { Store } from '../store/store.js';
import { loopStatsMetadata, type RigRolloutResult } from '../rollout/rig-rollout.js';
import type { RecordingSummary } from '../record/episode-recorder.js';
import { SCRIPTED_OPERATOR } from './session-operators.js';
import type { Episode } from '../rollout/episode.js';
import type { CellScore, RolloutOnRig } from './rollout-on-rig.js';

/**
 * Stores a rolloutOnRig's rollout (and score), then finishes its episode file, linked to the row —
 * the file is finished whatever happened to the store write, and its row says how it ended.
 */
export async function storeRolloutOnRig(
  store: Store,
  w: { spec: string; policy: PolicyInfo; set: LayoutSet; sessionId?: number },
  run: RolloutOnRig,
): Promise<{ rolloutId: number; recorded: RecordingSummary | undefined }> {
  const e = run.result.episode;
  let rolloutId: number | undefined;
  let recorded: RecordingSummary | undefined;
  try {
    rolloutId = storeRigRollout(store, {
      ...w,
      episode: e,
      result: run.result,
      cellMarker: run.rigMarker,
      score: run.score,
      episodeFile: run.recording?.file,
      rehearsal: run.rehearsal !== undefined,
    });
  } finally {
    recorded = await run.recording?.finish(rolloutId, {
      outcome: e.outcome,
      status: e.status,
      steps: String(e.trajectory.steps),
      ...loopStatsMetadata(run.result.loop),
    });
  }
  return { rolloutId, recorded };
}

/** One row for the rollout (and its operator score): everything the rig measured is kept, whatever the outcome. */
function storeRigRollout(
  store: Store,
  r: {
    spec: string;
    policy: PolicyInfo;
    set: LayoutSet;
    sessionId?: number;
    episode: Episode;
    result: RigRolloutResult;
    cellMarker?: { kind: string; sha256: string; json: string };
    score?: CellScore;
    episodeFile?: string;
    rehearsal: boolean;
  },
): number {
  const e = r.episode;
  store.putLayoutSet(r.set);
  // A policy server that does not report its checkpoint says 'unreported': stored as unknown, not refused after the rollout ran.
  const checkpoint =
    r.policy.checkpointSha256 && /^[0-9a-f]{64}$/.test(r.policy.checkpointSha256) ? r.policy.checkpointSha256 : null;
  const policy = store.upsertPolicy({ spec: r.spec, name: r.policy.name, checkpointSha256: checkpoint });
  if (r.cellMarker)
    store.putCalibration({
      sha256: r.cellMarker.sha256,
      kind: r.cellMarker.kind,
      version: 1,
      canonicalJson: r.cellMarker.json,
    });
  const id = store.insertRollout({
    kind: 'real',
    sessionId: r.sessionId ?? null,
    policyId: policy.id,
    layoutSetSha256: r.set.sha256,
    layoutIndex: e.layoutIndex,
    tier: e.tier,
    seed: e.seed,
    episodeSeconds: e.episodeSeconds,
    controlHz: e.controlHz,
    status: e.status,
    outcome: e.outcome,
    statusReason: e.reason ?? null,
    policyError: e.error ?? null,
    finalStateHash: e.finalStateHash || null,
    calibrationSha256s: r.cellMarker ? [r.cellMarker.sha256] : [],
    durationS: r.result.wallMs / 1000,
    episodeFile: r.episodeFile ?? null,
    taskEvents: e.taskEvents,
    rehearsal: r.rehearsal,
    takeovers: e.takeovers.map((t) => ({ startS: t.startS, endS: t.endS, open: t.open })),
  });
  if (r.score && e.status === 'valid') {
    store.insertOperatorScore({
      rolloutId: id,
      endStates: r.score.endStates,
      progress: r.score.progress,
      counts: r.score.counts,
      operator: SCRIPTED_OPERATOR,
    });
  }
  return id;
}
