/**
 * Episode files in the store: each registered before its first byte is written, so a crash leaves
 * a row saying which file to recover; ended as finished, failed or recovered; linked to its rollout.
 */
import { nowIso, numOrNull, strOrNull, type Row } from './columns.js';
import type { StoreConnection } from './connection.js';
import type { RecordingEnd, RecordingKind, RecordingRecord, RecordingState } from './records.js';

function recordingRecord(r: Row): RecordingRecord {
  return {
    id: Number(r.id),
    file: String(r.file),
    kind: String(r.kind) as RecordingKind,
    state: String(r.state) as RecordingState,
    startedAt: String(r.started_at),
    finishedAt: strOrNull(r.finished_at),
    rolloutId: numOrNull(r.rollout_id),
    bytes: numOrNull(r.bytes),
    messages: numOrNull(r.messages),
    durationS: numOrNull(r.duration_s),
    problem: strOrNull(r.problem),
    recoveredFile: strOrNull(r.recovered_file),
  };
}

export class Recordings {
  constructor(private readonly c: StoreConnection) {}

  /** Registers an episode file before its first byte is written; returns the recording id. */
  startRecording(input: { file: string; kind: RecordingKind; startedAt?: string }): number {
    return this.c.write(() => {
      if (this.byFile(input.file))
        throw this.c.error(`The episode file ${input.file} is registered already; episode files are never reused.`);
      return Number(
        this.c
          .sql('INSERT INTO recordings (file, kind, state, started_at) VALUES (?, ?, ?, ?)')
          .run(input.file, input.kind, 'recording', input.startedAt ?? nowIso()).lastInsertRowid,
      );
    });
  }

  /** Says how a recording ended (finished, failed) or that it was recovered. */
  endRecording(id: number, end: RecordingEnd): void {
    this.c.write(() => {
      const r = this.c
        .sql(
          `UPDATE recordings SET state = ?, finished_at = ?, bytes = coalesce(?, bytes), messages = coalesce(?, messages), duration_s = coalesce(?, duration_s),
           problem = ?, recovered_file = coalesce(?, recovered_file) WHERE id = ?`,
        )
        .run(
          end.state,
          nowIso(),
          end.bytes ?? null,
          end.messages ?? null,
          end.durationS ?? null,
          end.problem ?? null,
          end.recoveredFile ?? null,
          id,
        );
      if (r.changes !== 1) throw this.c.error(`There is no recording ${id} in the store.`);
    });
  }

  /** Links a recording to the rollout it recorded (stored after the episode). */
  linkRecording(id: number, rolloutId: number): void {
    this.c.write(() => {
      const r = this.c.sql('UPDATE recordings SET rollout_id = ? WHERE id = ?').run(rolloutId, id);
      if (r.changes !== 1) throw this.c.error(`There is no recording ${id} in the store.`);
    });
  }

  getRecording(id: number): RecordingRecord | undefined {
    const r = this.c.guard(() => this.c.sql('SELECT * FROM recordings WHERE id = ?').get(id) as Row | undefined);
    return r ? recordingRecord(r) : undefined;
  }

  findRecordingByFile(file: string): RecordingRecord | undefined {
    const r = this.c.guard(() => this.byFile(file));
    return r ? recordingRecord(r) : undefined;
  }

  /** Recordings in the given states, oldest first. */
  listRecordings(filter: { states?: readonly RecordingState[] } = {}): RecordingRecord[] {
    const states = filter.states ?? [];
    const where = states.length ? ` WHERE state IN (${states.map(() => '?').join(', ')})` : '';
    return this.c.guard(() =>
      (this.c.sql(`SELECT * FROM recordings${where} ORDER BY id`).all(...states) as Row[]).map(recordingRecord),
    );
  }

  private byFile(file: string): Row | undefined {
    return this.c.sql('SELECT * FROM recordings WHERE file = ?').get(file) as Row | undefined;
  }
}
