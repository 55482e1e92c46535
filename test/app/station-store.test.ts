import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../src/app/command.js';
import { openCommandStore, openStationStore, withCommandStore } from '../../src/app/station-store.js';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-station-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('without --data or TANDEM_DATA the store goes to the per-user data folder, created on first use', {
  skip: platform() !== 'linux' && 'the XDG default applies on Linux',
}, (t) => {
  const home = tempDir(t);
  const store = openCommandStore({}, { env: { XDG_DATA_HOME: join(home, 'xdg') }, cwd: home });
  store.close();
  assert.ok(existsSync(join(home, 'xdg', 'tandem', 'tandem.sqlite')));
});

test('--data wins over TANDEM_DATA, and a relative --data is taken from the working folder', (t) => {
  const dir = tempDir(t);
  const store = openCommandStore({ data: 'here/nested' }, { env: { TANDEM_DATA: join(dir, 'env') }, cwd: dir });
  store.close();
  assert.ok(existsSync(join(dir, 'here', 'nested', 'tandem.sqlite')));
  assert.equal(existsSync(join(dir, 'env')), false);
  openCommandStore({}, { env: { TANDEM_DATA: join(dir, 'env') }, cwd: dir }).close();
  assert.ok(existsSync(join(dir, 'env', 'tandem.sqlite')));
});

test('a data folder that cannot be created is one UserError naming it and the way out', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'a-file'), 'x');
  assert.throws(
    () => openStationStore(join(dir, 'a-file', 'data')),
    (e: unknown) =>
      e instanceof UserError &&
      e.message.includes(join(dir, 'a-file', 'data')) &&
      /--data DIR or set TANDEM_DATA/.test(e.message),
  );
});

test('withCommandStore closes the store and turns store problems into UserErrors', async (t) => {
  const dir = tempDir(t);
  let seen: { isOpen: boolean } | undefined;
  const n = await withCommandStore({ data: dir }, { env: {}, cwd: dir }, (store) => {
    seen = store;
    return store.listPolicies().length;
  });
  assert.equal(n, 0);
  assert.equal(seen?.isOpen, false);
  await assert.rejects(
    withCommandStore({ data: dir }, { env: {}, cwd: dir }, (store) => store.endSession(404)),
    (e: unknown) => e instanceof UserError && /no session 404/.test(e.message),
  );
});

test("a new data folder is this user's only (0700) and the store file and its WAL are 0600", (t) => {
  const parent = tempDir(t);
  const dataDir = join(parent, 'station', 'data');
  const store = openStationStore(dataDir);
  try {
    store.listPolicies();
    assert.equal(statSync(dataDir).mode & 0o777, 0o700);
    assert.equal(statSync(join(parent, 'station')).mode & 0o777, 0o700, 'every folder it created');
    for (const f of ['tandem.sqlite', 'tandem.sqlite-wal'])
      if (existsSync(join(dataDir, f))) assert.equal(statSync(join(dataDir, f)).mode & 0o777, 0o600, f);
    assert.ok(existsSync(join(dataDir, 'tandem.sqlite-wal')), 'the WAL exists while the store is open');
  } finally {
    store.close();
  }
});
