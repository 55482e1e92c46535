/**
 * Teleop recording sessions in the store: what a session records (its sessions row plus its
 * teleop_sessions row), whether it can be resumed, and its takes (kept with marks, or discarded
 * with why).
 */
import { nowIso, numOrNull, parseJson, type Row, strOrNull } from './columns.js';
import type { StoreConnection } from './connection.js';
import type {
  TeleopSessionInput,
  TeleopSessionRecord,
  TeleopSessionState,
  TeleopTakeRecord,
  TeleopTakeState,
} from './records.js';
import type { Sessions } from './sessions.js';

function teleopSessionRecord(r: Row): TeleopSessionRecord {
  return {
    sessionId: Number(r.session_id),
    task: String(r.task),
    prompt: String(r.prompt),
    leader: String(r.leader),
    follower: String(r.follower),
    cameras: String(r.cameras),
    episodes: Number(r.episodes),
    episodeSeconds: Number(r.episode_seconds),
    resetSeconds: Number(r.reset_seconds),
    outDir: String(r.out_dir),
    layoutSetSha256: strOrNull(r.layout_set_sha256),
    layoutIndex: numOrNull(r.layout_index),
    startedAt: String(r.started_at),
    endedAt: strOrNull(r.ended_at),
    state: r.state as TeleopSessionState,
    problem: strOrNull(r.problem),
  };
}

function teleopTakeRecord(r: Row): TeleopTakeRecord {
  return {
    id: Number(r.id),
    sessionId: Number(r.session_id),
    episodeIndex: Number(r.episode_index),
    recordingId: Number(r.recording_id),
    file: String(r.file),
    state: r.state as TeleopTakeState,
    marks: parseJson<string[]>(r.marks),
    discardReason: strOrNull(r.discard_reason),
    startedAt: String(r.started_at),
    endedAt: strOrNull(r.ended_at),
  };
}

export class TeleopSessions {
  constructor(
    private readonly c: StoreConnection,
    private readonly sessions: Sessions,
  ) {}

  /** A teleop session: its sessions row and what it records, in one transaction. */
  createTeleopSession(input: TeleopSessionInput): TeleopSessionRecord {
    return this.c.write(() => {
      const id = this.sessions.insertRow('teleop-recording', nowIso(), input.operator ?? null, null);
      this.c
        .sql(
          `INSERT INTO teleop_sessions (session_id, task, prompt, leader, follower, cameras, episodes, episode_seconds, reset_seconds, out_dir, layout_set_sha256, layout_index, state)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'recording')`,
        )
        .run(
          id,
          input.task,
          input.prompt,
          input.leader,
          input.follower,
          input.cameras,
          input.episodes,
          input.episodeSeconds,
          input.resetSeconds,
          input.outDir,
          input.layoutSetSha256 ?? null,
          input.layoutIndex ?? null,
        );
      return this.sessionRow(id)!;
    });
  }

  getTeleopSession(sessionId: number): TeleopSessionRecord | undefined {
    return this.c.guard(() => this.sessionRow(sessionId));
  }

  /** The newest teleop session recording into outDir that was stopped before its last episode. */
  latestStoppedTeleopSession(outDir: string): TeleopSessionRecord | undefined {
    const r = this.c.guard(
      () =>
        this.c
          .sql(
            `SELECT session_id FROM teleop_sessions WHERE out_dir = ? AND state IN ('stopped', 'recording') ORDER BY session_id DESC LIMIT 1`,
          )
          .get(outDir) as Row | undefined,
    );
    return r ? this.getTeleopSession(Number(r.session_id)) : undefined;
  }

  /** Marks a teleop session stopped (resumable) or finished; `problem` says what stopped it. */
  setTeleopSessionState(sessionId: number, state: TeleopSessionState, problem: string | null = null): void {
    this.c.write(() => {
      const r = this.c
        .sql('UPDATE teleop_sessions SET state = ?, problem = ? WHERE session_id = ?')
        .run(state, problem, sessionId);
      if (r.changes !== 1) throw this.c.error(`There is no teleop session ${sessionId} in the store.`);
      this.c
        .sql("UPDATE sessions SET ended_at = CASE WHEN ? = 'finished' THEN ? ELSE NULL END WHERE id = ?")
        .run(state, nowIso(), sessionId);
    });
  }

  startTeleopTake(input: { sessionId: number; episodeIndex: number; recordingId: number; file: string }): number {
    return this.c.write(() =>
      Number(
        this.c
          .sql(
            `INSERT INTO teleop_takes (session_id, episode_index, recording_id, file, state, started_at) VALUES (?, ?, ?, ?, 'recording', ?)`,
          )
          .run(input.sessionId, input.episodeIndex, input.recordingId, input.file, nowIso()).lastInsertRowid,
      ),
    );
  }

  /** A take closed: kept (with its marks) or discarded (with why, and where its file went). */
  endTeleopTake(
    id: number,
    end: { state: 'kept' | 'discarded'; marks?: readonly string[]; discardReason?: string; file?: string },
  ): void {
    this.c.write(() => {
      const r = this.c
        .sql(
          `UPDATE teleop_takes SET state = ?, marks = coalesce(?, marks), discard_reason = coalesce(?, discard_reason), file = coalesce(?, file), ended_at = coalesce(ended_at, ?) WHERE id = ?`,
        )
        .run(
          end.state,
          end.marks ? JSON.stringify(end.marks) : null,
          end.discardReason ?? null,
          end.file ?? null,
          nowIso(),
          id,
        );
      if (r.changes !== 1) throw this.c.error(`There is no teleop take ${id} in the store.`);
    });
  }

  listTeleopTakes(sessionId: number): TeleopTakeRecord[] {
    return this.c.guard(() =>
      (this.c.sql('SELECT * FROM teleop_takes WHERE session_id = ? ORDER BY id').all(sessionId) as Row[]).map(
        teleopTakeRecord,
      ),
    );
  }

  private sessionRow(sessionId: number): TeleopSessionRecord | undefined {
    const r = this.c
      .sql(
        'SELECT t.*, s.started_at, s.ended_at FROM teleop_sessions t JOIN sessions s ON s.id = t.session_id WHERE t.session_id = ?',
      )
      .get(sessionId) as Row | undefined;
    return r ? teleopSessionRecord(r) : undefined;
  }
}
