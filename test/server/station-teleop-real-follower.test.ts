/**
 * The Teleop page on a station of real arms (a yam-can rig config): the page's leaders are the
 * emulated ones, moved by a script, so starting one there is refused in one sentence that says how
 * to record with a real leader instead — nothing is recorded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStation } from '../helpers/station-process.js';
import { TOKEN_HEADER } from '../../src/server/api-types.js';

test('the Teleop page refuses an emulated leader on a yam-can station in one sentence naming the way to a real leader', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-teleop-real-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  // Adapters that are not plugged in: the refusal comes before the rig is asked for.
  const station = await startStation({ dataDir, rigConfig: { type: 'yam-can', transport: 'slcan', ports: { left: join(dataDir, 'no-adapter-left'), right: join(dataDir, 'no-adapter-right') } } });
  t.after(() => station.stop());
  const res = await fetch(`${station.base}/api/teleop/start`, {
    method: 'POST',
    headers: { [TOKEN_HEADER]: station.token, 'content-type': 'application/json' },
    body: JSON.stringify({ task: 'bottles-in-the-bin', episodes: 1, seconds: 2, cameras: 'none', leader: 'emulated-gello' }),
  });
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), {
    error:
      'The emulated-gello leader moves by a script, and would drive the real arms of the yam-can rig with nobody at the leader; this page drives only emulated leaders, so record with the real leader from a terminal: tandem teleop record --leader yam:PORT,PORT (or gello:PORT,PORT, or --station-config FILE with its \'leader\').',
  });
  assert.equal(existsSync(join(dataDir, 'teleop')), false, 'nothing was recorded');
});
