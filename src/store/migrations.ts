/**
 * The store's schema as an ordered list of migrations. The database's `PRAGMA user_version`
 * is the number of migrations applied; opening runs the missing ones, each in its own
 * transaction together with the version bump, so a crash mid-migration leaves the previous
 * version intact. Never edit a migration that has shipped: append a new one.
 */
export interface Migration {
  /** 1-based; equals the user_version after it ran. */
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

/** Identifies a tandem store among SQLite files (PRAGMA application_id; "tndm" in ASCII). */
export const TANDEM_APPLICATION_ID = 0x746e646d;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'layout sets, policies, sessions, rollouts, operator scores, calibrations',
    sql: `
      CREATE TABLE layout_sets (
        sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
        task TEXT NOT NULL,
        version INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        layout_count INTEGER NOT NULL CHECK (layout_count >= 0),
        canonical_json TEXT NOT NULL,
        imported_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE policies (
        id INTEGER PRIMARY KEY,
        spec TEXT NOT NULL,
        name TEXT NOT NULL,
        checkpoint_sha256 TEXT,
        created_at TEXT NOT NULL
      ) STRICT;
      -- One row per (how to load it, which weights): a renamed policy keeps its id and its results.
      CREATE UNIQUE INDEX policies_identity ON policies (spec, ifnull(checkpoint_sha256, ''));

      CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        operator TEXT,
        notes TEXT
      ) STRICT;

      CREATE TABLE calibrations (
        sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
        kind TEXT NOT NULL,
        version INTEGER NOT NULL,
        canonical_json TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE rollouts (
        id INTEGER PRIMARY KEY,
        session_id INTEGER REFERENCES sessions(id),
        kind TEXT NOT NULL CHECK (kind IN ('sim', 'real')),
        policy_id INTEGER NOT NULL REFERENCES policies(id),
        layout_set_sha256 TEXT NOT NULL REFERENCES layout_sets(sha256),
        layout_index INTEGER NOT NULL CHECK (layout_index >= 0),
        tier INTEGER NOT NULL,
        seed INTEGER,
        repeat_index INTEGER NOT NULL DEFAULT 0 CHECK (repeat_index >= 0),
        episode_seconds REAL NOT NULL CHECK (episode_seconds > 0),
        control_hz REAL NOT NULL CHECK (control_hz > 0),
        status TEXT NOT NULL CHECK (status IN ('valid', 'invalid', 'aborted')),
        status_reason TEXT,
        progress REAL CHECK (progress IS NULL OR (progress >= 0 AND progress <= 1)),
        counts_json TEXT,
        final_state_hash TEXT,
        started_at TEXT NOT NULL,
        duration_s REAL CHECK (duration_s IS NULL OR duration_s >= 0),
        episode_file TEXT
      ) STRICT;
      CREATE INDEX rollouts_by_policy ON rollouts (policy_id, kind, layout_set_sha256);
      CREATE INDEX rollouts_by_session ON rollouts (session_id);

      -- Which calibrations a rollout ran with (projector homography, cameras, sim parameters).
      CREATE TABLE rollout_calibrations (
        rollout_id INTEGER NOT NULL REFERENCES rollouts(id),
        calibration_sha256 TEXT NOT NULL REFERENCES calibrations(sha256),
        PRIMARY KEY (rollout_id, calibration_sha256)
      ) STRICT, WITHOUT ROWID;

      -- Append-only: a correction is a new row; the latest row per rollout is the score.
      CREATE TABLE operator_scores (
        id INTEGER PRIMARY KEY,
        rollout_id INTEGER NOT NULL REFERENCES rollouts(id),
        entered_at TEXT NOT NULL,
        end_states_json TEXT NOT NULL,
        progress REAL NOT NULL CHECK (progress >= 0 AND progress <= 1),
        counts_json TEXT NOT NULL,
        operator TEXT,
        note TEXT
      ) STRICT;
      CREATE INDEX operator_scores_by_rollout ON operator_scores (rollout_id, id);
      CREATE TRIGGER operator_scores_no_update BEFORE UPDATE ON operator_scores
        BEGIN SELECT RAISE(ABORT, 'operator scores are append-only: enter a correction as a new score'); END;
      CREATE TRIGGER operator_scores_no_delete BEFORE DELETE ON operator_scores
        BEGIN SELECT RAISE(ABORT, 'operator scores are append-only: enter a correction as a new score'); END;
    `,
  },
  {
    version: 2,
    description: "rollout outcomes: why each rollout ended, and the policy's own error apart from the status reason",
    // Older tandems wrote a valid rollout's policy error (NaN actions) into status_reason, the only
    // text column; it moves to policy_error so status_reason keeps meaning "why not counted". Invalid
    // and aborted rows from then keep a NULL outcome: their reason text says why, in words.
    sql: `
      ALTER TABLE rollouts ADD COLUMN outcome TEXT CHECK (outcome IS NULL OR length(outcome) > 0);
      ALTER TABLE rollouts ADD COLUMN policy_error TEXT;
      UPDATE rollouts SET outcome = 'policy-error', policy_error = status_reason, status_reason = NULL WHERE status = 'valid' AND status_reason IS NOT NULL;
      UPDATE rollouts SET outcome = 'completed' WHERE status = 'valid' AND outcome IS NULL;
      CREATE INDEX rollouts_by_outcome ON rollouts (policy_id, kind, status, outcome);
    `,
  },
  {
    version: 3,
    description:
      'episode recordings: every episode file from the moment it is opened, so an unfinished one is found after a crash',
    // A row is written before the first byte of the file and finished after its last: a row still
    // 'recording' when no station runs is a file cut off by a crash, to offer for recovery.
    sql: `
      CREATE TABLE recordings (
        id INTEGER PRIMARY KEY,
        file TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('rollout', 'teleop')),
        state TEXT NOT NULL CHECK (state IN ('recording', 'finished', 'failed', 'recovered')),
        started_at TEXT NOT NULL,
        finished_at TEXT,
        rollout_id INTEGER REFERENCES rollouts(id),
        bytes INTEGER CHECK (bytes IS NULL OR bytes >= 0),
        messages INTEGER CHECK (messages IS NULL OR messages >= 0),
        duration_s REAL CHECK (duration_s IS NULL OR duration_s >= 0),
        problem TEXT,
        recovered_file TEXT
      ) STRICT;
      CREATE INDEX recordings_by_state ON recordings (state);
      CREATE INDEX recordings_by_rollout ON recordings (rollout_id);
    `,
  },
  {
    version: 4,
    description: 'sweeps: one record per sim sweep, and each (sweep, layout, repeat) stored at most once',
    // A sweep over a job queue is delivered at least once (a retried or duplicated job), and a
    // restarted coordinator collects again what it may already have stored: the unique index
    // makes the store, not the queue, the place where each rollout of a sweep exists once.
    sql: `
      CREATE TABLE sweeps (
        id TEXT PRIMARY KEY CHECK (length(id) > 0),
        session_id INTEGER NOT NULL UNIQUE REFERENCES sessions(id),
        request_sha256 TEXT NOT NULL CHECK (length(request_sha256) = 64 AND request_sha256 NOT GLOB '*[^0-9a-f]*'),
        queue TEXT,
        total INTEGER NOT NULL CHECK (total >= 0),
        created_at TEXT NOT NULL
      ) STRICT;
      ALTER TABLE rollouts ADD COLUMN sweep_id TEXT REFERENCES sweeps(id);
      CREATE UNIQUE INDEX rollouts_once_per_sweep ON rollouts (sweep_id, layout_index, repeat_index) WHERE sweep_id IS NOT NULL;
    `,
  },
  {
    version: 5,
    description: "evaluation sessions: each session's plan (hash-pinned) and its journal of operator actions",
    // The journal is the session's state: replaying it says which rollout is next, which ran,
    // which were scored. Every operator action is one row, committed before it is acknowledged;
    // append-only like operator scores, and one score per (slot, attempt) by construction.
    sql: `
      CREATE TABLE session_plans (
        session_id INTEGER PRIMARY KEY REFERENCES sessions(id),
        plan_sha256 TEXT NOT NULL CHECK (length(plan_sha256) = 64 AND plan_sha256 NOT GLOB '*[^0-9a-f]*'),
        layout_set_sha256 TEXT NOT NULL REFERENCES layout_sets(sha256),
        plan_json TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE session_journal (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        slot INTEGER CHECK (slot IS NULL OR slot >= 0),
        attempt INTEGER CHECK (attempt IS NULL OR attempt >= 0),
        action TEXT NOT NULL CHECK (length(action) > 0),
        at TEXT NOT NULL,
        operator_s REAL CHECK (operator_s IS NULL OR operator_s >= 0),
        rollout_id INTEGER REFERENCES rollouts(id),
        score_id INTEGER REFERENCES operator_scores(id),
        detail_json TEXT NOT NULL
      ) STRICT;
      CREATE INDEX session_journal_by_session ON session_journal (session_id, id);
      CREATE UNIQUE INDEX session_journal_one_score ON session_journal (session_id, slot, attempt) WHERE action = 'scored';
      CREATE TRIGGER session_journal_no_update BEFORE UPDATE ON session_journal
        BEGIN SELECT RAISE(ABORT, 'the session journal is append-only'); END;
      CREATE TRIGGER session_journal_no_delete BEFORE DELETE ON session_journal
        BEGIN SELECT RAISE(ABORT, 'the session journal is append-only'); END;
    `,
  },
  {
    version: 6,
    description: 'teleop sessions and their takes: what was recorded, which takes were kept or discarded, and why',
    // Self-contained: it needs only sessions (1) and recordings (3). A take's row is written when
    // its file is opened and finished when it closes, so a stopped session resumes at its next
    // episode (the count of kept takes), and a discarded take's file stays known where it was moved.
    sql: `
      CREATE TABLE teleop_sessions (
        session_id INTEGER PRIMARY KEY REFERENCES sessions(id),
        task TEXT NOT NULL,
        prompt TEXT NOT NULL,
        leader TEXT NOT NULL,
        follower TEXT NOT NULL,
        cameras TEXT NOT NULL,
        episodes INTEGER NOT NULL CHECK (episodes > 0),
        episode_seconds REAL NOT NULL CHECK (episode_seconds > 0),
        reset_seconds REAL NOT NULL CHECK (reset_seconds >= 0),
        out_dir TEXT NOT NULL,
        layout_set_sha256 TEXT,
        layout_index INTEGER,
        state TEXT NOT NULL CHECK (state IN ('recording', 'stopped', 'finished')),
        problem TEXT
      ) STRICT;
      CREATE INDEX teleop_sessions_by_dir ON teleop_sessions (out_dir, state);
      CREATE TABLE teleop_takes (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES teleop_sessions(session_id),
        episode_index INTEGER NOT NULL CHECK (episode_index >= 0),
        recording_id INTEGER NOT NULL REFERENCES recordings(id),
        file TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('recording', 'kept', 'discarded')),
        marks TEXT NOT NULL DEFAULT '[]',
        discard_reason TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT
      ) STRICT;
      CREATE INDEX teleop_takes_by_session ON teleop_takes (session_id, episode_index);
      CREATE UNIQUE INDEX teleop_one_kept_take ON teleop_takes (session_id, episode_index) WHERE state = 'kept';
    `,
  },
  {
    version: 7,
    description:
      'task_events: per-object task events of each rollout (grasped, released, regions, knocked over, off the table, progress)',
    // One row an event, in the order they happened: the failure breakdown counts them per tier and
    // object, and a reward is summed from the progress rows. Kinds are checked here so a typo in a
    // future writer fails at insert, not in a report months later.
    sql: `
      CREATE TABLE task_events (
        rollout_id INTEGER NOT NULL REFERENCES rollouts(id),
        seq INTEGER NOT NULL CHECK (seq >= 0),
        time_s REAL NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('grasped', 'released', 'entered-region', 'left-region', 'knocked-over', 'off-table', 'progress')),
        object_id TEXT,
        region TEXT,
        arm TEXT CHECK (arm IS NULL OR arm IN ('left', 'right')),
        done INTEGER,
        total INTEGER,
        delta INTEGER,
        PRIMARY KEY (rollout_id, seq)
      ) STRICT;
    `,
  },
  {
    version: 8,
    description: 'rollouts.rehearsal: a rollout that is a rehearsal, not a result (blank cameras, the emulated cell)',
    // Reports and the compare view leave rehearsals out unless asked. Rollouts stored before this
    // marked the emulated cell only by its calibration record: those become rehearsals here.
    sql: `
      ALTER TABLE rollouts ADD COLUMN rehearsal INTEGER NOT NULL DEFAULT 0 CHECK (rehearsal IN (0, 1));
      UPDATE rollouts SET rehearsal = 1 WHERE id IN (
        SELECT rc.rollout_id FROM rollout_calibrations rc JOIN calibrations c ON c.sha256 = rc.calibration_sha256 WHERE c.kind = 'emulated-cell');
    `,
  },
  {
    version: 9,
    description:
      'rollout_takeovers: the stretches of a policy rollout the operator drove with the leader arm (an assisted rollout)',
    // One row a stretch, in episode seconds: the report counts assists per hour and the mean time
    // between them; export marks the frames they cover as interventions.
    sql: `
      CREATE TABLE rollout_takeovers (
        rollout_id INTEGER NOT NULL REFERENCES rollouts(id),
        seq INTEGER NOT NULL CHECK (seq >= 0),
        start_s REAL NOT NULL CHECK (start_s >= 0),
        end_s REAL NOT NULL CHECK (end_s >= start_s),
        open INTEGER NOT NULL CHECK (open IN (0, 1)),
        PRIMARY KEY (rollout_id, seq)
      ) STRICT;
    `,
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;
