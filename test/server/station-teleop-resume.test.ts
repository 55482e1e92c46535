/**
 * The Teleop page's resume and table choice, through a real `tandem station` on the emulated cell
 * (no takes run here; test/server/station-teleop.test.ts records and resumes in chromium): the
 * stopped session `--resume` would carry on is named with its kept count, a stale or finished one
 * is refused, one the page cannot drive (a real leader) says how to carry it on from the terminal,
 * and a table layout is checked against the store and the task before anything starts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStation } from '../helpers/station-process.js';
import { openStationStore } from '../../src/app/station-store.js';
import { TOKEN_HEADER, type LayoutSetSummary, type TeleopResumable } from '../../src/server/api-types.js';
import type { Store } from '../../src/store/store.js';

function stoppedSession(
  store: Store,
  outDir: string,
  over: { leader?: string; episodes?: number; kept?: number; follower?: string },
): number {
  const { sessionId } = store.createTeleopSession({
    task: 'bottles-in-the-bin',
    prompt: 'put the bottles in the bin',
    leader: over.leader ?? 'emulated-yam',
    follower: over.follower ?? 'cell seed:0',
    cameras: 'none',
    episodes: over.episodes ?? 3,
    episodeSeconds: 5,
    resetSeconds: 2,
    outDir,
  });
  for (let i = 0; i < (over.kept ?? 0); i++) {
    const file = join(outDir, `s${sessionId}-ep${i}.mcap`);
    const recordingId = store.startRecording({ file, kind: 'teleop' });
    store.endRecording(recordingId, { state: 'finished' });
    store.endTeleopTake(store.startTeleopTake({ sessionId, episodeIndex: i, recordingId, file }), { state: 'kept' });
  }
  store.setTeleopSessionState(sessionId, 'stopped', 'the operator stopped');
  return sessionId;
}

test('the Teleop page names the stopped session to resume and refuses a stale id, a count already kept, a leader it cannot drive, and a table layout that does not fit', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-teleop-resume-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const outDir = join(dataDir, 'teleop');
  const store = openStationStore(dataDir);
  const finished = stoppedSession(store, outDir, { kept: 1, episodes: 1 });
  store.setTeleopSessionState(finished, 'finished');
  const elsewhere = stoppedSession(store, join(dataDir, 'other'), { kept: 0 });
  const a = stoppedSession(store, outDir, { kept: 2, episodes: 4 });
  store.close();

  // The embedded default rig (the emulated cell): its follower is 'cell seed:0', as the sessions above were recorded.
  const station = await startStation({ env: { TANDEM_DATA: dataDir } });
  t.after(() => station.stop());
  const headers = { [TOKEN_HEADER]: station.token, 'content-type': 'application/json' };
  const get = async <T>(path: string): Promise<T> =>
    (await (await fetch(`${station.base}${path}`, { headers })).json()) as T;
  const post = async (path: string, body: unknown): Promise<{ status: number; error?: string }> => {
    const res = await fetch(`${station.base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const json = (await res.json()) as { error?: string };
    return { status: res.status, ...(json.error ? { error: json.error } : {}) };
  };

  const r = await get<TeleopResumable | null>('/api/teleop/resumable');
  assert.ok(r, "a stopped session in the station's teleop folder is resumable");
  assert.equal(
    r.sessionId,
    a,
    `the newest stopped one in <data>/teleop (not the finished ${finished}, not ${elsewhere} recording elsewhere)`,
  );
  assert.equal(r.kept, 2);
  assert.equal(r.episodes, 4);
  assert.equal(r.seconds, 5);
  assert.equal(r.blocked, null);

  const stale = await post('/api/teleop/resume', { sessionId: finished });
  assert.equal(stale.status, 409);
  assert.match(
    stale.error ?? '',
    new RegExp(`Teleop session ${finished} is not the one to resume: the newest stopped one is session ${a}`),
  );
  const full = await post('/api/teleop/resume', { sessionId: a, episodes: 2 });
  assert.equal(full.status, 400);
  assert.match(full.error ?? '', /already has 2 kept episodes; ask for more than 2 episodes/);
  assert.match(
    (await post('/api/teleop/resume', { sessionId: a, leader: 'emulated-gello' })).error ?? '',
    /unknown field 'leader'/,
  );
  assert.match((await post('/api/teleop/resume', {})).error ?? '', /'sessionId' .* is missing/);
  assert.equal(await get('/api/teleop'), null, 'nothing was started by the refusals');

  // A newer stopped session on another follower, then one led by a real leader: named, but the page says to use the terminal.
  const db = openStationStore(dataDir);
  const real = stoppedSession(db, outDir, { follower: '/etc/tandem/yam-left-right.json', kept: 1 });
  db.close();
  const other = await get<TeleopResumable>('/api/teleop/resumable');
  assert.equal(other.sessionId, real);
  assert.match(
    other.blocked ?? '',
    new RegExp(
      `Teleop session ${real} was recorded on follower '/etc/tandem/yam-left-right.json', not on this station's rig \\('cell seed:0'\\)`,
    ),
  );
  const db2 = openStationStore(dataDir);
  const gello = stoppedSession(db2, outDir, { leader: 'gello:/dev/ttyUSB0', kept: 1 });
  db2.close();
  const g = await get<TeleopResumable>('/api/teleop/resumable');
  assert.equal(g.sessionId, gello);
  assert.match(
    g.blocked ?? '',
    new RegExp(
      `Teleop session ${gello} was led by 'gello:/dev/ttyUSB0', which is not this station's leader; carry it on with: tandem teleop record --resume --out .*/teleop --leader gello:/dev/ttyUSB0\\.`,
    ),
  );
  const refused = await post('/api/teleop/resume', { sessionId: gello });
  assert.equal(refused.status, 409);
  assert.equal(refused.error, g.blocked);

  // A layout for the table: both fields or neither, a set in the store, the task it was drawn for.
  const start = { task: 'bottles-in-the-bin', episodes: 1, seconds: 2, cameras: 'none', leader: 'emulated-yam' };
  assert.match(
    (await post('/api/teleop/start', { ...start, layout: 0 })).error ?? '',
    /both 'layoutSet' and 'layout' \(its index\), or neither/,
  );
  const missing = await post('/api/teleop/start', { ...start, layoutSet: 'ab'.repeat(32), layout: 0 });
  assert.equal(missing.status, 400);
  assert.match(missing.error ?? '', /There is no layout set abababababab… in the store/);
  const sampled = await fetch(`${station.base}/api/layout-sets/sample`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 5 }),
  });
  const set = (await sampled.json()) as LayoutSetSummary;
  assert.match(
    (await post('/api/teleop/start', { ...start, layoutSet: set.sha256, layout: 2 })).error ?? '',
    /has layouts 0 to 1; there is no layout 2/,
  );
  const wrongTask = await post('/api/teleop/start', {
    ...start,
    task: 'mug-flipping',
    layoutSet: set.sha256,
    layout: 0,
  });
  assert.equal(wrongTask.status, 400);
  assert.match(wrongTask.error ?? '', /is drawn for bottles-in-the-bin, not mug-flipping/);
  assert.equal((await get<{ use: string }>('/api/rig')).use, 'idle', 'no refused start took the rig');
});
