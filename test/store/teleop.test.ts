import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/store.js';
import { MIGRATIONS } from '../../src/store/migrations.js';

test('a version-4 store upgrades to teleop sessions; a session keeps its takes, at most one kept take per episode', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'store-teleop-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tandem.sqlite');
  const old = openStore(file, { migrations: MIGRATIONS.slice(0, 4) });
  const before = old.createSession({ kind: 'real-eval' });
  old.close();
  const store = openStore(file);
  t.after(() => store.close());
  assert.equal(store.getSession(before.id)?.kind, 'real-eval', 'older rows survive the upgrade');
  const s = store.createTeleopSession({
    task: 'bottles-in-the-bin',
    prompt: 'put all the bottles in the bin',
    leader: 'emulated-yam',
    follower: 'cell none',
    cameras: 'cell',
    episodes: 2,
    episodeSeconds: 5,
    resetSeconds: 1,
    outDir: '/tmp/x',
  });
  assert.equal(store.getSession(s.sessionId)?.kind, 'teleop-recording');
  const rec = store.startRecording({ file: '/tmp/x/a.mcap', kind: 'teleop' });
  const take = store.startTeleopTake({
    sessionId: s.sessionId,
    episodeIndex: 0,
    recordingId: rec,
    file: '/tmp/x/a.mcap',
  });
  store.endTeleopTake(take, { state: 'kept', marks: ['leader lost'] });
  const rec2 = store.startRecording({ file: '/tmp/x/b.mcap', kind: 'teleop' });
  const take2 = store.startTeleopTake({
    sessionId: s.sessionId,
    episodeIndex: 0,
    recordingId: rec2,
    file: '/tmp/x/b.mcap',
  });
  assert.throws(() => store.endTeleopTake(take2, { state: 'kept' }), 'a second kept take of episode 0 is refused');
  store.endTeleopTake(take2, { state: 'discarded', discardReason: 'operator', file: '/tmp/x/discarded/b.mcap' });
  assert.deepEqual(
    store.listTeleopTakes(s.sessionId).map((x) => [x.state, x.marks, x.file]),
    [
      ['kept', ['leader lost'], '/tmp/x/a.mcap'],
      ['discarded', [], '/tmp/x/discarded/b.mcap'],
    ],
  );
  store.setTeleopSessionState(s.sessionId, 'stopped', 'camera lost');
  assert.equal(store.latestStoppedTeleopSession('/tmp/x')?.sessionId, s.sessionId);
  store.setTeleopSessionState(s.sessionId, 'finished');
  assert.equal(store.latestStoppedTeleopSession('/tmp/x'), undefined);
  assert.ok(store.getTeleopSession(s.sessionId)?.endedAt);
});
