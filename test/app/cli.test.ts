import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runTandem } from '../helpers/cli.js';

test('tandem --help lists the commands', async () => {
  const r = await runTandem(['--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /Usage: tandem <command>/);
  assert.match(r.stdout, /station/);
});

test('an unknown command is one clear sentence and exit 2, no stack trace', async () => {
  const r = await runTandem(['frobnicate']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /'frobnicate' is not a tandem command/);
  assert.doesNotMatch(r.stderr, /\bat .*\.ts:\d+/);
});

test('an unknown option names itself and points at --help', async () => {
  const r = await runTandem(['station', '--bogus']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--bogus/);
  assert.match(r.stderr, /--help/);
});

test('every command the overview lists is found by its own words (its module loaded on demand) and shows its own help', async () => {
  const { loadCommands, runCli } = await import('../../src/app/cli.js');
  const all = await loadCommands();
  assert.ok(all.length > 40, `${all.length} commands`);
  for (const c of all) {
    let out = '';
    const code = await runCli([...c.path, '--help'], {
      out: (t) => void (out += t),
      err: () => {},
      env: {},
      cwd: process.cwd(),
      signal: new AbortController().signal,
    });
    assert.equal(code, 0, `tandem ${c.path.join(' ')} --help`);
    assert.ok(out.startsWith(c.summary), `tandem ${c.path.join(' ')} --help shows its own help`);
  }
  const sim = await loadCommands((prefix) => prefix[0] === 'sim');
  assert.deepEqual(
    sim.map((c) => c.path.join(' ')),
    all.filter((c) => c.path[0] === 'sim').map((c) => c.path.join(' ')),
  );
});
