/**
 * The store's one SQLite connection: opening (create 0600, refuse other programs' files and newer
 * schemas, WAL, foreign keys, synchronous=FULL, migrate) and the three ways every record module
 * talks to it — `guard` (SQLite's codes for damage, permissions, a full disk become StoreErrors
 * naming the file), `sql` (statements prepared once) and `write` (one immediate transaction).
 *
 * better-sqlite3 is synchronous, so every `write` has committed (and, with synchronous=FULL,
 * reached the disk) before it returns: when the UI acknowledges an operator's score, the score
 * survives a crash or a power cut.
 */
import { accessSync, closeSync, constants as fsConstants, existsSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, TANDEM_APPLICATION_ID, type Migration } from './migrations.js';

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
      if (code === 'EROFS')
        return {
          cause: 'its file system is mounted read-only',
          fix: 'remount it read-write, or point --data at a writable folder',
        };
      if (code === 'EACCES' || code === 'EPERM') {
        return {
          cause: `this user may not write ${path === file ? 'the file' : `its folder ${path}`}`,
          fix: 'fix the permissions (the folder too: SQLite keeps its log beside the file), or point --data at a folder this user owns',
        };
      }
      if (code === 'ENOENT')
        return { cause: `its folder ${path} does not exist`, fix: 'create it, or point --data at an existing folder' };
    }
  }
  return undefined;
}

/** Opens (creating and migrating when needed) the store's file at `file`. */
export function openConnection(file: string, options: OpenStoreOptions = {}): StoreConnection {
  let db: Database.Database;
  try {
    // Created 0600 before SQLite opens it: its WAL and shared-memory files take the database's mode.
    if (options.create !== false && file !== ':memory:' && file !== '' && !existsSync(file))
      closeSync(openSync(file, 'a', 0o600));
    db = new Database(file, { fileMustExist: options.create === false });
  } catch (e) {
    const why = unwritableBecause(file);
    throw new StoreError(
      why
        ? `The store ${file} cannot be opened: ${why.cause}; ${why.fix}.`
        : `Cannot open the store ${file}: ${(e as Error).message}. Check that the folder exists and is writable.`,
      file,
    );
  }
  try {
    prepareConnection(db, file, options.busyTimeoutMs ?? 5000, options.migrations ?? MIGRATIONS, options.onWaitForLock);
  } catch (e) {
    db.close();
    throw e;
  }
  return new StoreConnection(db, file);
}

function describeSqliteFailure(e: unknown, file: string): StoreError | undefined {
  const code = (e as { code?: unknown }).code;
  if (
    code === 'SQLITE_NOTADB' ||
    code === 'SQLITE_CORRUPT' ||
    (typeof code === 'string' && code.startsWith('SQLITE_CORRUPT'))
  ) {
    return new StoreError(
      `The store ${file} is damaged or is not a tandem database (${(e as Error).message}). Move it aside and tandem starts a new store; restore it from a backup to keep its results.`,
      file,
    );
  }
  if (
    typeof code === 'string' &&
    (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code === 'SQLITE_PERM')
  ) {
    const why = unwritableBecause(file);
    return new StoreError(
      why
        ? `The store ${file} cannot be written: ${why.cause}, so nothing was saved (and nothing saved before was changed); ${why.fix}.`
        : `The store ${file} cannot be written (${(e as Error).message}). Check the file's and its folder's permissions.`,
      file,
    );
  }
  if (code === 'SQLITE_FULL') {
    return new StoreError(
      `The disk holding the store ${file} is full, so the last change was not saved (everything saved before it is kept); free some space on that disk and repeat it.`,
      file,
    );
  }
  if (typeof code === 'string' && code.startsWith('SQLITE_IOERR')) {
    return new StoreError(
      `The store ${file} could not be written to disk (${(e as Error).message}: full, failing, or over a file-size limit), so the last change was not saved (everything saved before it is kept); free space or check the disk, then repeat it.`,
      file,
    );
  }
  if (code === 'SQLITE_BUSY') {
    return new StoreError(
      `The store ${file} is busy: another tandem process held it for writing longer than this one waits, so this change was not saved; try again when that process has finished.`,
      file,
    );
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

function prepareConnection(
  db: Database.Database,
  file: string,
  busyTimeoutMs: number,
  migrations: readonly Migration[],
  onWaitForLock?: () => void,
): void {
  const latest = migrations.length === 0 ? 0 : migrations[migrations.length - 1].version;
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`store migrations must be numbered 1, 2, 3, … in order; entry ${i} is version ${m.version}`);
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
  const hasTables =
    (db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as { n: number }).n > 0;
  if ((applicationId !== 0 && applicationId !== TANDEM_APPLICATION_ID) || (applicationId === 0 && hasTables)) {
    throw new StoreError(
      `${file} is an SQLite database of some other program, not a tandem store. Point --data at a different folder.`,
      file,
    );
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
    if (mode !== 'wal')
      throw new StoreError(
        `The store ${file} could not switch to write-ahead logging (journal mode is '${String(mode)}').`,
        file,
      );
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
        new StoreError(
          `Upgrading the store ${file} to schema version ${m.version} (${m.description}) failed: ${(e as Error).message}. The store is left at version ${m.version - 1}.`,
          file,
        )
      );
    }
  }
}

export class StoreConnection {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    /** The database file, for messages. */
    readonly file: string,
  ) {}

  /** Runs `fn`, turning SQLite's codes for damage, permissions, a full disk into StoreErrors naming the file. */
  guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw describeSqliteFailure(e, this.file) ?? e;
    }
  }

  /** Prepared once per connection: preparing costs more than running for these small statements. */
  sql(source: string): Database.Statement {
    let statement = this.statements.get(source);
    if (!statement) {
      statement = this.db.prepare(source);
      this.statements.set(source, statement);
    }
    return statement;
  }

  /** Runs `fn` in one immediate transaction, committed before this returns. */
  write<T>(fn: () => T): T {
    return this.guard(() => this.db.transaction(fn).immediate());
  }

  /** A StoreError naming this store's file. */
  error(message: string): StoreError {
    return new StoreError(message, this.file);
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
  settings(): StoreConnectionSettings {
    return this.guard(() => ({
      journalMode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: Number(this.db.pragma('synchronous', { simple: true })),
      foreignKeys: Number(this.db.pragma('foreign_keys', { simple: true })),
      busyTimeoutMs: Number(this.db.pragma('busy_timeout', { simple: true })),
    }));
  }
}
