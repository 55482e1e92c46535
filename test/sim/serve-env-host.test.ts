/**
 * `tandem sim serve-env` binds loopback only: it has no authentication, so another address is
 * refused in one sentence (before any worker starts) unless --allow-remote says so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runTandem } from '../helpers/cli.js';

test('serve-env off loopback without --allow-remote is refused in one sentence and a non-zero exit, nothing served', async () => {
  // Killed after 20 s: a server that started instead would serve until then.
  const r = await runTandem(['sim', 'serve-env', '--task', 'sort-from-tote', '--envs', '1', '--port', '0', '--host', '0.0.0.0'], { timeoutMs: 20_000 });
  assert.notEqual(r.code, 0);
  assert.equal(
    r.stderr,
    'The env server has no authentication, so it binds loopback only; 0.0.0.0 is not loopback. Use 127.0.0.1 (a trainer elsewhere can reach it over an SSH tunnel), or add --allow-remote knowing anyone on that network can then run sims on this machine.\n',
  );
  assert.equal(r.stdout, '');
});
