/**
 * A session's plan and its journal in the store: every operator action appended, with its score
 * when the action scores a rollout, in one transaction committed before the UI acknowledges it.
 */
import { nowIso, numOrNull, parseJson, SHA256_HEX, type Row } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { OperatorScoreInput, SessionJournalInput, SessionJournalRecord, SessionPlanRecord } from './records.js';
import { checkScore, type OperatorScores } from './scores.js';

export class SessionJournals {
  constructor(
    private readonly c: StoreConnection,
    private readonly scores: OperatorScores,
  ) {}

  /** Stores a session's plan (its layout set must be in the store). */
  putSessionPlan(input: { sessionId: number; planSha256: string; layoutSetSha256: string; planJson: string }): void {
    if (!SHA256_HEX.test(input.planSha256))
      throw this.c.error(`A session plan's hash must be 64 lowercase hex digits, not '${input.planSha256}'.`);
    this.c.write(() => {
      this.c
        .sql(
          'INSERT INTO session_plans (session_id, plan_sha256, layout_set_sha256, plan_json, created_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(input.sessionId, input.planSha256, input.layoutSetSha256, input.planJson, nowIso());
    });
  }

  getSessionPlan(sessionId: number): SessionPlanRecord | undefined {
    const r = this.c.guard(
      () => this.c.sql('SELECT * FROM session_plans WHERE session_id = ?').get(sessionId) as Row | undefined,
    );
    return r
      ? {
          sessionId: Number(r.session_id),
          planSha256: String(r.plan_sha256),
          layoutSetSha256: String(r.layout_set_sha256),
          planJson: String(r.plan_json),
          createdAt: String(r.created_at),
        }
      : undefined;
  }

  /**
   * Appends one action to a session's journal, with its operator score when the action scores a
   * rollout: both in one transaction, committed (synchronous=FULL) before this returns — so an
   * acknowledged score is on the disk, and a score is never kept without its journal row or twice.
   */
  appendSessionJournal(entry: SessionJournalInput, score?: OperatorScoreInput): SessionJournalRecord {
    if (score) checkScore(score);
    const at = entry.at ?? nowIso();
    const detail = entry.detail ?? {};
    return this.c.write(() => {
      const scoreId = score ? this.scores.insertRow(score, at) : null;
      const rolloutId = entry.rolloutId ?? score?.rolloutId ?? null;
      const r = this.c
        .sql(
          'INSERT INTO session_journal (session_id, slot, attempt, action, at, operator_s, rollout_id, score_id, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          entry.sessionId,
          entry.slot ?? null,
          entry.attempt ?? null,
          entry.action,
          at,
          entry.operatorS ?? null,
          rolloutId,
          scoreId,
          JSON.stringify(detail),
        );
      return {
        id: Number(r.lastInsertRowid),
        sessionId: entry.sessionId,
        slot: entry.slot ?? null,
        attempt: entry.attempt ?? null,
        action: entry.action,
        at,
        operatorS: entry.operatorS ?? null,
        rolloutId,
        scoreId,
        detail,
      };
    });
  }

  /** A session's journal, oldest first. */
  listSessionJournal(sessionId: number): SessionJournalRecord[] {
    return this.c.guard(() =>
      (this.c.sql('SELECT * FROM session_journal WHERE session_id = ? ORDER BY id').all(sessionId) as Row[]).map(
        (r) => ({
          id: Number(r.id),
          sessionId: Number(r.session_id),
          slot: numOrNull(r.slot),
          attempt: numOrNull(r.attempt),
          action: String(r.action),
          at: String(r.at),
          operatorS: numOrNull(r.operator_s),
          rolloutId: numOrNull(r.rollout_id),
          scoreId: numOrNull(r.score_id),
          detail: parseJson<Record<string, unknown>>(r.detail_json),
        }),
      ),
    );
  }
}
