/**
 * Operator scores in the store: append-only (the database refuses UPDATE and DELETE), so a
 * correction is a later row and the newest row of a rollout is the score in force.
 */
import { checkCounts, checkUnitInterval, nowIso, parseJson, type Row, strOrNull } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { Counts, OperatorScoreInput, OperatorScoreRecord } from './records.js';

/** A score from its columns; `prefix` names them when joined into another row ('s_' in a rollout's). */
export function scoreRecord(r: Row, prefix = ''): OperatorScoreRecord {
  return {
    id: Number(r[`${prefix}id`]),
    rolloutId: Number(r[`${prefix}rollout_id`]),
    enteredAt: String(r[`${prefix}entered_at`]),
    endStates: parseJson(r[`${prefix}end_states_json`]),
    progress: Number(r[`${prefix}progress`]),
    counts: parseJson<Counts>(r[`${prefix}counts_json`]),
    operator: strOrNull(r[`${prefix}operator`]),
    note: strOrNull(r[`${prefix}note`]),
  };
}

/** Refuses a score whose progress or counts are not numbers a report can use. */
export function checkScore(score: OperatorScoreInput): void {
  checkUnitInterval('progress', score.progress);
  checkCounts('counts', score.counts);
}

export class OperatorScores {
  constructor(
    private readonly c: StoreConnection,
    private readonly rolloutExists: (id: number) => boolean,
  ) {}

  /** Appends an operator's score for a rollout; a correction is simply a later score. Returns its id. */
  insertOperatorScore(input: OperatorScoreInput): number {
    if (!this.rolloutExists(input.rolloutId))
      throw this.c.error(`There is no rollout ${input.rolloutId} in the store to score.`);
    checkScore(input);
    return this.c.write(() => this.insertRow(input, nowIso()));
  }

  /** Inserts a checked score inside the caller's transaction; `enteredAt` when the input has none. Returns its id. */
  insertRow(score: OperatorScoreInput, enteredAt: string): number {
    const r = this.c
      .sql(
        'INSERT INTO operator_scores (rollout_id, entered_at, end_states_json, progress, counts_json, operator, note) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        score.rolloutId,
        score.enteredAt ?? enteredAt,
        JSON.stringify(score.endStates),
        score.progress,
        JSON.stringify(score.counts),
        score.operator ?? null,
        score.note ?? null,
      );
    return Number(r.lastInsertRowid);
  }

  /** Every score entered for a rollout, oldest first (the last one is in force). */
  listOperatorScores(rolloutId: number): OperatorScoreRecord[] {
    return this.c.guard(() =>
      (this.c.sql('SELECT * FROM operator_scores WHERE rollout_id = ? ORDER BY id').all(rolloutId) as Row[]).map((r) =>
        scoreRecord(r),
      ),
    );
  }
}
