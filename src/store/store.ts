/**
 * The station's SQLite store: layout sets, policies, sessions, rollouts, operator scores,
 * calibrations. One file, WAL journal, foreign keys on, synchronous=FULL.
 *
 * better-sqlite3 is synchronous, so every write method below runs in a transaction that has
 * committed (and, with synchronous=FULL, reached the disk) before it returns: when the UI
 * acknowledges an operator's score, the score survives a crash or a power cut.
 */
import { createHash } from 'node:crypto';
import { accessSync, closeSync, constants as fsConstants, existsSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import canonicalize from 'canonicalize';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { TaskEvent } from '../tasks/task-events.js';
import { MIGRATIONS, TANDEM_APPLICATION_ID, type Migration } from './migrations.js';
import type {
  CalibrationInput,
  CalibrationRecord,
  Counts,
  LayoutOutcomeRow,
  LayoutSetInput,
  LayoutSetRecord,
  OperatorScoreInput,
  OutcomeCountRow,
  OperatorScoreRecord,
  PolicyInput,
  PolicyRecord,
  RecordingEnd,
  RecordingKind,
  RecordingRecord,
  RecordingState,
  RolloutFilter,
  RolloutInput,
  RolloutKind,
  RolloutOutcome,
  RolloutRecord,
  RolloutStatus,
  SessionInput,
  SessionJournalInput,
  SessionJournalRecord,
  SessionKind,
  SessionPlanRecord,
  SessionRecord,
  SweepInput,
  SweepRecord,
  TeleopSessionInput,
  TeleopSessionRecord,
  TeleopSessionState,
  TeleopTakeRecord,
  TeleopTakeState,
} from './records.js';

export type * from './records.js';

/** A problem with the store an operator can act on; the message names the file. */
export class StoreError extends Error {
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

export interface OpenStoreOptions {
  /** Create the file when it does not exist (default true). */
  readonly create?: boolean;
  /** How long a write waits for another process holding the write lock, ms (default 5000). */
  readonly busyTimeoutMs?: number;
  /** The schema history to apply; default MIGRATIONS. Tests pass a longer list to exercise an upgrade. */
  readonly migrations?: readonly Migration[];
  /**
   * Called once if opening has to wait for another process that holds the store's write lock (a
   * new store being created by two processes at once), before it waits: a caller can say so.
   */
  readonly onWaitForLock?: () => void;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
/** The outcomes of valid (scored) rollouts; every other outcome is invalid or aborted. */
const VALID_OUTCOMES: ReadonlySet<string> = new Set(['completed', 'policy-error'] satisfies RolloutRecord['outcome'][]);

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function nowIso(): string {
  return new Date().toISOString();
}

type Row = Record<string, unknown>;

const strOrNull = (v: unknown): string | null => (v == null ? null : String(v));
const numOrNull = (v: unknown): number | null => (v == null ? null : Number(v));

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

/** RFC 8785 canonical JSON of a pinned set without its sha256: the bytes its hash is taken over. */
function canonicalBody(set: LayoutSet): string {
  const { sha256: _id, ...body } = set;
  const text = canonicalize(body);
  if (text === undefined) throw new RangeError('the layout set cannot be written as JSON');
  return text;
}

function parseJson<T>(text: unknown): T {
  return JSON.parse(String(text)) as T;
}

/** The settings the store's durability rests on, as SQLite reports them for the open connection. */
export interface StoreConnectionSettings {
  /** 'wal': readers never block the writer, and a commit is one append to the log. */
  readonly journalMode: string;
  /** 2 = FULL: every commit is fsynced to the disk before it returns (survives a power cut, not only a crash). */
  readonly synchronous: number;
  /** 1: SQLite itself refuses rows that point at nothing. */
  readonly foreignKeys: number;
  /** How long a write waits for another process's write lock, ms. */
  readonly busyTimeoutMs: number;
}

/**
 * Why the store's file (or its folder, where SQLite keeps the WAL and shared-memory files) cannot
 * be written, and what to do, in words; undefined when nothing says it cannot.
 */
function unwritableBecause(file: string): { cause: string; fix: string } | undefined {
  for (const path of existsSync(file) ? [file, dirname(file)] : [dirname(file)]) {
    try {
      accessSync(path, fsConstants.W_OK);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'EROFS') return { cause: 'its file system is mounted read-only', fix: 'remount it read-write, or point --data at a writable folder' };
      if (code === 'EACCES' || code === 'EPERM') {
        return {
          cause: `this user may not write ${path === file ? 'the file' : `its folder ${path}`}`,
          fix: 'fix the permissions (the folder too: SQLite keeps its log beside the file), or point --data at a folder this user owns',
        };
      }
      if (code === 'ENOENT') return { cause: `its folder ${path} does not exist`, fix: 'create it, or point --data at an existing folder' };
    }
  }
  return undefined;
}

/** Opens (creating and migrating when needed) the store at `file`. */
export function openStore(file: string, options: OpenStoreOptions = {}): Store {
  let db: Database.Database;
  try {
    // Created 0600 before SQLite opens it: its WAL and shared-memory files take the database's mode.
    if (options.create !== false && file !== ':memory:' && file !== '' && !existsSync(file)) closeSync(openSync(file, 'a', 0o600));
    db = new Database(file, { fileMustExist: options.create === false });
  } catch (e) {
    const why = unwritableBecause(file);
    throw new StoreError(why ? `The store ${file} cannot be opened: ${why.cause}; ${why.fix}.` : `Cannot open the store ${file}: ${(e as Error).message}. Check that the folder exists and is writable.`, file);
  }
  try {
    prepareConnection(db, file, options.busyTimeoutMs ?? 5000, options.migrations ?? MIGRATIONS, options.onWaitForLock);
  } catch (e) {
    db.close();
    throw e;
  }
  return new Store(db, file);
}

function describeSqliteFailure(e: unknown, file: string): StoreError | undefined {
  const code = (e as { code?: unknown }).code;
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || (typeof code === 'string' && code.startsWith('SQLITE_CORRUPT'))) {
    return new StoreError(
      `The store ${file} is damaged or is not a tandem database (${(e as Error).message}). Move it aside and tandem starts a new store; restore it from a backup to keep its results.`,
      file,
    );
  }
  if (typeof code === 'string' && (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code === 'SQLITE_PERM')) {
    const why = unwritableBecause(file);
    return new StoreError(
      why ? `The store ${file} cannot be written: ${why.cause}, so nothing was saved (and nothing saved before was changed); ${why.fix}.` : `The store ${file} cannot be written (${(e as Error).message}). Check the file's and its folder's permissions.`,
      file,
    );
  }
  if (code === 'SQLITE_FULL') {
    return new StoreError(`The disk holding the store ${file} is full, so the last change was not saved (everything saved before it is kept); free some space on that disk and repeat it.`, file);
  }
  if (typeof code === 'string' && code.startsWith('SQLITE_IOERR')) {
    return new StoreError(
      `The store ${file} could not be written to disk (${(e as Error).message}: full, failing, or over a file-size limit), so the last change was not saved (everything saved before it is kept); free space or check the disk, then repeat it.`,
      file,
    );
  }
  if (code === 'SQLITE_BUSY') {
    return new StoreError(`The store ${file} is busy: another tandem process held it for writing longer than this one waits, so this change was not saved; try again when that process has finished.`, file);
  }
  return undefined;
}

/** Runs `fn`, retrying while SQLite reports SQLITE_BUSY, for up to `timeoutMs`; `onWait` before the first wait. */
function retryWhileBusy<T>(timeoutMs: number, fn: () => T, onWait?: () => void): T {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw e;
      if (attempt === 0) onWait?.();
      // A synchronous sleep: opening is synchronous, like the rest of the store.
      Atomics.wait(pause, 0, 0, Math.min(100, 5 * 2 ** Math.min(attempt, 5)));
    }
  }
}

function prepareConnection(db: Database.Database, file: string, busyTimeoutMs: number, migrations: readonly Migration[], onWaitForLock?: () => void): void {
  const latest = migrations.length === 0 ? 0 : migrations[migrations.length - 1].version;
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`store migrations must be numbered 1, 2, 3, … in order; entry ${i} is version ${m.version}`);
  });
  let version: number;
  let applicationId: number;
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    version = db.pragma('user_version', { simple: true }) as number;
    applicationId = db.pragma('application_id', { simple: true }) as number;
    // Catch a damaged file now, with a message naming it, rather than halfway through a session.
    const check = db.pragma('quick_check(1)', { simple: true }) as string;
    if (check !== 'ok') throw Object.assign(new Error(`integrity check: ${check}`), { code: 'SQLITE_CORRUPT' });
  } catch (e) {
    throw describeSqliteFailure(e, file) ?? e;
  }
  const hasTables = (db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as { n: number }).n > 0;
  if ((applicationId !== 0 && applicationId !== TANDEM_APPLICATION_ID) || (applicationId === 0 && hasTables)) {
    throw new StoreError(`${file} is an SQLite database of some other program, not a tandem store. Point --data at a different folder.`, file);
  }
  if (version > latest) {
    throw new StoreError(
      `The store ${file} was written by a newer tandem (schema version ${version}; this tandem knows up to ${latest}). Update tandem to open it; this version leaves it untouched.`,
      file,
    );
  }
  try {
    // Switching to WAL needs an exclusive lock, and SQLite skips the busy handler when waiting
    // could deadlock (several processes creating the store at once), so wait here ourselves.
    const mode = retryWhileBusy(busyTimeoutMs, () => db.pragma('journal_mode = WAL', { simple: true }), onWaitForLock);
    if (mode !== 'wal') throw new StoreError(`The store ${file} could not switch to write-ahead logging (journal mode is '${String(mode)}').`, file);
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = FULL');
  } catch (e) {
    throw describeSqliteFailure(e, file) ?? e;
  }
  for (const m of migrations) {
    if (m.version <= version) continue;
    try {
      db.transaction(() => {
        // Another process may have run this step between our read of user_version and taking the
        // write lock (station and CLI opening a new store together): re-read under the lock.
        if ((db.pragma('user_version', { simple: true }) as number) >= m.version) return;
        db.exec(m.sql);
        db.pragma(`application_id = ${TANDEM_APPLICATION_ID}`);
        db.pragma(`user_version = ${m.version}`);
      }).immediate();
    } catch (e) {
      throw (
        describeSqliteFailure(e, file) ??
        new StoreError(`Upgrading the store ${file} to schema version ${m.version} (${m.description}) failed: ${(e as Error).message}. The store is left at version ${m.version - 1}.`, file)
      );
    }
  }
}

interface LayoutSetFacts {
  readonly task: string;
  readonly version: number;
  readonly seed: number;
  readonly tiers: readonly number[];
}

function layoutSetFacts(json: string, sha256: string, file: string): LayoutSetFacts {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new StoreError(`Layout set ${sha256}: its canonical JSON does not parse.`, file);
  }
  const d = doc as { task?: unknown; version?: unknown; seed?: unknown; layouts?: unknown };
  if (typeof d !== 'object' || d === null || typeof d.task !== 'string' || !Number.isSafeInteger(d.version) || !Number.isSafeInteger(d.seed) || !Array.isArray(d.layouts)) {
    throw new StoreError(`Layout set ${sha256} lacks a task, a whole-number version and seed, or a layouts list.`, file);
  }
  const tiers = d.layouts.map((l: unknown, i: number) => {
    const tier = (l as { tier?: unknown } | null)?.tier;
    if (!Number.isSafeInteger(tier)) throw new StoreError(`Layout set ${sha256}: layout ${i} has no whole-number tier.`, file);
    return tier as number;
  });
  return { task: d.task, version: d.version as number, seed: d.seed as number, tiers };
}

function layoutSetRecord(r: Row): LayoutSetRecord {
  return {
    sha256: String(r.sha256),
    task: String(r.task),
    version: Number(r.version),
    seed: Number(r.seed),
    layoutCount: Number(r.layout_count),
    canonicalJson: String(r.canonical_json),
    importedAt: String(r.imported_at),
  };
}

function policyRecord(r: Row): PolicyRecord {
  return {
    id: Number(r.id),
    spec: String(r.spec),
    name: String(r.name),
    checkpointSha256: r.checkpoint_sha256 == null ? null : String(r.checkpoint_sha256),
    createdAt: String(r.created_at),
  };
}

function sessionRecord(r: Row): SessionRecord {
  return {
    id: Number(r.id),
    kind: String(r.kind) as SessionKind,
    startedAt: String(r.started_at),
    endedAt: r.ended_at == null ? null : String(r.ended_at),
    operator: r.operator == null ? null : String(r.operator),
    notes: r.notes == null ? null : String(r.notes),
  };
}

function scoreRecord(r: Row, prefix = ''): OperatorScoreRecord {
  return {
    id: Number(r[`${prefix}id`]),
    rolloutId: Number(r[`${prefix}rollout_id`]),
    enteredAt: String(r[`${prefix}entered_at`]),
    endStates: parseJson(r[`${prefix}end_states_json`]),
    progress: Number(r[`${prefix}progress`]),
    counts: parseJson<Counts>(r[`${prefix}counts_json`]),
    operator: r[`${prefix}operator`] == null ? null : String(r[`${prefix}operator`]),
    note: r[`${prefix}note`] == null ? null : String(r[`${prefix}note`]),
  };
}

function sweepRecord(r: Row): SweepRecord {
  return {
    id: String(r.id),
    sessionId: Number(r.session_id),
    requestSha256: String(r.request_sha256),
    queue: r.queue == null ? null : String(r.queue),
    total: Number(r.total),
    createdAt: String(r.created_at),
  };
}

function checkUnitInterval(what: string, v: number | null | undefined): void {
  if (v == null) return;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) throw new RangeError(`${what} must be a number from 0 to 1, not ${String(v)}`);
}

function checkCounts(what: string, counts: Counts | null | undefined): void {
  if (counts == null) return;
  for (const [k, v] of Object.entries(counts)) {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new RangeError(`${what}.${k} must be a finite number, not ${String(v)}`);
  }
}

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

export class Store {
  private readonly tiersBySet = new Map<string, readonly number[]>();
  private readonly statements = new Map<string, Database.Statement>();

  /** Use openStore(file). */
  constructor(
    private readonly db: Database.Database,
    /** The database file, for messages. */
    readonly file: string,
  ) {}

  /** Runs `fn`, turning SQLite's codes for damage, permissions, a full disk into StoreErrors naming the file. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw describeSqliteFailure(e, this.file) ?? e;
    }
  }

  /** Prepared once per connection: preparing costs more than running for these small statements. */
  private sql(source: string): Database.Statement {
    let statement = this.statements.get(source);
    if (!statement) {
      statement = this.db.prepare(source);
      this.statements.set(source, statement);
    }
    return statement;
  }

  private write<T>(fn: () => T): T {
    return this.guard(() => this.db.transaction(fn).immediate());
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  get isOpen(): boolean {
    return this.db.open;
  }

  /** The schema version of the open file (PRAGMA user_version). */
  get schemaVersion(): number {
    return this.guard(() => this.db.pragma('user_version', { simple: true }) as number);
  }

  /** The journal mode SQLite reports ('wal' for every store this code opens). */
  get journalMode(): string {
    return this.guard(() => String(this.db.pragma('journal_mode', { simple: true })));
  }

  /** The durability settings in force on this connection, read back from SQLite (not from our options). */
  connectionSettings(): StoreConnectionSettings {
    return this.guard(() => ({
      journalMode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: Number(this.db.pragma('synchronous', { simple: true })),
      foreignKeys: Number(this.db.pragma('foreign_keys', { simple: true })),
      busyTimeoutMs: Number(this.db.pragma('busy_timeout', { simple: true })),
    }));
  }

  // ---- layout sets ----

  /**
   * Stores a layout set by its hash. Idempotent: putting the same set again changes nothing.
   * Takes the pinned set itself (its canonical JSON is computed here) or its canonical JSON and hash.
   */
  putLayoutSet(set: LayoutSetInput | LayoutSet): { record: LayoutSetRecord; inserted: boolean } {
    const input = 'canonicalJson' in set ? set : { sha256: set.sha256, canonicalJson: canonicalBody(set) };
    if (!SHA256_HEX.test(input.sha256)) throw new StoreError(`'${input.sha256}' is not a hex SHA-256 layout-set id.`, this.file);
    const found = sha256Hex(input.canonicalJson);
    if (found !== input.sha256) {
      throw new StoreError(`Layout set refused: its JSON hashes to ${found}, not the claimed ${input.sha256}.`, this.file);
    }
    const facts = layoutSetFacts(input.canonicalJson, input.sha256, this.file);
    const inserted = this.write(() => {
      const r = this.sql('INSERT OR IGNORE INTO layout_sets (sha256, task, version, seed, layout_count, canonical_json, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(input.sha256, facts.task, facts.version, facts.seed, facts.tiers.length, input.canonicalJson, input.importedAt ?? nowIso());
      return r.changes === 1;
    });
    this.tiersBySet.set(input.sha256, facts.tiers);
    const record = this.getLayoutSet(input.sha256);
    if (!record) throw new StoreError(`Layout set ${input.sha256} vanished right after it was stored.`, this.file);
    return { record, inserted };
  }

  /** The stored set as the layouts room knows it (body plus sha256), ready for a sim sweep. */
  loadLayoutSet(sha256: string): LayoutSet | undefined {
    const record = this.getLayoutSet(sha256);
    return record ? ({ ...(JSON.parse(record.canonicalJson) as object), sha256 } as LayoutSet) : undefined;
  }

  getLayoutSet(sha256: string): LayoutSetRecord | undefined {
    const r = this.guard(() => this.sql('SELECT * FROM layout_sets WHERE sha256 = ?').get(sha256) as Row | undefined);
    return r ? layoutSetRecord(r) : undefined;
  }

  listLayoutSets(filter: { task?: string } = {}): LayoutSetRecord[] {
    const rows = this.guard(() =>
      filter.task === undefined
        ? (this.sql('SELECT * FROM layout_sets ORDER BY imported_at, sha256').all() as Row[])
        : (this.sql('SELECT * FROM layout_sets WHERE task = ? ORDER BY imported_at, sha256').all(filter.task) as Row[]),
    );
    return rows.map(layoutSetRecord);
  }

  private layoutTiers(sha256: string): readonly number[] | undefined {
    const cached = this.tiersBySet.get(sha256);
    if (cached) return cached;
    const set = this.getLayoutSet(sha256);
    if (!set) return undefined;
    const tiers = layoutSetFacts(set.canonicalJson, sha256, this.file).tiers;
    this.tiersBySet.set(sha256, tiers);
    return tiers;
  }

  // ---- policies ----

  /** Returns the policy with this spec and checkpoint, creating it (or updating its display name). */
  upsertPolicy(input: PolicyInput): PolicyRecord {
    if (!input.spec.trim()) throw new StoreError('A policy needs a spec saying how to load it.', this.file);
    if (!input.name.trim()) throw new StoreError(`Policy '${input.spec}' needs a name.`, this.file);
    const checkpoint = input.checkpointSha256 ?? null;
    if (checkpoint !== null && !SHA256_HEX.test(checkpoint)) throw new StoreError(`Policy '${input.name}': '${checkpoint}' is not a hex SHA-256 checkpoint hash.`, this.file);
    return this.write(() => {
      const existing = this.sql("SELECT * FROM policies WHERE spec = ? AND ifnull(checkpoint_sha256, '') = ?").get(input.spec, checkpoint ?? '') as Row | undefined;
      if (existing) {
        if (existing.name !== input.name) this.sql('UPDATE policies SET name = ? WHERE id = ?').run(input.name, existing.id);
        return policyRecord({ ...existing, name: input.name });
      }
      const createdAt = nowIso();
      const r = this.sql('INSERT INTO policies (spec, name, checkpoint_sha256, created_at) VALUES (?, ?, ?, ?)').run(input.spec, input.name, checkpoint, createdAt);
      return { id: Number(r.lastInsertRowid), spec: input.spec, name: input.name, checkpointSha256: checkpoint, createdAt };
    });
  }

  getPolicy(id: number): PolicyRecord | undefined {
    const r = this.guard(() => this.sql('SELECT * FROM policies WHERE id = ?').get(id) as Row | undefined);
    return r ? policyRecord(r) : undefined;
  }

  listPolicies(): PolicyRecord[] {
    return this.guard(() => (this.sql('SELECT * FROM policies ORDER BY id').all() as Row[]).map(policyRecord));
  }

  // ---- sessions ----

  createSession(input: SessionInput): SessionRecord {
    const startedAt = input.startedAt ?? nowIso();
    return this.write(() => {
      const r = this.sql('INSERT INTO sessions (kind, started_at, operator, notes) VALUES (?, ?, ?, ?)')
        .run(input.kind, startedAt, input.operator ?? null, input.notes ?? null);
      return { id: Number(r.lastInsertRowid), kind: input.kind, startedAt, endedAt: null, operator: input.operator ?? null, notes: input.notes ?? null };
    });
  }

  /** Marks a session ended; `notes`, when given, replaces the session's notes. */
  endSession(id: number, opts: { endedAt?: string; notes?: string | null } = {}): SessionRecord {
    return this.write(() => {
      const existing = this.sql('SELECT * FROM sessions WHERE id = ?').get(id) as Row | undefined;
      if (!existing) throw new StoreError(`There is no session ${id} in the store.`, this.file);
      if (existing.ended_at != null) throw new StoreError(`Session ${id} already ended at ${String(existing.ended_at)}.`, this.file);
      const endedAt = opts.endedAt ?? nowIso();
      const notes = opts.notes === undefined ? existing.notes : opts.notes;
      this.sql('UPDATE sessions SET ended_at = ?, notes = ? WHERE id = ?').run(endedAt, notes ?? null, id);
      return sessionRecord({ ...existing, ended_at: endedAt, notes });
    });
  }

  getSession(id: number): SessionRecord | undefined {
    const r = this.guard(() => this.sql('SELECT * FROM sessions WHERE id = ?').get(id) as Row | undefined);
    return r ? sessionRecord(r) : undefined;
  }

  listSessions(filter: { kind?: SessionKind } = {}): SessionRecord[] {
    const rows = this.guard(() =>
      filter.kind === undefined
        ? (this.sql('SELECT * FROM sessions ORDER BY id').all() as Row[])
        : (this.sql('SELECT * FROM sessions WHERE kind = ? ORDER BY id').all(filter.kind) as Row[]),
    );
    return rows.map(sessionRecord);
  }

  // ---- calibrations ----

  /** Stores a calibration by its hash. Idempotent. */
  putCalibration(input: CalibrationInput): { record: CalibrationRecord; inserted: boolean } {
    if (!SHA256_HEX.test(input.sha256)) throw new StoreError(`'${input.sha256}' is not a hex SHA-256 calibration id.`, this.file);
    const found = sha256Hex(input.canonicalJson);
    if (found !== input.sha256) throw new StoreError(`Calibration refused: its JSON hashes to ${found}, not the claimed ${input.sha256}.`, this.file);
    if (!Number.isSafeInteger(input.version)) throw new StoreError(`Calibration ${input.sha256}: version must be a whole number.`, this.file);
    const inserted = this.write(
      () =>
        this.sql('INSERT OR IGNORE INTO calibrations (sha256, kind, version, canonical_json, created_at) VALUES (?, ?, ?, ?, ?)')
          .run(input.sha256, input.kind, input.version, input.canonicalJson, input.createdAt ?? nowIso()).changes === 1,
    );
    const record = this.getCalibration(input.sha256);
    if (!record) throw new StoreError(`Calibration ${input.sha256} vanished right after it was stored.`, this.file);
    return { record, inserted };
  }

  getCalibration(sha256: string): CalibrationRecord | undefined {
    const r = this.guard(() => this.sql('SELECT * FROM calibrations WHERE sha256 = ?').get(sha256) as Row | undefined);
    return r
      ? { sha256: String(r.sha256), kind: String(r.kind), version: Number(r.version), canonicalJson: String(r.canonical_json), createdAt: String(r.created_at) }
      : undefined;
  }

  /** Per kind: how many calibrations the store holds and its newest (by version, then time). */
  calibrationKinds(): { kind: string; count: number; newest: Omit<CalibrationRecord, 'canonicalJson'> }[] {
    const rows = this.guard(() => this.sql('SELECT kind, COUNT(*) AS n FROM calibrations GROUP BY kind ORDER BY kind').all() as Row[]);
    return rows.map((r) => {
      const { canonicalJson: _json, ...newest } = this.latestCalibration(String(r.kind))!;
      return { kind: String(r.kind), count: Number(r.n), newest };
    });
  }

  /** The newest calibration of a kind (by version, then time), e.g. the projector homography in force. */
  latestCalibration(kind: string): CalibrationRecord | undefined {
    const r = this.guard(
      () => this.sql('SELECT sha256 FROM calibrations WHERE kind = ? ORDER BY version DESC, created_at DESC LIMIT 1').get(kind) as Row | undefined,
    );
    return r ? this.getCalibration(String(r.sha256)) : undefined;
  }

  // ---- recordings ----

  /** Registers an episode file before its first byte is written; returns the recording id. */
  startRecording(input: { file: string; kind: RecordingKind; startedAt?: string }): number {
    return this.write(() => {
      const found = this.sql('SELECT id FROM recordings WHERE file = ?').get(input.file);
      if (found) throw new StoreError(`The episode file ${input.file} is registered already; episode files are never reused.`, this.file);
      return Number(this.sql('INSERT INTO recordings (file, kind, state, started_at) VALUES (?, ?, ?, ?)').run(input.file, input.kind, 'recording', input.startedAt ?? nowIso()).lastInsertRowid);
    });
  }

  /** Says how a recording ended (finished, failed) or that it was recovered. */
  endRecording(id: number, end: RecordingEnd): void {
    this.write(() => {
      const r = this.sql(
        `UPDATE recordings SET state = ?, finished_at = ?, bytes = coalesce(?, bytes), messages = coalesce(?, messages), duration_s = coalesce(?, duration_s),
           problem = ?, recovered_file = coalesce(?, recovered_file) WHERE id = ?`,
      ).run(end.state, nowIso(), end.bytes ?? null, end.messages ?? null, end.durationS ?? null, end.problem ?? null, end.recoveredFile ?? null, id);
      if (r.changes !== 1) throw new StoreError(`There is no recording ${id} in the store.`, this.file);
    });
  }

  /** Links a recording to the rollout it recorded (stored after the episode). */
  linkRecording(id: number, rolloutId: number): void {
    this.write(() => {
      const r = this.sql('UPDATE recordings SET rollout_id = ? WHERE id = ?').run(rolloutId, id);
      if (r.changes !== 1) throw new StoreError(`There is no recording ${id} in the store.`, this.file);
    });
  }

  getRecording(id: number): RecordingRecord | undefined {
    const r = this.guard(() => this.sql('SELECT * FROM recordings WHERE id = ?').get(id) as Row | undefined);
    return r ? recordingRecord(r) : undefined;
  }

  findRecordingByFile(file: string): RecordingRecord | undefined {
    const r = this.guard(() => this.sql('SELECT * FROM recordings WHERE file = ?').get(file) as Row | undefined);
    return r ? recordingRecord(r) : undefined;
  }

  /** Recordings in the given states, oldest first. */
  listRecordings(filter: { states?: readonly RecordingState[] } = {}): RecordingRecord[] {
    const states = filter.states ?? [];
    const where = states.length ? ` WHERE state IN (${states.map(() => '?').join(', ')})` : '';
    return this.guard(() => (this.db.prepare(`SELECT * FROM recordings${where} ORDER BY id`).all(...states) as Row[]).map(recordingRecord));
  }

  // ---- teleop sessions ----

  /** A teleop session: its sessions row and what it records, in one transaction. */
  createTeleopSession(input: TeleopSessionInput): TeleopSessionRecord {
    return this.write(() => {
      const startedAt = nowIso();
      const id = Number(this.sql('INSERT INTO sessions (kind, started_at, operator, notes) VALUES (?, ?, ?, ?)').run('teleop-recording', startedAt, input.operator ?? null, null).lastInsertRowid);
      this.sql(
        `INSERT INTO teleop_sessions (session_id, task, prompt, leader, follower, cameras, episodes, episode_seconds, reset_seconds, out_dir, layout_set_sha256, layout_index, state)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'recording')`,
      ).run(id, input.task, input.prompt, input.leader, input.follower, input.cameras, input.episodes, input.episodeSeconds, input.resetSeconds, input.outDir, input.layoutSetSha256 ?? null, input.layoutIndex ?? null);
      return this.teleopSessionRow(id)!;
    });
  }

  getTeleopSession(sessionId: number): TeleopSessionRecord | undefined {
    return this.guard(() => this.teleopSessionRow(sessionId));
  }

  /** The newest teleop session recording into outDir that was stopped before its last episode. */
  latestStoppedTeleopSession(outDir: string): TeleopSessionRecord | undefined {
    const r = this.guard(() => this.sql(`SELECT session_id FROM teleop_sessions WHERE out_dir = ? AND state IN ('stopped', 'recording') ORDER BY session_id DESC LIMIT 1`).get(outDir) as Row | undefined);
    return r ? this.getTeleopSession(Number(r.session_id)) : undefined;
  }

  /** Marks a teleop session stopped (resumable) or finished; `problem` says what stopped it. */
  setTeleopSessionState(sessionId: number, state: TeleopSessionState, problem: string | null = null): void {
    this.write(() => {
      const r = this.sql('UPDATE teleop_sessions SET state = ?, problem = ? WHERE session_id = ?').run(state, problem, sessionId);
      if (r.changes !== 1) throw new StoreError(`There is no teleop session ${sessionId} in the store.`, this.file);
      this.sql('UPDATE sessions SET ended_at = CASE WHEN ? = \'finished\' THEN ? ELSE NULL END WHERE id = ?').run(state, nowIso(), sessionId);
    });
  }

  startTeleopTake(input: { sessionId: number; episodeIndex: number; recordingId: number; file: string }): number {
    return this.write(() =>
      Number(
        this.sql(`INSERT INTO teleop_takes (session_id, episode_index, recording_id, file, state, started_at) VALUES (?, ?, ?, ?, 'recording', ?)`).run(
          input.sessionId,
          input.episodeIndex,
          input.recordingId,
          input.file,
          nowIso(),
        ).lastInsertRowid,
      ),
    );
  }

  /** A take closed: kept (with its marks) or discarded (with why, and where its file went). */
  endTeleopTake(id: number, end: { state: 'kept' | 'discarded'; marks?: readonly string[]; discardReason?: string; file?: string }): void {
    this.write(() => {
      const r = this.sql(
        `UPDATE teleop_takes SET state = ?, marks = coalesce(?, marks), discard_reason = coalesce(?, discard_reason), file = coalesce(?, file), ended_at = coalesce(ended_at, ?) WHERE id = ?`,
      ).run(end.state, end.marks ? JSON.stringify(end.marks) : null, end.discardReason ?? null, end.file ?? null, nowIso(), id);
      if (r.changes !== 1) throw new StoreError(`There is no teleop take ${id} in the store.`, this.file);
    });
  }

  listTeleopTakes(sessionId: number): TeleopTakeRecord[] {
    return this.guard(() =>
      (this.sql('SELECT * FROM teleop_takes WHERE session_id = ? ORDER BY id').all(sessionId) as Row[]).map((r) => ({
        id: Number(r.id),
        sessionId: Number(r.session_id),
        episodeIndex: Number(r.episode_index),
        recordingId: Number(r.recording_id),
        file: String(r.file),
        state: r.state as TeleopTakeState,
        marks: JSON.parse(String(r.marks)) as string[],
        discardReason: r.discard_reason == null ? null : String(r.discard_reason),
        startedAt: String(r.started_at),
        endedAt: r.ended_at == null ? null : String(r.ended_at),
      })),
    );
  }

  private teleopSessionRow(sessionId: number): TeleopSessionRecord | undefined {
    const r = this.sql('SELECT t.*, s.started_at, s.ended_at FROM teleop_sessions t JOIN sessions s ON s.id = t.session_id WHERE t.session_id = ?').get(sessionId) as Row | undefined;
    if (!r) return undefined;
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
      layoutSetSha256: r.layout_set_sha256 == null ? null : String(r.layout_set_sha256),
      layoutIndex: r.layout_index == null ? null : Number(r.layout_index),
      startedAt: String(r.started_at),
      endedAt: r.ended_at == null ? null : String(r.ended_at),
      state: r.state as TeleopSessionState,
      problem: r.problem == null ? null : String(r.problem),
    };
  }

  // ---- rollouts ----

  private checkRollout(input: RolloutInput): number {
    const where = `Rollout on layout ${input.layoutIndex} of ${input.layoutSetSha256.slice(0, 12)}…`;
    if (!this.getPolicy(input.policyId)) throw new StoreError(`${where}: there is no policy ${input.policyId} in the store (upsertPolicy first).`, this.file);
    const tiers = this.layoutTiers(input.layoutSetSha256);
    if (!tiers) throw new StoreError(`${where}: that layout set is not in the store (putLayoutSet first).`, this.file);
    if (!Number.isSafeInteger(input.layoutIndex) || input.layoutIndex < 0 || input.layoutIndex >= tiers.length) {
      throw new StoreError(`${where}: the set has layouts 0 to ${tiers.length - 1}.`, this.file);
    }
    const tier = tiers[input.layoutIndex];
    if (input.tier !== undefined && input.tier !== tier) throw new StoreError(`${where}: that layout is tier ${tier}, not tier ${input.tier}.`, this.file);
    if (input.sessionId != null) {
      const session = this.getSession(input.sessionId);
      if (!session) throw new StoreError(`${where}: there is no session ${input.sessionId} in the store.`, this.file);
      if (session.endedAt !== null) throw new StoreError(`${where}: session ${input.sessionId} ended at ${session.endedAt}; start a new session.`, this.file);
    }
    for (const c of input.calibrationSha256s ?? []) {
      if (!this.getCalibration(c)) throw new StoreError(`${where}: calibration ${c} is not in the store (putCalibration first).`, this.file);
    }
    if (!(input.episodeSeconds > 0) || !(input.controlHz > 0)) throw new RangeError(`${where}: episodeSeconds and controlHz must be positive`);
    if (input.outcome != null && !VALID_OUTCOMES.has(input.outcome) !== (input.status !== 'valid')) {
      throw new StoreError(`${where}: outcome '${input.outcome}' does not go with status '${input.status}' (see the outcome table in docs/rig-model.md).`, this.file);
    }
    if (input.policyError != null && input.status !== 'valid') {
      throw new StoreError(`${where}: a policy error is recorded only on a valid rollout; an ${input.status} one says why in its status reason.`, this.file);
    }
    checkUnitInterval('progress', input.progress);
    checkCounts('counts', input.counts);
    return tier;
  }

  private insertRolloutRow(input: RolloutInput, tier: number): number {
    const r = this.sql(
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
    const link = this.sql('INSERT OR IGNORE INTO rollout_calibrations (rollout_id, calibration_sha256) VALUES (?, ?)');
    for (const c of input.calibrationSha256s ?? []) link.run(id, c);
    const event = this.sql('INSERT INTO task_events (rollout_id, seq, time_s, kind, object_id, region, arm, done, total, delta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    (input.taskEvents ?? []).forEach((e, seq) => event.run(id, seq, e.timeS, e.kind, e.objectId ?? null, e.region ?? null, e.arm ?? null, e.done ?? null, e.total ?? null, e.delta ?? null));
    return id;
  }

  /** A rollout's task events in the order they happened (empty when nothing watched its table). */
  listTaskEvents(rolloutId: number): TaskEvent[] {
    const rows = this.guard(() => this.sql('SELECT * FROM task_events WHERE rollout_id = ? ORDER BY seq').all(rolloutId) as Row[]);
    return rows.map((r) => {
      const e: { -readonly [K in keyof TaskEvent]: TaskEvent[K] } = { timeS: Number(r.time_s), kind: r.kind as TaskEvent['kind'] };
      if (r.object_id !== null) e.objectId = String(r.object_id);
      if (r.region !== null) e.region = String(r.region);
      if (r.arm !== null) e.arm = r.arm as TaskEvent['arm'];
      if (r.done !== null) Object.assign(e, { done: Number(r.done), total: Number(r.total), delta: Number(r.delta) });
      return e;
    });
  }

  /** Records one rollout; returns its id once committed. */
  insertRollout(input: RolloutInput): number {
    return this.write(() => this.insertRolloutRow(input, this.checkRollout(input)));
  }

  /**
   * Records one rollout of a sweep unless that (sweep, layout, repeat) is already stored: a job
   * queue delivers at least once, so a retried, duplicated or re-collected result lands here
   * again. Returns the stored row's id and whether this call inserted it.
   */
  insertSweepRollout(input: RolloutInput & { readonly sweepId: string }): { id: number; inserted: boolean } {
    return this.write(() => {
      if (!this.getSweep(input.sweepId)) throw new StoreError(`There is no sweep ${input.sweepId} in the store (createSweep first).`, this.file);
      const existing = this.sql('SELECT id FROM rollouts WHERE sweep_id = ? AND layout_index = ? AND repeat_index = ?').get(input.sweepId, input.layoutIndex, input.repeatIndex ?? 0) as Row | undefined;
      if (existing) return { id: Number(existing.id), inserted: false };
      return { id: this.insertRolloutRow(input, this.checkRollout(input)), inserted: true };
    });
  }

  /** Records many rollouts in one transaction (a sweep's batch): all are committed, or none. */
  insertRollouts(inputs: readonly RolloutInput[]): number[] {
    return this.write(() => inputs.map((input) => this.insertRolloutRow(input, this.checkRollout(input))));
  }

  getRollout(id: number): RolloutRecord | undefined {
    const r = this.guard(() => this.sql(`${ROLLOUT_SELECT} WHERE r.id = ?`).get(id) as Row | undefined);
    return r ? this.rolloutRecord(r) : undefined;
  }

  /** Rollouts matching every given field, oldest first. */
  listRollouts(filter: RolloutFilter = {}): RolloutRecord[] {
    const { where, params } = rolloutWhere(filter, 'r.');
    const sql = `${ROLLOUT_SELECT}${where} ORDER BY r.id`;
    return this.guard(() => (this.sql(sql).all(...params) as Row[]).map((r) => this.rolloutRecord(r)));
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
    return this.guard(() =>
      (this.sql(sql).all(...params) as Row[]).map((r) => ({
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
    return this.guard(() =>
      (this.sql(sql).all(...params) as Row[]).map((r) => ({
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
    const progress = r.progress == null ? null : Number(r.progress);
    return {
      id: Number(r.id),
      sessionId: r.session_id == null ? null : Number(r.session_id),
      kind: r.kind as RolloutRecord['kind'],
      policyId: Number(r.policy_id),
      layoutSetSha256: String(r.layout_set_sha256),
      layoutIndex: Number(r.layout_index),
      tier: Number(r.tier),
      seed: r.seed == null ? null : Number(r.seed),
      repeatIndex: Number(r.repeat_index),
      episodeSeconds: Number(r.episode_seconds),
      controlHz: Number(r.control_hz),
      status: r.status as RolloutRecord['status'],
      outcome: r.outcome == null ? null : (String(r.outcome) as RolloutOutcome),
      statusReason: r.status_reason == null ? null : String(r.status_reason),
      policyError: r.policy_error == null ? null : String(r.policy_error),
      progress,
      counts: r.counts_json == null ? null : parseJson<Counts>(r.counts_json),
      finalStateHash: r.final_state_hash == null ? null : String(r.final_state_hash),
      calibrationSha256s: r.calibrations == null ? [] : String(r.calibrations).split(',').sort(),
      startedAt: String(r.started_at),
      durationS: r.duration_s == null ? null : Number(r.duration_s),
      episodeFile: r.episode_file == null ? null : String(r.episode_file),
      sweepId: r.sweep_id == null ? null : String(r.sweep_id),
      latestScore,
      effectiveProgress: latestScore ? latestScore.progress : progress,
      rehearsal: Number(r.rehearsal) === 1,
    };
  }

  // ---- sweeps ----

  /** Records a sweep of a session (before its first rollout). */
  createSweep(input: SweepInput): SweepRecord {
    if (!SHA256_HEX.test(input.requestSha256)) throw new StoreError(`Sweep ${input.id}: '${input.requestSha256}' is not a hex SHA-256 request hash.`, this.file);
    const createdAt = nowIso();
    return this.write(() => {
      if (!this.getSession(input.sessionId)) throw new StoreError(`Sweep ${input.id}: there is no session ${input.sessionId} in the store.`, this.file);
      this.sql('INSERT INTO sweeps (id, session_id, request_sha256, queue, total, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(input.id, input.sessionId, input.requestSha256, input.queue, input.total, createdAt);
      return { ...input, createdAt };
    });
  }

  getSweep(id: string): SweepRecord | undefined {
    const r = this.guard(() => this.sql('SELECT * FROM sweeps WHERE id = ?').get(id) as Row | undefined);
    return r ? sweepRecord(r) : undefined;
  }

  /** The newest sweep of this request on this queue whose session has not ended (a coordinator that died), if any. */
  findUnfinishedSweep(requestSha256: string, queue: string | null): SweepRecord | undefined {
    const r = this.guard(
      () =>
        this.sql('SELECT w.* FROM sweeps w JOIN sessions s ON s.id = w.session_id WHERE w.request_sha256 = ? AND w.queue IS ? AND s.ended_at IS NULL ORDER BY w.created_at DESC, w.rowid DESC LIMIT 1').get(
          requestSha256,
          queue,
        ) as Row | undefined,
    );
    return r ? sweepRecord(r) : undefined;
  }

  /** The (layout, repeat) pairs a sweep has stored, as "layout/repeat". */
  sweepRolloutKeys(sweepId: string): Set<string> {
    const rows = this.guard(() => this.sql('SELECT layout_index, repeat_index FROM rollouts WHERE sweep_id = ?').all(sweepId) as Row[]);
    return new Set(rows.map((r) => `${Number(r.layout_index)}/${Number(r.repeat_index)}`));
  }

  // ---- operator scores ----

  /** Appends an operator's score for a rollout; a correction is simply a later score. Returns its id. */
  insertOperatorScore(input: OperatorScoreInput): number {
    if (!this.getRollout(input.rolloutId)) throw new StoreError(`There is no rollout ${input.rolloutId} in the store to score.`, this.file);
    checkUnitInterval('progress', input.progress);
    checkCounts('counts', input.counts);
    return this.write(() => {
      const r = this.sql('INSERT INTO operator_scores (rollout_id, entered_at, end_states_json, progress, counts_json, operator, note) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(
          input.rolloutId,
          input.enteredAt ?? nowIso(),
          JSON.stringify(input.endStates),
          input.progress,
          JSON.stringify(input.counts),
          input.operator ?? null,
          input.note ?? null,
        );
      return Number(r.lastInsertRowid);
    });
  }

  /** Every score entered for a rollout, oldest first (the last one is in force). */
  listOperatorScores(rolloutId: number): OperatorScoreRecord[] {
    return this.guard(() => (this.sql('SELECT * FROM operator_scores WHERE rollout_id = ? ORDER BY id').all(rolloutId) as Row[]).map((r) => scoreRecord(r)));
  }

  // ---- session plans and journals ----

  /** Stores a session's plan (its layout set must be in the store). */
  putSessionPlan(input: { sessionId: number; planSha256: string; layoutSetSha256: string; planJson: string }): void {
    if (!SHA256_HEX.test(input.planSha256)) throw new StoreError(`A session plan's hash must be 64 lowercase hex digits, not '${input.planSha256}'.`, this.file);
    this.write(() => {
      this.sql('INSERT INTO session_plans (session_id, plan_sha256, layout_set_sha256, plan_json, created_at) VALUES (?, ?, ?, ?, ?)').run(
        input.sessionId,
        input.planSha256,
        input.layoutSetSha256,
        input.planJson,
        nowIso(),
      );
    });
  }

  getSessionPlan(sessionId: number): SessionPlanRecord | undefined {
    const r = this.guard(() => this.sql('SELECT * FROM session_plans WHERE session_id = ?').get(sessionId) as Row | undefined);
    return r
      ? { sessionId: Number(r.session_id), planSha256: String(r.plan_sha256), layoutSetSha256: String(r.layout_set_sha256), planJson: String(r.plan_json), createdAt: String(r.created_at) }
      : undefined;
  }

  /**
   * Appends one action to a session's journal, with its operator score when the action scores a
   * rollout: both in one transaction, committed (synchronous=FULL) before this returns — so an
   * acknowledged score is on the disk, and a score is never kept without its journal row or twice.
   */
  appendSessionJournal(entry: SessionJournalInput, score?: OperatorScoreInput): SessionJournalRecord {
    if (score) {
      checkUnitInterval('progress', score.progress);
      checkCounts('counts', score.counts);
    }
    const at = entry.at ?? nowIso();
    const detail = entry.detail ?? {};
    return this.write(() => {
      let scoreId: number | null = null;
      if (score) {
        const r = this.sql('INSERT INTO operator_scores (rollout_id, entered_at, end_states_json, progress, counts_json, operator, note) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
          score.rolloutId,
          score.enteredAt ?? at,
          JSON.stringify(score.endStates),
          score.progress,
          JSON.stringify(score.counts),
          score.operator ?? null,
          score.note ?? null,
        );
        scoreId = Number(r.lastInsertRowid);
      }
      const r = this.sql('INSERT INTO session_journal (session_id, slot, attempt, action, at, operator_s, rollout_id, score_id, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
        entry.sessionId,
        entry.slot ?? null,
        entry.attempt ?? null,
        entry.action,
        at,
        entry.operatorS ?? null,
        entry.rolloutId ?? score?.rolloutId ?? null,
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
        rolloutId: entry.rolloutId ?? score?.rolloutId ?? null,
        scoreId,
        detail,
      };
    });
  }

  /** A session's journal, oldest first. */
  listSessionJournal(sessionId: number): SessionJournalRecord[] {
    return this.guard(() =>
      (this.sql('SELECT * FROM session_journal WHERE session_id = ? ORDER BY id').all(sessionId) as Row[]).map((r) => ({
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
      })),
    );
  }
}
