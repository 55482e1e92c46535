import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../src/store/store.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../src/store/migrations.js';
import { layoutSetFixture } from './fixture-data.js';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sweeps-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a sweep stores each (layout, repeat) once: a second delivery of the same result returns the first row', (t) => {
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const set = layoutSetFixture([1, 2]);
  store.putLayoutSet(set);
  const policy = store.upsertPolicy({ spec: 'code:hold', name: 'hold' });
  const session = store.createSession({ kind: 'sim-sweep' });
  store.createSweep({
    id: 'sw1',
    sessionId: session.id,
    requestSha256: 'c'.repeat(64),
    queue: 'redis://127.0.0.1:6379/0',
    total: 4,
  });
  const row = {
    kind: 'sim',
    policyId: policy.id,
    layoutSetSha256: set.sha256,
    layoutIndex: 1,
    sessionId: session.id,
    seed: 1,
    repeatIndex: 1,
    episodeSeconds: 1,
    controlHz: 30,
    status: 'valid',
    progress: 0.5,
    sweepId: 'sw1',
  } as const;
  const first = store.insertSweepRollout(row);
  assert.equal(first.inserted, true);
  // The duplicate carries another progress: the first stored result stands, nothing is overwritten.
  const again = store.insertSweepRollout({ ...row, progress: 0.9 });
  assert.deepEqual(again, { id: first.id, inserted: false });
  assert.equal(store.listRollouts({ sessionId: session.id }).length, 1);
  assert.equal(store.getRollout(first.id)?.progress, 0.5);
  assert.equal(store.getRollout(first.id)?.sweepId, 'sw1');
  // Another repeat of the same layout is another rollout.
  assert.equal(store.insertSweepRollout({ ...row, repeatIndex: 0 }).inserted, true);
  assert.deepEqual([...store.sweepRolloutKeys('sw1')].sort(), ['1/0', '1/1']);
  // The unique index holds even for a writer that skips the check (a plain insertRollout).
  assert.throws(() => store.insertRollout(row), /UNIQUE/);
});

test('an unfinished sweep is found again by its request and queue; an ended one is not', (t) => {
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const session = store.createSession({ kind: 'sim-sweep' });
  const request = 'd'.repeat(64);
  store.createSweep({
    id: 'sw2',
    sessionId: session.id,
    requestSha256: request,
    queue: 'redis://127.0.0.1:6379/0',
    total: 2,
  });
  assert.equal(store.findUnfinishedSweep(request, 'redis://127.0.0.1:6379/0')?.id, 'sw2');
  assert.equal(store.findUnfinishedSweep(request, 'redis://127.0.0.1:6379/1'), undefined, 'another queue');
  assert.equal(store.findUnfinishedSweep('e'.repeat(64), 'redis://127.0.0.1:6379/0'), undefined, 'another request');
  store.endSession(session.id);
  assert.equal(store.findUnfinishedSweep(request, 'redis://127.0.0.1:6379/0'), undefined, 'its session ended');
});

test('a store of schema version 3 upgrades to sweeps and keeps its rollouts', (t) => {
  const file = join(tempDir(t), 'tandem.sqlite');
  const old = openStore(file, { migrations: MIGRATIONS.slice(0, 3) });
  const set = layoutSetFixture([1]);
  old.putLayoutSet(set);
  const policy = old.upsertPolicy({ spec: 'code:hold', name: 'hold' });
  old.close();
  // A row as a version-3 tandem wrote it (its insert knows no sweep_id column).
  const v3 = new Database(file);
  const id = Number(
    v3
      .prepare(
        "INSERT INTO rollouts (kind, policy_id, layout_set_sha256, layout_index, tier, episode_seconds, control_hz, status, outcome, progress, started_at) VALUES ('sim', ?, ?, 0, 1, 1, 30, 'valid', 'completed', 1, 'now')",
      )
      .run(policy.id, set.sha256).lastInsertRowid,
  );
  v3.close();
  const store = openStore(file);
  t.after(() => store.close());
  assert.equal(store.schemaVersion, LATEST_SCHEMA_VERSION, 'upgraded through every later step');
  assert.equal(store.getRollout(id)?.sweepId, null);
  const raw = new Database(file, { readonly: true });
  t.after(() => raw.close());
  assert.ok(raw.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'rollouts_once_per_sweep'").get());
});
