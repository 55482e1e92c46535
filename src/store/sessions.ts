/** Sessions in the store: real evaluations, sim sweeps, A/B tests, teleop recordings; start, end, operator, notes. */
import { nowIso, type Row, strOrNull } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { SessionInput, SessionKind, SessionRecord } from './records.js';

function sessionRecord(r: Row): SessionRecord {
  return {
    id: Number(r.id),
    kind: String(r.kind) as SessionKind,
    startedAt: String(r.started_at),
    endedAt: strOrNull(r.ended_at),
    operator: strOrNull(r.operator),
    notes: strOrNull(r.notes),
  };
}

export class Sessions {
  constructor(private readonly c: StoreConnection) {}

  createSession(input: SessionInput): SessionRecord {
    const startedAt = input.startedAt ?? nowIso();
    return this.c.write(() => {
      const id = this.insertRow(input.kind, startedAt, input.operator ?? null, input.notes ?? null);
      return {
        id,
        kind: input.kind,
        startedAt,
        endedAt: null,
        operator: input.operator ?? null,
        notes: input.notes ?? null,
      };
    });
  }

  /** Inserts a sessions row inside the caller's transaction; returns its id. */
  insertRow(kind: SessionKind, startedAt: string, operator: string | null, notes: string | null): number {
    return Number(
      this.c
        .sql('INSERT INTO sessions (kind, started_at, operator, notes) VALUES (?, ?, ?, ?)')
        .run(kind, startedAt, operator, notes).lastInsertRowid,
    );
  }

  /** Marks a session ended; `notes`, when given, replaces the session's notes. */
  endSession(id: number, opts: { endedAt?: string; notes?: string | null } = {}): SessionRecord {
    return this.c.write(() => {
      const existing = this.row(id);
      if (!existing) throw this.c.error(`There is no session ${id} in the store.`);
      if (existing.ended_at != null) throw this.c.error(`Session ${id} already ended at ${String(existing.ended_at)}.`);
      const endedAt = opts.endedAt ?? nowIso();
      const notes = opts.notes === undefined ? existing.notes : opts.notes;
      this.c.sql('UPDATE sessions SET ended_at = ?, notes = ? WHERE id = ?').run(endedAt, notes ?? null, id);
      return sessionRecord({ ...existing, ended_at: endedAt, notes });
    });
  }

  getSession(id: number): SessionRecord | undefined {
    const r = this.c.guard(() => this.row(id));
    return r ? sessionRecord(r) : undefined;
  }

  listSessions(filter: { kind?: SessionKind } = {}): SessionRecord[] {
    const rows = this.c.guard(() =>
      filter.kind === undefined
        ? (this.c.sql('SELECT * FROM sessions ORDER BY id').all() as Row[])
        : (this.c.sql('SELECT * FROM sessions WHERE kind = ? ORDER BY id').all(filter.kind) as Row[]),
    );
    return rows.map(sessionRecord);
  }

  private row(id: number): Row | undefined {
    return this.c.sql('SELECT * FROM sessions WHERE id = ?').get(id) as Row | undefined;
  }
}
