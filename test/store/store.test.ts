import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStore, StoreError, type Store } from '../../src/store/store.js';
import { LATEST_SCHEMA_VERSION } from '../../src/store/migrations.js';
import { calibrationFixture, layoutSetFixture } from './fixture-data.js';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function seeded(store: Store) {
  const set = layoutSetFixture([1, 1, 2, 3]);
  store.putLayoutSet(set);
  const policy = store.upsertPolicy({ spec: 'onnx:models/act.onnx', name: 'act-v1', checkpointSha256: 'a'.repeat(64) });
  return { set, policy };
}

test('a new store migrates from empty to the latest schema, in WAL mode with foreign keys on', (t) => {
  const file = join(tempDir(t), 'tandem.sqlite');
  const store = openStore(file);
  t.after(() => store.close());
  assert.equal(store.schemaVersion, LATEST_SCHEMA_VERSION);
  assert.equal(store.journalMode, 'wal');
  // Look at the file with a separate connection: the tables and the WAL header are really there.
  const raw = new Database(file, { readonly: true });
  t.after(() => raw.close());
  const tables = (
    raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as { name: string }[]
  ).map((r) => r.name);
  for (const name of [
    'calibrations',
    'layout_sets',
    'operator_scores',
    'policies',
    'rollout_calibrations',
    'rollouts',
    'sessions',
  ])
    assert.ok(tables.includes(name), name);
  assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
  // foreign keys: a rollout row pointing at nothing is refused by SQLite itself, not only by our checks
  assert.throws(
    () =>
      (store as unknown as { c: { db: Database.Database } }).c.db
        .prepare(
          "INSERT INTO rollouts (kind, policy_id, layout_set_sha256, layout_index, tier, episode_seconds, control_hz, status, started_at) VALUES ('sim', 99, 'x', 0, 1, 60, 30, 'valid', 'now')",
        )
        .run(),
    /FOREIGN KEY/,
  );
});

test('reopening keeps everything written, and a second open does not re-run migrations', (t) => {
  const file = join(tempDir(t), 'tandem.sqlite');
  const first = openStore(file);
  const { set, policy } = seeded(first);
  const session = first.createSession({ kind: 'real-eval', operator: 'ana', startedAt: '2026-11-30T09:00:00.000Z' });
  const rolloutId = first.insertRollout({
    kind: 'real',
    policyId: policy.id,
    layoutSetSha256: set.sha256,
    layoutIndex: 2,
    sessionId: session.id,
    episodeSeconds: 60,
    controlHz: 30,
    status: 'valid',
    startedAt: '2026-11-30T09:01:00.000Z',
    durationS: 60.2,
  });
  first.insertOperatorScore({
    rolloutId,
    endStates: [{ id: 'bottle-1', region: 'bin' }],
    progress: 1,
    counts: { inBin: 1, target: 1 },
    operator: 'ana',
  });
  first.close();

  const again = openStore(file);
  t.after(() => again.close());
  assert.equal(again.schemaVersion, LATEST_SCHEMA_VERSION);
  assert.equal(again.getLayoutSet(set.sha256)?.layoutCount, 4);
  assert.equal(again.getLayoutSet(set.sha256)?.task, 'bottles-in-the-bin');
  assert.deepEqual(
    again.listPolicies().map((p) => p.name),
    ['act-v1'],
  );
  const [r] = again.listRollouts({ sessionId: session.id });
  assert.equal(r.id, rolloutId);
  assert.equal(r.tier, 2, 'the tier comes from the layout set (layout 2 is tier 2)');
  assert.equal(r.latestScore?.progress, 1);
  assert.deepEqual(r.latestScore?.endStates, [{ id: 'bottle-1', region: 'bin' }]);
  assert.equal(r.effectiveProgress, 1);
});

test('layout sets are content-addressed: a wrong hash is refused, the same set twice is one row', (t) => {
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const set = layoutSetFixture([1, 2]);
  assert.equal(store.putLayoutSet(set).inserted, true);
  assert.equal(store.putLayoutSet(set).inserted, false);
  assert.equal(store.listLayoutSets().length, 1);
  const tampered = { sha256: set.sha256, canonicalJson: set.canonicalJson.replace('"seed":7', '"seed":8') };
  assert.throws(
    () => store.putLayoutSet(tampered),
    (e: unknown) => e instanceof StoreError && /hashes to [0-9a-f]{64}, not the claimed/.test(e.message),
  );
});

test('a rollout must point at a real policy, layout set, layout index, session and calibration', (t) => {
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const { set, policy } = seeded(store);
  const base = {
    kind: 'sim' as const,
    policyId: policy.id,
    layoutSetSha256: set.sha256,
    layoutIndex: 0,
    episodeSeconds: 60,
    controlHz: 30,
    status: 'valid' as const,
  };
  assert.throws(() => store.insertRollout({ ...base, policyId: 42 }), /no policy 42/);
  assert.throws(
    () => store.insertRollout({ ...base, layoutSetSha256: 'b'.repeat(64) }),
    /not in the store \(putLayoutSet first\)/,
  );
  assert.throws(() => store.insertRollout({ ...base, layoutIndex: 4 }), /layouts 0 to 3/);
  assert.throws(() => store.insertRollout({ ...base, tier: 3 }), /tier 1, not tier 3/);
  assert.throws(() => store.insertRollout({ ...base, sessionId: 5 }), /no session 5/);
  assert.throws(() => store.insertRollout({ ...base, calibrationSha256s: ['c'.repeat(64)] }), /putCalibration first/);
  assert.throws(() => store.insertRollout({ ...base, progress: 1.2 }), /from 0 to 1/);
  const ended = store.createSession({ kind: 'sim-sweep' });
  store.endSession(ended.id);
  assert.throws(() => store.insertRollout({ ...base, sessionId: ended.id }), /ended at/);
  assert.equal(store.listRollouts().length, 0, 'nothing refused was written');
});

test('listRollouts filters by kind, policy, set, tier and status; calibrations and counts come back', (t) => {
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const { set, policy } = seeded(store);
  const other = store.upsertPolicy({ spec: 'remote:ws://gpu:8000', name: 'pi0' });
  const cal = calibrationFixture('sim-parameters', 3, { friction: 0.7, damping: 0.1 });
  store.putCalibration(cal);
  const base = {
    kind: 'sim' as const,
    layoutSetSha256: set.sha256,
    episodeSeconds: 60,
    controlHz: 30,
    status: 'valid' as const,
  };
  const ids = store.insertRollouts([
    {
      ...base,
      policyId: policy.id,
      layoutIndex: 0,
      progress: 1,
      counts: { inBin: 1, target: 1 },
      calibrationSha256s: [cal.sha256],
      seed: 11,
    },
    { ...base, policyId: policy.id, layoutIndex: 2, progress: 0.5, counts: { inBin: 1, target: 2 } },
    { ...base, policyId: other.id, layoutIndex: 3, progress: 0 },
    { ...base, policyId: other.id, layoutIndex: 3, kind: 'real', status: 'aborted', statusReason: 'e-stop pressed' },
  ]);
  assert.deepEqual(ids.length, 4);
  assert.deepEqual(
    store.listRollouts({ policyId: policy.id }).map((r) => r.layoutIndex),
    [0, 2],
  );
  assert.deepEqual(
    store.listRollouts({ tier: 3 }).map((r) => r.policyId),
    [other.id, other.id],
  );
  assert.deepEqual(
    store.listRollouts({ kind: 'real' }).map((r) => r.statusReason),
    ['e-stop pressed'],
  );
  assert.deepEqual(
    store.listRollouts({ status: 'valid', kind: 'sim', policyId: other.id }).map((r) => r.progress),
    [0],
  );
  const first = store.getRollout(ids[0])!;
  assert.deepEqual(first.calibrationSha256s, [cal.sha256]);
  assert.deepEqual(first.counts, { inBin: 1, target: 1 });
  assert.equal(first.seed, 11);
  assert.equal(store.latestCalibration('sim-parameters')?.sha256, cal.sha256);
  // a batch with one bad rollout writes none of them
  assert.throws(() =>
    store.insertRollouts([
      { ...base, policyId: policy.id, layoutIndex: 1 },
      { ...base, policyId: policy.id, layoutIndex: 9 },
    ]),
  );
  assert.equal(store.listRollouts().length, 4);
});

test('upsertPolicy keeps one row per spec and checkpoint, and a rename keeps the id', (t) => {
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const a = store.upsertPolicy({ spec: 'onnx:m.onnx', name: 'act', checkpointSha256: 'a'.repeat(64) });
  const renamed = store.upsertPolicy({
    spec: 'onnx:m.onnx',
    name: 'act (20k demos)',
    checkpointSha256: 'a'.repeat(64),
  });
  const retrained = store.upsertPolicy({ spec: 'onnx:m.onnx', name: 'act', checkpointSha256: 'b'.repeat(64) });
  const codeA = store.upsertPolicy({ spec: 'code:scripted', name: 'scripted' });
  const codeB = store.upsertPolicy({ spec: 'code:scripted', name: 'scripted' });
  assert.equal(renamed.id, a.id);
  assert.equal(store.getPolicy(a.id)?.name, 'act (20k demos)');
  assert.notEqual(retrained.id, a.id);
  assert.equal(codeA.id, codeB.id, 'no checkpoint still means one row');
  assert.equal(store.listPolicies().length, 3);
});

test('operator scores are append-only: a correction is a new row and becomes the score in force', (t) => {
  const file = join(tempDir(t), 'tandem.sqlite');
  const store = openStore(file);
  t.after(() => store.close());
  const { set, policy } = seeded(store);
  const id = store.insertRollout({
    kind: 'real',
    policyId: policy.id,
    layoutSetSha256: set.sha256,
    layoutIndex: 0,
    episodeSeconds: 60,
    controlHz: 30,
    status: 'valid',
  });
  assert.equal(store.getRollout(id)?.effectiveProgress, null);
  store.insertOperatorScore({
    rolloutId: id,
    endStates: [{ id: 'bottle-1' }],
    progress: 0,
    counts: { inBin: 0, target: 1 },
    operator: 'ana',
  });
  store.insertOperatorScore({
    rolloutId: id,
    endStates: [{ id: 'bottle-1', region: 'bin' }],
    progress: 1,
    counts: { inBin: 1, target: 1 },
    operator: 'ana',
    note: 'missed the bottle behind the bin',
  });
  assert.deepEqual(
    store.listOperatorScores(id).map((s) => s.progress),
    [0, 1],
  );
  assert.equal(store.getRollout(id)?.latestScore?.note, 'missed the bottle behind the bin');
  assert.equal(store.getRollout(id)?.effectiveProgress, 1);
  assert.throws(
    () => store.insertOperatorScore({ rolloutId: 999, endStates: [], progress: 0, counts: {} }),
    /no rollout 999/,
  );
  // Even a direct UPDATE through SQLite is refused by the schema.
  const raw = new Database(file);
  t.after(() => raw.close());
  assert.throws(() => raw.prepare('UPDATE operator_scores SET progress = 0.5').run(), /append-only/);
  assert.throws(() => raw.prepare('DELETE FROM operator_scores').run(), /append-only/);
});

test('sessions start and end once', (t) => {
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const s = store.createSession({ kind: 'real-eval', operator: 'ben', notes: 'morning' });
  const ended = store.endSession(s.id, { endedAt: '2026-11-30T10:30:00.000Z' });
  assert.equal(ended.endedAt, '2026-11-30T10:30:00.000Z');
  assert.equal(ended.notes, 'morning');
  assert.throws(() => store.endSession(s.id), /already ended/);
  assert.throws(() => store.endSession(77), /no session 77/);
  assert.deepEqual(
    store.listSessions({ kind: 'real-eval' }).map((x) => x.operator),
    ['ben'],
  );
});

test('a second connection sees each write as soon as the method returns', (t) => {
  const file = join(tempDir(t), 'tandem.sqlite');
  const writer = openStore(file);
  const reader = openStore(file);
  t.after(() => {
    writer.close();
    reader.close();
  });
  const { set, policy } = seeded(writer);
  const id = writer.insertRollout({
    kind: 'sim',
    policyId: policy.id,
    layoutSetSha256: set.sha256,
    layoutIndex: 1,
    episodeSeconds: 60,
    controlHz: 30,
    status: 'valid',
    progress: 0.25,
  });
  assert.equal(reader.getRollout(id)?.progress, 0.25);
});

test('a file that is not a database, or is damaged, is refused with a message naming the file', (t) => {
  const dir = tempDir(t);
  const garbage = join(dir, 'garbage.sqlite');
  writeFileSync(garbage, 'this is a text file, not SQLite '.repeat(200));
  assert.throws(
    () => openStore(garbage),
    (e: unknown) =>
      e instanceof StoreError && e.message.includes(garbage) && /damaged or is not a tandem database/.test(e.message),
  );
  assert.equal(readFileSync(garbage, 'utf8').startsWith('this is a text file'), true, 'the file is left untouched');

  // A real store whose pages were overwritten in the middle.
  const damaged = join(dir, 'damaged.sqlite');
  const store = openStore(damaged);
  const { set, policy } = seeded(store);
  store.insertRollouts(
    Array.from({ length: 400 }, (_, i) => ({
      kind: 'sim' as const,
      policyId: policy.id,
      layoutSetSha256: set.sha256,
      layoutIndex: i % 4,
      episodeSeconds: 60,
      controlHz: 30,
      status: 'valid' as const,
      statusReason: 'x'.repeat(200),
    })),
  );
  store.close();
  assert.equal(existsSync(`${damaged}-wal`), false, 'closing checkpoints the WAL into the main file');
  const bytes = readFileSync(damaged);
  assert.ok(bytes.length > 8 * 4096);
  bytes.fill(0xa5, 4096 * 2, 4096 * 6);
  writeFileSync(damaged, bytes);
  assert.throws(
    () => openStore(damaged),
    (e: unknown) => e instanceof StoreError && e.message.includes(damaged) && /damaged/.test(e.message),
  );
});

test('another program’s SQLite file and a newer tandem’s store are refused, untouched', (t) => {
  const dir = tempDir(t);
  const foreign = join(dir, 'foreign.sqlite');
  const f = new Database(foreign);
  f.exec('CREATE TABLE photos (id INTEGER PRIMARY KEY)');
  f.close();
  assert.throws(() => openStore(foreign), /some other program, not a tandem store/);

  const newer = join(dir, 'newer.sqlite');
  openStore(newer).close();
  const n = new Database(newer);
  n.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 1}`);
  n.close();
  assert.throws(
    () => openStore(newer),
    (e: unknown) =>
      e instanceof StoreError &&
      e.message.includes(newer) &&
      new RegExp(
        `newer tandem \\(schema version ${LATEST_SCHEMA_VERSION + 1}; this tandem knows up to ${LATEST_SCHEMA_VERSION}\\)`,
      ).test(e.message),
  );
  const check = new Database(newer, { readonly: true });
  assert.equal(check.pragma('user_version', { simple: true }), LATEST_SCHEMA_VERSION + 1);
  check.close();
});

test('opening without create refuses a missing file', (t) => {
  const missing = join(tempDir(t), 'nope.sqlite');
  assert.throws(
    () => openStore(missing, { create: false }),
    (e: unknown) => e instanceof StoreError && e.message.includes(missing),
  );
  assert.equal(existsSync(missing), false);
});

test('a pinned layout set from the sampler goes in as-is and comes back equal; a tampered one is refused', async (t) => {
  const { sampleLayoutSet } = await import('../../src/layouts/layout-set.js');
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 2, seed: 3 });
  const { record, inserted } = store.putLayoutSet(set);
  assert.equal(inserted, true);
  assert.equal(record.sha256, set.sha256);
  assert.equal(record.layoutCount, 4);
  assert.equal(record.task, 'bottles-in-the-bin');
  assert.deepEqual(store.loadLayoutSet(set.sha256), JSON.parse(JSON.stringify(set)));
  const moved = { ...set, layouts: set.layouts.map((l, i) => (i === 0 ? { ...l, tier: 5 } : l)) };
  assert.throws(() => store.putLayoutSet(moved), /hashes to [0-9a-f]{64}, not the claimed/);
});

test('an upgrade runs only the missing migrations, keeps the data, and a failing one leaves the previous version intact', async (t) => {
  const { MIGRATIONS } = await import('../../src/store/migrations.js');
  const file = join(tempDir(t), 'tandem.sqlite');
  const v1 = openStore(file);
  const { set, policy } = seeded(v1);
  v1.insertRollout({
    kind: 'sim',
    policyId: policy.id,
    layoutSetSha256: set.sha256,
    layoutIndex: 0,
    episodeSeconds: 60,
    controlHz: 30,
    status: 'valid',
    progress: 0.5,
  });
  v1.close();

  const broken = [
    ...MIGRATIONS,
    {
      version: MIGRATIONS.length + 1,
      description: 'a broken step',
      sql: 'ALTER TABLE rollouts ADD COLUMN note TEXT; SELECT * FROM no_such_table;',
    },
  ];
  assert.throws(
    () => openStore(file, { migrations: broken }),
    (e: unknown) =>
      e instanceof StoreError &&
      e.message.includes(file) &&
      new RegExp(
        `schema version ${LATEST_SCHEMA_VERSION + 1} \\(a broken step\\) failed: .*left at version ${LATEST_SCHEMA_VERSION}`,
      ).test(e.message),
  );
  const check = new Database(file, { readonly: true });
  assert.equal(check.pragma('user_version', { simple: true }), LATEST_SCHEMA_VERSION);
  assert.equal(
    (check.prepare('SELECT * FROM rollouts').get() as Record<string, unknown>).note,
    undefined,
    'the half-run step was rolled back',
  );
  check.close();

  const v2 = openStore(file, {
    migrations: [
      ...MIGRATIONS,
      {
        version: MIGRATIONS.length + 1,
        description: 'rollout notes',
        sql: "ALTER TABLE rollouts ADD COLUMN note TEXT NOT NULL DEFAULT ''",
      },
    ],
  });
  t.after(() => v2.close());
  assert.equal(v2.schemaVersion, LATEST_SCHEMA_VERSION + 1);
  assert.equal(v2.listRollouts()[0].progress, 0.5);
  assert.throws(
    () => openStore(file),
    new RegExp(
      `newer tandem \\(schema version ${LATEST_SCHEMA_VERSION + 1}; this tandem knows up to ${LATEST_SCHEMA_VERSION}\\)`,
    ),
  );
});

test("a version-1 store upgrades to rollout outcomes: a valid rollout's policy error moves out of its status reason, nothing is lost", async (t) => {
  const { MIGRATIONS } = await import('../../src/store/migrations.js');
  const file = join(tempDir(t), 'tandem.sqlite');
  const v1 = openStore(file, { migrations: MIGRATIONS.slice(0, 1) });
  const { set, policy } = seeded(v1);
  // Rows as the version-1 sweep wrote them: a policy error went into status_reason of a valid rollout.
  const base = {
    kind: 'sim' as const,
    policyId: policy.id,
    layoutSetSha256: set.sha256,
    episodeSeconds: 60,
    controlHz: 30,
  };
  const raw = (v1 as unknown as { c: { db: Database.Database } }).c.db;
  const insert = raw.prepare(
    'INSERT INTO rollouts (kind, policy_id, layout_set_sha256, layout_index, tier, episode_seconds, control_hz, status, status_reason, progress, started_at) VALUES (?, ?, ?, ?, 1, 60, 30, ?, ?, ?, ?)',
  );
  insert.run(base.kind, policy.id, set.sha256, 0, 'valid', null, 1, '2026-11-01T00:00:00.000Z');
  insert.run(
    base.kind,
    policy.id,
    set.sha256,
    0,
    'valid',
    'Policy act answered NaN at action row 0, entry 5',
    0.25,
    '2026-11-01T00:00:01.000Z',
  );
  insert.run(
    base.kind,
    policy.id,
    set.sha256,
    1,
    'invalid',
    'The simulation became unstable',
    null,
    '2026-11-01T00:00:02.000Z',
  );
  v1.close();

  const upgraded = openStore(file);
  t.after(() => upgraded.close());
  assert.equal(upgraded.schemaVersion, LATEST_SCHEMA_VERSION);
  const rows = upgraded.listRollouts();
  assert.deepEqual(
    rows.map((r) => [r.status, r.outcome, r.statusReason, r.policyError, r.progress]),
    [
      ['valid', 'completed', null, null, 1],
      ['valid', 'policy-error', null, 'Policy act answered NaN at action row 0, entry 5', 0.25],
      ['invalid', null, 'The simulation became unstable', null, null],
    ],
  );
  assert.deepEqual(
    upgraded.layoutOutcomes().map((r) => [r.layoutIndex, r.scored, r.policyErrors, r.invalid, r.aborted]),
    [
      [0, 2, 1, 0, 0],
      [1, 0, 0, 1, 0],
    ],
  );
  // New rows carry their outcome; one that contradicts its status is refused, and so is a policy error on an uncounted rollout.
  const id = upgraded.insertRollout({
    ...base,
    layoutIndex: 2,
    status: 'aborted',
    outcome: 'operator-stop',
    statusReason: 'stopped by the operator',
  });
  assert.equal(upgraded.getRollout(id)?.outcome, 'operator-stop');
  assert.throws(
    () => upgraded.insertRollout({ ...base, layoutIndex: 2, status: 'valid', outcome: 'rig-fault' }),
    /outcome 'rig-fault' does not go with status 'valid'/,
  );
  assert.throws(
    () => upgraded.insertRollout({ ...base, layoutIndex: 2, status: 'invalid', outcome: 'policy-error' }),
    /outcome 'policy-error' does not go with status 'invalid'/,
  );
  assert.throws(
    () =>
      upgraded.insertRollout({ ...base, layoutIndex: 2, status: 'invalid', outcome: 'rig-fault', policyError: 'x' }),
    /a policy error is recorded only on a valid rollout/,
  );
  assert.equal(upgraded.insertRollout({ ...base, layoutIndex: 2, status: 'valid', policyError: 'NaN' }) > 0, true);
  assert.equal(
    upgraded.listRollouts().at(-1)?.outcome,
    'policy-error',
    'a valid rollout with a policy error and no outcome is a policy error',
  );
});

test('layoutOutcomes aggregates per layout in SQL: latest operator score wins, unscored and invalid are counted apart', (t) => {
  const store = openStore(join(tempDir(t), 'tandem.sqlite'));
  t.after(() => store.close());
  const { set, policy } = seeded(store); // layouts 0,1 tier 1; 2 tier 2; 3 tier 3
  const base = { policyId: policy.id, layoutSetSha256: set.sha256, episodeSeconds: 60, controlHz: 30 };
  const [a, b] = store.insertRollouts([
    { ...base, kind: 'real', layoutIndex: 0, status: 'valid' },
    { ...base, kind: 'real', layoutIndex: 0, status: 'valid' },
    { ...base, kind: 'real', layoutIndex: 0, status: 'valid' }, // never scored
    { ...base, kind: 'real', layoutIndex: 2, status: 'invalid', statusReason: 'bottle placed off its mark' },
    { ...base, kind: 'sim', layoutIndex: 0, status: 'valid', progress: 0.25 },
  ]);
  store.insertOperatorScore({ rolloutId: a, endStates: [], progress: 0.5, counts: {} });
  store.insertOperatorScore({ rolloutId: a, endStates: [], progress: 1, counts: {} }); // correction
  store.insertOperatorScore({ rolloutId: b, endStates: [], progress: 0, counts: {} });
  const real = store.layoutOutcomes({ kind: 'real' });
  assert.deepEqual(
    real.map((r) => [r.layoutIndex, r.tier, r.scored, r.progressSum, r.fullSuccesses, r.unscored, r.excluded]),
    [
      [0, 1, 2, 1, 1, 1, 0],
      [2, 2, 0, 0, 0, 0, 1],
    ],
  );
  assert.deepEqual(
    store.layoutOutcomes({ kind: 'sim' }).map((r) => [r.layoutIndex, r.scored, r.progressSum]),
    [[0, 1, 0.25]],
  );
});
