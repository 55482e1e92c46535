/**
 * Sim sweeps in the store: a sweep's id is what its queued jobs carry, and its rollouts are kept
 * once per (sweep, layout, repeat) however often a job queue delivers them.
 */
import { nowIso, type Row, SHA256_HEX, strOrNull } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { RolloutInput, SweepInput, SweepRecord } from './records.js';
import type { Rollouts } from './rollouts.js';
import type { Sessions } from './sessions.js';

function sweepRecord(r: Row): SweepRecord {
  return {
    id: String(r.id),
    sessionId: Number(r.session_id),
    requestSha256: String(r.request_sha256),
    queue: strOrNull(r.queue),
    total: Number(r.total),
    createdAt: String(r.created_at),
  };
}

export class Sweeps {
  constructor(
    private readonly c: StoreConnection,
    private readonly sessions: Sessions,
    private readonly rollouts: Rollouts,
  ) {}

  /** Records a sweep of a session (before its first rollout). */
  createSweep(input: SweepInput): SweepRecord {
    if (!SHA256_HEX.test(input.requestSha256))
      throw this.c.error(`Sweep ${input.id}: '${input.requestSha256}' is not a hex SHA-256 request hash.`);
    const createdAt = nowIso();
    return this.c.write(() => {
      if (!this.sessions.getSession(input.sessionId))
        throw this.c.error(`Sweep ${input.id}: there is no session ${input.sessionId} in the store.`);
      this.c
        .sql('INSERT INTO sweeps (id, session_id, request_sha256, queue, total, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(input.id, input.sessionId, input.requestSha256, input.queue, input.total, createdAt);
      return { ...input, createdAt };
    });
  }

  getSweep(id: string): SweepRecord | undefined {
    const r = this.c.guard(() => this.c.sql('SELECT * FROM sweeps WHERE id = ?').get(id) as Row | undefined);
    return r ? sweepRecord(r) : undefined;
  }

  /** The newest sweep of this request on this queue whose session has not ended (a coordinator that died), if any. */
  findUnfinishedSweep(requestSha256: string, queue: string | null): SweepRecord | undefined {
    const r = this.c.guard(
      () =>
        this.c
          .sql(
            'SELECT w.* FROM sweeps w JOIN sessions s ON s.id = w.session_id WHERE w.request_sha256 = ? AND w.queue IS ? AND s.ended_at IS NULL ORDER BY w.created_at DESC, w.rowid DESC LIMIT 1',
          )
          .get(requestSha256, queue) as Row | undefined,
    );
    return r ? sweepRecord(r) : undefined;
  }

  /**
   * Records one rollout of a sweep unless that (sweep, layout, repeat) is already stored: a job
   * queue delivers at least once, so a retried, duplicated or re-collected result lands here
   * again. Returns the stored row's id and whether this call inserted it.
   */
  insertSweepRollout(input: RolloutInput & { readonly sweepId: string }): { id: number; inserted: boolean } {
    return this.c.write(() => {
      if (!this.getSweep(input.sweepId))
        throw this.c.error(`There is no sweep ${input.sweepId} in the store (createSweep first).`);
      const existing = this.c
        .sql('SELECT id FROM rollouts WHERE sweep_id = ? AND layout_index = ? AND repeat_index = ?')
        .get(input.sweepId, input.layoutIndex, input.repeatIndex ?? 0) as Row | undefined;
      if (existing) return { id: Number(existing.id), inserted: false };
      return { id: this.rollouts.insertChecked(input), inserted: true };
    });
  }

  /** The (layout, repeat) pairs a sweep has stored, as "layout/repeat". */
  sweepRolloutKeys(sweepId: string): Set<string> {
    const rows = this.c.guard(
      () => this.c.sql('SELECT layout_index, repeat_index FROM rollouts WHERE sweep_id = ?').all(sweepId) as Row[],
    );
    return new Set(rows.map((r) => `${Number(r.layout_index)}/${Number(r.repeat_index)}`));
  }
}
