import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openStore, StoreError, type RolloutInput, type Store } from '../../src/store/store.js';
import { layoutSetFixture } from './fixture-data.js';

const CHILD = fileURLToPath(new URL('./write-until-killed.ts', import.meta.url));

test('a process killed mid-write loses no committed rollout and leaves no half-written batch', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tandem.sqlite');
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const committed: number[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let buffered = '';
  await new Promise<void>((resolveKilled, reject) => {
    child.on('error', reject);
    child.on('exit', () => resolveKilled());
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffered += d;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines)
        if (line.startsWith('committed ')) committed.push(...line.slice(10).split(' ').map(Number));
      // SIGKILL: no exit handlers, no close, no checkpoint — as close to pulling the plug as a test gets.
      if (committed.length >= 200 && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
  });
  assert.ok(
    committed.length >= 200,
    `the writer reported ${committed.length} commits before it ended; stderr: ${stderr}`,
  );

  const store = openStore(file);
  t.after(() => store.close());
  const rows = store.listRollouts();
  const present = new Set(rows.map((r) => r.id));
  const lost = committed.filter((id) => !present.has(id));
  assert.deepEqual(lost, [], 'every rollout reported committed is in the store');
  // Batches are atomic: every rollout present has both of its calibration links, and batches are whole pairs.
  for (const r of rows) assert.equal(r.calibrationSha256s.length, 2, `rollout ${r.id} has both calibrations`);
  assert.equal(rows.length % 2, 0, 'no batch of two was half written');
});

test('several processes creating the same new store at once all open it at the latest schema', async (t) => {
  const { LATEST_SCHEMA_VERSION } = await import('../../src/store/migrations.js');
  const Database = (await import('better-sqlite3')).default;
  const dir = mkdtempSync(join(tmpdir(), 'tandem-race-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tandem.sqlite');
  // Hold the write lock on the new, empty file so every child reads schema version 0 and then
  // queues for the lock: when it is released they migrate one after another, each having read a
  // version that the one before it has since moved on.
  const holder = new Database(file);
  holder.exec('BEGIN IMMEDIATE');
  const child = fileURLToPath(new URL('./open-store-child.ts', import.meta.url));
  const children = [0, 1, 2].map(() => {
    const p = spawn(process.execPath, ['--import', 'tsx', child, file], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let resolveWaiting: () => void;
    const waiting = new Promise<void>((r) => (resolveWaiting = r));
    const ready = new Promise<void>((resolveReady) => {
      p.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('ready\n')) resolveReady();
        if (out.includes('waiting\n')) resolveWaiting();
      });
    });
    p.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const closed = new Promise<void>((resolveClosed) => p.on('close', () => resolveClosed()));
    return { p, ready, waiting, closed, output: () => out, errors: () => err };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.p.stdin.write('go\n');
  // Release only once every child has read the empty schema and is queued on the lock.
  await Promise.all(children.map((c) => c.waiting));
  holder.exec('COMMIT');
  holder.close();
  await Promise.all(children.map((c) => c.closed));
  for (const c of children) {
    assert.equal(c.output().trim().split('\n').pop(), `version ${LATEST_SCHEMA_VERSION}`, c.output() + c.errors());
  }
});

// ---- What the durability promise rests on, and what an operator reads when the disk will not take a write. ----

function tempDir(t: { after(fn: () => void): void }, prefix = 'tandem-durable-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function seededRollout(store: Store): RolloutInput {
  const set = layoutSetFixture([1, 2]);
  store.putLayoutSet(set);
  const policy = store.upsertPolicy({ spec: 'code:scripted', name: 'scripted' });
  return {
    kind: 'sim',
    policyId: policy.id,
    layoutSetSha256: set.sha256,
    layoutIndex: 0,
    episodeSeconds: 60,
    controlHz: 30,
    status: 'valid',
    progress: 1,
  };
}

/** Runs a test child; resolves with its process, and a function waiting for a line on its stdout. */
function child(args: string[], opts: { uid?: number; gid?: number } = {}) {
  const p = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['pipe', 'pipe', 'pipe'], ...opts });
  let out = '';
  let err = '';
  const waiters: { line: string; resolve: () => void }[] = [];
  p.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const w of waiters.filter((x) => out.includes(`${x.line}\n`))) w.resolve();
  });
  p.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const closed = new Promise<void>((r) => p.on('close', () => r()));
  return {
    p,
    closed,
    output: () => out,
    errors: () => err,
    saw: (line: string) =>
      new Promise<void>((resolve) => (out.includes(`${line}\n`) ? resolve() : waiters.push({ line, resolve }))),
  };
}

const HOLDER = fileURLToPath(new URL('./hold-write-lock.ts', import.meta.url));

test('the store runs on the settings its guarantees rest on: WAL, synchronous = FULL (a commit is on the disk), foreign keys, a 5 s busy timeout', (t) => {
  // The SIGKILL test above cannot tell synchronous = FULL from OFF (the page cache outlives a killed
  // process); only a power cut could. So the setting itself is asserted, read back from SQLite.
  const file = join(tempDir(t), 'tandem.sqlite');
  const store = openStore(file);
  t.after(() => store.close());
  assert.deepEqual(store.connectionSettings(), {
    journalMode: 'wal',
    synchronous: 2,
    foreignKeys: 1,
    busyTimeoutMs: 5000,
  });
  const patient = openStore(file, { busyTimeoutMs: 250 });
  t.after(() => patient.close());
  assert.equal(patient.connectionSettings().busyTimeoutMs, 250);
  assert.equal(patient.connectionSettings().synchronous, 2, 'every connection syncs, not only the first');
  // WAL is a property of the file: a plain connection sees it too.
  const raw = new Database(file, { readonly: true });
  t.after(() => raw.close());
  assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
});

test('a write while another process holds the write lock past the busy timeout is one sentence, saves nothing, and goes through once the lock is free', async (t) => {
  const file = join(tempDir(t), 'tandem.sqlite');
  const store = openStore(file, { busyTimeoutMs: 200 });
  t.after(() => store.close());
  const rollout = seededRollout(store);
  const first = store.insertRollout(rollout);
  const holder = child([HOLDER, file]);
  await holder.saw('locked');
  assert.throws(
    () => store.insertRollout(rollout),
    (e: unknown) =>
      e instanceof StoreError &&
      e.message ===
        `The store ${file} is busy: another tandem process held it for writing longer than this one waits, so this change was not saved; try again when that process has finished.`,
  );
  holder.p.stdin.write('release\n');
  await holder.saw('released');
  await holder.closed;
  const second = store.insertRollout(rollout);
  assert.deepEqual(
    store.listRollouts().map((r) => r.id),
    [first, second],
    'the refused write left nothing; the earlier one is kept',
  );
  assert.deepEqual(
    store.listSessions().map((s) => s.notes),
    ['written by the other process'],
    "and the other process's write is kept too",
  );
});

test('a write while another process holds the write lock for less than the busy timeout waits for it and succeeds', async (t) => {
  const file = join(tempDir(t), 'tandem.sqlite');
  const store = openStore(file);
  t.after(() => store.close());
  const rollout = seededRollout(store);
  const probe = new Database(file);
  t.after(() => probe.close());
  probe.pragma('busy_timeout = 0');
  // The other writer commits by itself 1.5 s after taking the lock. If this process was so slow to
  // hear "locked" that the lock is already gone, that try proves nothing: run it again.
  for (let attempt = 0; ; attempt++) {
    const holder = child([HOLDER, file, '1500']);
    await holder.saw('locked');
    let held = false;
    try {
      probe.exec('BEGIN IMMEDIATE');
      probe.exec('ROLLBACK');
    } catch (e) {
      held = (e as { code?: string }).code === 'SQLITE_BUSY';
    }
    if (held) {
      const id = store.insertRollout(rollout); // blocks in SQLite's busy handler until the holder commits
      await holder.closed;
      assert.match(holder.output(), /released/);
      assert.deepEqual(
        store.listRollouts().map((r) => r.id),
        [id],
      );
      assert.equal(store.listSessions().length, 1 + attempt, 'the holder committed first; this write came after it');
      return;
    }
    await holder.closed;
    assert.ok(attempt < 3, 'the other writer released its lock before this process could check it, three times over');
  }
});

const isRoot = process.getuid?.() === 0;

/** Mounts a tmpfs of `size` at a fresh folder (root only); unmounted after the test. */
function tmpfs(t: { after(fn: () => void): void }, size: string): string | undefined {
  if (!isRoot) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'tandem-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  t.after(() => {
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

test('a store on a read-only file system is refused with what to do; nothing in it changes', async (t) => {
  const dir = tmpfs(t, '4m');
  if (!dir) return t.skip('needs root to mount a tmpfs read-only');
  const file = join(dir, 'tandem.sqlite');
  const store = openStore(file);
  const id = store.insertRollout(seededRollout(store));
  store.close();
  execFileSync('mount', ['-o', 'remount,ro', dir]);
  assert.throws(
    () => openStore(file),
    (e: unknown) =>
      e instanceof StoreError &&
      e.message ===
        `The store ${file} cannot be written: its file system is mounted read-only, so nothing was saved (and nothing saved before was changed); remount it read-write, or point --data at a writable folder.`,
  );
  execFileSync('mount', ['-o', 'remount,rw', dir]);
  const again = openStore(file);
  try {
    assert.deepEqual(
      again.listRollouts().map((r) => r.id),
      [id],
    );
  } finally {
    again.close(); // before the tmpfs is unmounted
  }
});

test('a store this user may not write is refused with what to do (as another user when run as root); nothing in it changes', async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'data');
  mkdirSync(data);
  const file = join(data, 'tandem.sqlite');
  const store = openStore(file);
  const id = store.insertRollout(seededRollout(store));
  store.close();
  // Readable by everyone, writable by nobody but root: root is not stopped by modes, so run the writer as 'nobody'.
  chmodSync(dir, 0o755);
  chmodSync(data, 0o555);
  chmodSync(file, 0o444);
  const writer = child(
    [fileURLToPath(new URL('./try-write-child.ts', import.meta.url)), file],
    isRoot ? { uid: 65534, gid: 65534 } : {},
  );
  await writer.closed;
  assert.match(
    writer.output(),
    /^refused The store .*tandem\.sqlite cannot be written: this user may not write (the file|its folder .*data), so nothing was saved \(and nothing saved before was changed\); fix the permissions \(the folder too: SQLite keeps its log beside the file\), or point --data at a folder this user owns\.\n$/,
    writer.errors(),
  );
  chmodSync(data, 0o755);
  chmodSync(file, 0o644);
  const again = openStore(file);
  t.after(() => again.close());
  assert.deepEqual(
    again.listRollouts().map((r) => r.id),
    [id],
  );
  assert.deepEqual(
    again.listPolicies().map((p) => p.name),
    ['scripted'],
  );
});

const FILLER = fileURLToPath(new URL('./fill-until-full.ts', import.meta.url));

/** Reads a fill-until-full child's report: the committed ids and the refusal. */
function fillReport(out: string): { committed: number[]; refused: string } {
  const committed = out
    .split('\n')
    .filter((l) => l.startsWith('committed '))
    .flatMap((l) => l.slice(10).split(' ').map(Number));
  const refused = out.split('\n').find((l) => l.startsWith('refused ')) ?? '';
  return { committed, refused };
}

function assertNothingCommittedLost(file: string, committed: readonly number[]): void {
  const store = openStore(file);
  try {
    const ids = store.listRollouts().map((r) => r.id);
    assert.deepEqual(
      ids,
      committed,
      'every committed batch is there, and the refused one is not (not even half of it)',
    );
    const more = store.insertRollouts([
      { ...seededRollout(store), status: 'invalid', outcome: 'rig-fault', statusReason: 'after the disk was freed' },
    ]);
    assert.equal(store.getRollout(more[0])?.statusReason, 'after the disk was freed');
  } finally {
    store.close();
  }
}

test('a full disk (a 512 KiB tmpfs) refuses the write in one sentence; every committed rollout survives, and writes go on once there is space', async (t) => {
  const dir = tmpfs(t, '512k');
  if (!dir) return t.skip('needs root to mount a small tmpfs');
  const file = join(dir, 'tandem.sqlite');
  const filler = child([FILLER, file]);
  await filler.closed;
  const { committed, refused } = fillReport(filler.output());
  assert.ok(committed.length >= 10, `some batches fit first: ${filler.output().slice(0, 200)} ${filler.errors()}`);
  assert.equal(
    refused,
    `refused StoreError: The disk holding the store ${file} is full, so the last change was not saved (everything saved before it is kept); free some space on that disk and repeat it.`,
  );
  execFileSync('mount', ['-o', 'remount,size=8m', dir]);
  assertNothingCommittedLost(file, committed);
});

test('a file-size limit (ulimit -f) refuses the write in one sentence; every committed rollout survives', {
  skip: process.platform !== 'linux' && 'uses bash ulimit',
}, async (t) => {
  const file = join(tempDir(t), 'tandem.sqlite');
  // SIGXFSZ ignored, as a daemon would: the write then fails with EFBIG instead of killing the process.
  // 1 MiB: a new store's schema and migrations alone pass through more than 256 KiB of write-ahead log.
  const filler = spawn(
    'bash',
    ['-c', `trap '' XFSZ; ulimit -f 1024; exec "${process.execPath}" --import tsx "${FILLER}" "${file}"`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  filler.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  filler.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  await new Promise<void>((r) => filler.on('close', () => r()));
  const { committed, refused } = fillReport(out);
  assert.ok(committed.length >= 10, `some batches fit first: ${out.slice(0, 200)} ${err}`);
  assert.match(
    refused,
    /^refused StoreError: The store .*tandem\.sqlite could not be written to disk \(disk I\/O error: full, failing, or over a file-size limit\), so the last change was not saved \(everything saved before it is kept\); free space or check the disk, then repeat it\.$/,
  );
  assertNothingCommittedLost(file, committed);
});
