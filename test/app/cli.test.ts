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
