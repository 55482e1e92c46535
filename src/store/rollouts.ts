/**
 * Rollouts in the store, real and sim, with their calibrations and task events: each points at a
 * policy, a layout set and a layout that exist, and takes its tier from the set, not the caller.
 * Reads join the score in force (the newest operator score) into each rollout.
 */
import type { TaskEvent } from '../tasks/task-events.js';
import { checkCounts, checkUnitInterval, nowIso, numOrNull, parseJson, type Row, strOrNull } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { Calibrations } from './calibrations.js';
import type { LayoutSets } from './layout-sets.js';
import type { Policies } from './policies.js';
import type {
  Counts,
  LayoutOutcomeRow,
  OutcomeCountRow,
  RolloutFilter,
  RolloutInput,
  RolloutKind,
  RolloutOutcome,
  RolloutRecord,
  RolloutStatus,
  TakeoverRecord,
} from './records.js';
import { scoreRecord } from './scores.js';
import type { Sessions } from './sessions.js';

/** The outcomes of valid (scored) rollouts; every other outcome is invalid or aborted. */
const VALID_OUTCOMES: ReadonlySet<string> = new Set(['completed', 'policy-error'] satisfies RolloutRecord['outcome'][]);

const ROLLOUT_SELECT = `
  SELECT r.*,
         (SELECT group_concat(calibration_sha256, ',') FROM rollout_calibrations c WHERE c.rollout_id = r.id) AS calibrations,
         s.id AS s_id, s.rollout_id AS s_rollout_id, s.entered_at AS s_entered_at, s.end_states_json AS s_end_states_json,
         s.progress AS s_progress, s.counts_json AS s_counts_json, s.operator AS s_operator, s.note AS s_note
  FROM rollouts r
  LEFT JOIN operator_scores s ON s.id = (SELECT max(id) FROM operator_scores WHERE rollout_id = r.id)`;

/** The WHERE clause (with its leading space, or empty) and parameters of a rollout filter; `prefix` names the table alias ('r.'). */
function rolloutWhere(filter: RolloutFilter, prefix: string): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  for (const [column, value] of [
    ['kind', filter.kind],
    ['policy_id', filter.policyId],
    ['layout_set_sha256', filter.layoutSetSha256],
    ['session_id', filter.sessionId],
    ['status', filter.status],
    ['tier', filter.tier],
    ['rehearsal', filter.rehearsal === undefined ? undefined : filter.rehearsal ? 1 : 0],
  ] as const) {
    if (value === undefined) continue;
    clauses.push(`${prefix}${column} = ?`);
    params.push(value);
  }
  return { where: clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '', params };
}

/** The records a rollout must point at. */
export interface RolloutReferences {
  readonly policies: Policies;
  readonly layoutSets: LayoutSets;
  readonly sessions: Sessions;
  readonly calibrations: Calibrations;
}

export class Rollouts {
  constructor(
    private readonly c: StoreConnection,
    private readonly kinds: RolloutReferences,
  ) {}

  /** Checks and inserts one rollout inside the caller's transaction; returns its id. */
  insertChecked(input: RolloutInput): number {
    return this.insertRolloutRow(input, this.checkRollout(input));
  }

  private checkRollout(input: RolloutInput): number {
    const where = `Rollout on layout ${input.layoutIndex} of ${input.layoutSetSha256.slice(0, 12)}…`;
    if (!this.kinds.policies.getPolicy(input.policyId))
      throw this.c.error(`${where}: there is no policy ${input.policyId} in the store (upsertPolicy first).`);
    const tiers = this.kinds.layoutSets.layoutTiers(input.layoutSetSha256);
    if (!tiers) throw this.c.error(`${where}: that layout set is not in the store (putLayoutSet first).`);
    if (!Number.isSafeInteger(input.layoutIndex) || input.layoutIndex < 0 || input.layoutIndex >= tiers.length) {
      throw this.c.error(`${where}: the set has layouts 0 to ${tiers.length - 1}.`);
    }
    const tier = tiers[input.layoutIndex];
    if (input.tier !== undefined && input.tier !== tier)
      throw this.c.error(`${where}: that layout is tier ${tier}, not tier ${input.tier}.`);
    if (input.sessionId != null) {
      const session = this.kinds.sessions.getSession(input.sessionId);
      if (!session) throw this.c.error(`${where}: there is no session ${input.sessionId} in the store.`);
      if (session.endedAt !== null)
        throw this.c.error(`${where}: session ${input.sessionId} ended at ${session.endedAt}; start a new session.`);
    }
    for (const sha of input.calibrationSha256s ?? []) {
      if (!this.kinds.calibrations.getCalibration(sha))
        throw this.c.error(`${where}: calibration ${sha} is not in the store (putCalibration first).`);
    }
    if (!(input.episodeSeconds > 0) || !(input.controlHz > 0))
      throw new RangeError(`${where}: episodeSeconds and controlHz must be positive`);
    if (input.outcome != null && !VALID_OUTCOMES.has(input.outcome) !== (input.status !== 'valid')) {
      throw this.c.error(
        `${where}: outcome '${input.outcome}' does not go with status '${input.status}' (see the outcome table in docs/rig-model.md).`,
      );
    }
    if (input.policyError != null && input.status !== 'valid') {
      throw this.c.error(
        `${where}: a policy error is recorded only on a valid rollout; an ${input.status} one says why in its status reason.`,
      );
    }
    checkUnitInterval('progress', input.progress);
    checkCounts('counts', input.counts);
    return tier;
  }

  private insertRolloutRow(input: RolloutInput, tier: number): number {
    const r = this.c
      .sql(
        `INSERT INTO rollouts (session_id, kind, policy_id, layout_set_sha256, layout_index, tier, seed, repeat_index, episode_seconds, control_hz,
           status, outcome, status_reason, policy_error, progress, counts_json, final_state_hash, started_at, duration_s, episode_file, sweep_id, rehearsal)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        input.sessionId ?? null,
        input.kind,
        input.policyId,
        input.layoutSetSha256,
        input.layoutIndex,
        tier,
        input.seed ?? null,
        input.repeatIndex ?? 0,
        input.episodeSeconds,
        input.controlHz,
        input.status,
        input.outcome ?? (input.status === 'valid' ? (input.policyError != null ? 'policy-error' : 'completed') : null),
        input.statusReason ?? null,
        input.policyError ?? null,
        input.progress ?? null,
        input.counts == null ? null : JSON.stringify(input.counts),
        input.finalStateHash ?? null,
        input.startedAt ?? nowIso(),
        input.durationS ?? null,
        input.episodeFile ?? null,
        input.sweepId ?? null,
        input.rehearsal ? 1 : 0,
      );
    const id = Number(r.lastInsertRowid);
    const link = this.c.sql(
      'INSERT OR IGNORE INTO rollout_calibrations (rollout_id, calibration_sha256) VALUES (?, ?)',
    );
    for (const sha of input.calibrationSha256s ?? []) link.run(id, sha);
    const event = this.c.sql(
      'INSERT INTO task_events (rollout_id, seq, time_s, kind, object_id, region, arm, done, total, delta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    (input.taskEvents ?? []).forEach((e, seq) =>
      event.run(
        id,
        seq,
        e.timeS,
        e.kind,
        e.objectId ?? null,
        e.region ?? null,
        e.arm ?? null,
        e.done ?? null,
        e.total ?? null,
        e.delta ?? null,
      ),
    );
    const takeover = this.c.sql(
      'INSERT INTO rollout_takeovers (rollout_id, seq, start_s, end_s, open) VALUES (?, ?, ?, ?, ?)',
    );
    (input.takeovers ?? []).forEach((t, seq) => takeover.run(id, seq, t.startS, t.endS, t.open ? 1 : 0));
    return id;
  }

  /** The stretches the operator drove in a rollout, in order (empty: nobody took over). */
  listTakeovers(rolloutId: number): TakeoverRecord[] {
    const rows = this.c.guard(
      () =>
        this.c
          .sql('SELECT start_s, end_s, open FROM rollout_takeovers WHERE rollout_id = ? ORDER BY seq')
          .all(rolloutId) as Row[],
    );
    return rows.map((r) => ({ startS: Number(r.start_s), endS: Number(r.end_s), open: Number(r.open) === 1 }));
  }

  /** A rollout's task events in the order they happened (empty when nothing watched its table). */
  listTaskEvents(rolloutId: number): TaskEvent[] {
    const rows = this.c.guard(
      () => this.c.sql('SELECT * FROM task_events WHERE rollout_id = ? ORDER BY seq').all(rolloutId) as Row[],
    );
    return rows.map((r) => {
      const e: { -readonly [K in keyof TaskEvent]: TaskEvent[K] } = {
        timeS: Number(r.time_s),
        kind: r.kind as TaskEvent['kind'],
      };
      if (r.object_id !== null) e.objectId = String(r.object_id);
      if (r.region !== null) e.region = String(r.region);
      if (r.arm !== null) e.arm = r.arm as TaskEvent['arm'];
      if (r.done !== null) Object.assign(e, { done: Number(r.done), total: Number(r.total), delta: Number(r.delta) });
      return e;
    });
  }

  /** Records one rollout; returns its id once committed. */
  insertRollout(input: RolloutInput): number {
    return this.c.write(() => this.insertChecked(input));
  }

  /** Records many rollouts in one transaction (a sweep's batch): all are committed, or none. */
  insertRollouts(inputs: readonly RolloutInput[]): number[] {
    return this.c.write(() => inputs.map((input) => this.insertChecked(input)));
  }

  getRollout(id: number): RolloutRecord | undefined {
    const r = this.c.guard(() => this.c.sql(`${ROLLOUT_SELECT} WHERE r.id = ?`).get(id) as Row | undefined);
    return r ? this.rolloutRecord(r) : undefined;
  }

  /** Rollouts matching every given field, oldest first. */
  listRollouts(filter: RolloutFilter = {}): RolloutRecord[] {
    const { where, params } = rolloutWhere(filter, 'r.');
    const sql = `${ROLLOUT_SELECT}${where} ORDER BY r.id`;
    return this.c.guard(() => (this.c.sql(sql).all(...params) as Row[]).map((r) => this.rolloutRecord(r)));
  }

  /**
   * Per (policy, kind, layout set, layout) outcome counts, aggregated in SQL: what per-tier reports
   * need, without materialising every rollout of a 100 000-rollout sweep.
   */
  layoutOutcomes(filter: RolloutFilter = {}): LayoutOutcomeRow[] {
    const { where, params } = rolloutWhere(filter, 'r.');
    const sql = `
      WITH outcome AS (
        SELECT r.policy_id, r.kind, r.layout_set_sha256, r.layout_index, r.tier, r.status, r.outcome,
               coalesce((SELECT s.progress FROM operator_scores s WHERE s.rollout_id = r.id ORDER BY s.id DESC LIMIT 1), r.progress) AS p
        FROM rollouts r${where}
      )
      SELECT policy_id, kind, layout_set_sha256, layout_index, tier,
             sum(status = 'valid' AND p IS NOT NULL) AS scored,
             total(CASE WHEN status = 'valid' THEN p END) AS progress_sum,
             sum(status = 'valid' AND p = 1) AS full_successes,
             sum(status = 'valid' AND p IS NULL) AS unscored,
             sum(status = 'valid' AND outcome = 'policy-error') AS policy_errors,
             sum(status = 'invalid') AS invalid,
             sum(status = 'aborted') AS aborted,
             sum(status <> 'valid') AS excluded
      FROM outcome
      GROUP BY policy_id, kind, layout_set_sha256, layout_index, tier
      ORDER BY policy_id, kind, layout_set_sha256, layout_index`;
    return this.c.guard(() =>
      (this.c.sql(sql).all(...params) as Row[]).map((r) => ({
        policyId: Number(r.policy_id),
        kind: r.kind as LayoutOutcomeRow['kind'],
        layoutSetSha256: String(r.layout_set_sha256),
        layoutIndex: Number(r.layout_index),
        tier: Number(r.tier),
        scored: Number(r.scored),
        progressSum: Number(r.progress_sum),
        fullSuccesses: Number(r.full_successes),
        unscored: Number(r.unscored),
        policyErrors: Number(r.policy_errors),
        invalid: Number(r.invalid),
        aborted: Number(r.aborted),
        excluded: Number(r.excluded),
      })),
    );
  }

  /** How many rollouts ended each way (status and outcome), per policy and kind, for the same filters. */
  outcomeCounts(filter: RolloutFilter = {}): OutcomeCountRow[] {
    const { where, params } = rolloutWhere(filter, '');
    const sql = `SELECT policy_id, kind, status, outcome, count(*) AS n FROM rollouts${where}
      GROUP BY policy_id, kind, status, outcome ORDER BY policy_id, kind, status, outcome`;
    return this.c.guard(() =>
      (this.c.sql(sql).all(...params) as Row[]).map((r) => ({
        policyId: Number(r.policy_id),
        kind: r.kind as RolloutKind,
        status: r.status as RolloutStatus,
        outcome: r.outcome == null ? null : (String(r.outcome) as RolloutOutcome),
        rollouts: Number(r.n),
      })),
    );
  }

  private rolloutRecord(r: Row): RolloutRecord {
    const latestScore = r.s_id == null ? null : scoreRecord(r, 's_');
    const progress = numOrNull(r.progress);
    return {
      id: Number(r.id),
      sessionId: numOrNull(r.session_id),
      kind: r.kind as RolloutRecord['kind'],
      policyId: Number(r.policy_id),
      layoutSetSha256: String(r.layout_set_sha256),
      layoutIndex: Number(r.layout_index),
      tier: Number(r.tier),
      seed: numOrNull(r.seed),
      repeatIndex: Number(r.repeat_index),
      episodeSeconds: Number(r.episode_seconds),
      controlHz: Number(r.control_hz),
      status: r.status as RolloutRecord['status'],
      outcome: r.outcome == null ? null : (String(r.outcome) as RolloutOutcome),
      statusReason: strOrNull(r.status_reason),
      policyError: strOrNull(r.policy_error),
      progress,
      counts: r.counts_json == null ? null : parseJson<Counts>(r.counts_json),
      finalStateHash: strOrNull(r.final_state_hash),
      calibrationSha256s: r.calibrations == null ? [] : String(r.calibrations).split(',').sort(),
      startedAt: String(r.started_at),
      durationS: numOrNull(r.duration_s),
      episodeFile: strOrNull(r.episode_file),
      sweepId: strOrNull(r.sweep_id),
      latestScore,
      effectiveProgress: latestScore ? latestScore.progress : progress,
      rehearsal: Number(r.rehearsal) === 1,
    };
  }
}
