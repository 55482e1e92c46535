/**
 * The Teleop page on a station of real arms (yam-can): it offers only the leader the station config
 * names (moved by a person); the script-moved emulated leaders are not offered, and asking for one
 * anyway is refused in one sentence that says which leader to pick — nothing is recorded. Without a
 * leader in the config, the page has none to offer and says how to name one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStation } from '../helpers/station-process.js';
import { TOKEN_HEADER, type StationInfo } from '../../src/server/api-types.js';

async function startTeleop(base: string, token: string, leader: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}/api/teleop/start`, {
    method: 'POST',
    headers: { [TOKEN_HEADER]: token, 'content-type': 'application/json' },
    body: JSON.stringify({ task: 'bottles-in-the-bin', episodes: 1, seconds: 2, cameras: 'none', leader }),
  });
  return { status: res.status, body: await res.json() };
}

test('the Teleop page on a yam-can station offers only the station config’s leader and refuses an emulated one in one sentence naming it', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-teleop-real-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  // Adapters that are not plugged in: the refusal comes before the rig is asked for.
  const config = join(dataDir, 'station.json');
  const leaderPorts = [join(dataDir, 'leader-left'), join(dataDir, 'leader-right')];
  writeFileSync(
    config,
    JSON.stringify({
      version: 1,
      rig: {
        type: 'yam-can',
        transport: 'slcan',
        ports: { left: join(dataDir, 'no-adapter-left'), right: join(dataDir, 'no-adapter-right') },
      },
      leader: { kind: 'yam', ports: leaderPorts },
    }),
  );
  const station = await startStation({ dataDir, args: ['--station-config', config] });
  t.after(() => station.stop());
  const info = await station.api<StationInfo>('/api/info');
  assert.deepEqual(info.teleop, {
    leaders: [
      { value: 'station', words: `the station's YAM leader + teaching handle on ${leaderPorts.join(', ')} (SLCAN)` },
    ],
    cameras: null,
    ownTable: false,
  });
  const r = await startTeleop(station.base, station.token, 'emulated-gello');
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, {
    error: `The emulated-gello leader moves by a script, and would drive the real arms of the yam-can rig with nobody at the leader; pick the station's own leader (yam:${leaderPorts.join(',')}) on this page.`,
  });
  assert.equal(existsSync(join(dataDir, 'teleop')), false, 'nothing was recorded');
});

test('a yam-can station whose config names no leader offers none, and says how to name one', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-teleop-real-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const station = await startStation({
    dataDir,
    rigConfig: {
      type: 'yam-can',
      transport: 'slcan',
      ports: { left: join(dataDir, 'no-adapter-left'), right: join(dataDir, 'no-adapter-right') },
    },
  });
  t.after(() => station.stop());
  assert.deepEqual((await station.api<StationInfo>('/api/info')).teleop, {
    leaders: [],
    cameras: null,
    ownTable: false,
  });
  const st = await startTeleop(station.base, station.token, 'station');
  assert.equal(st.status, 400);
  assert.deepEqual(st.body, {
    error:
      "This station's config names no leader; add 'leader' to the station config (docs/station-config.md) and restart the station.",
  });
  const em = await startTeleop(station.base, station.token, 'emulated-yam');
  assert.equal(em.status, 400);
  assert.match(
    (em.body as { error: string }).error,
    /^The emulated-yam leader moves by a script, .*; name the real leader in the station config \('leader', docs\/station-config\.md\), restart the station with --station-config FILE and pick it on this page\.$/,
  );
  assert.equal(existsSync(join(dataDir, 'teleop')), false, 'nothing was recorded');
});
