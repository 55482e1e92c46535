import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';

function layoutFile(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sim-'));
  const file = join(dir, 'bottles.json');
  writeFileSync(file, serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 3], perTier: 1, seed: 11 })));
  return { dir, file };
}

test('the same layout, policy and seed give the same final state in two separate processes; another seed does not', async () => {
  const { dir, file } = layoutFile();
  try {
    // The scripted policy moves both arms from the first second: a trajectory worth comparing.
    const args = (seed: number) => ['sim', 'rollout', '--layouts', file, '--layout', '1', '--policy', 'code:bottles-in-the-bin', '--seconds', '2', '--seed', String(seed), '--json'];
    const [a, b, c] = await Promise.all([runTandem(args(7)), runTandem(args(7)), runTandem(args(8))]);
    for (const r of [a, b, c]) assert.equal(r.code, 0, r.stderr);
    const [ja, jb, jc] = [a, b, c].map((r) => JSON.parse(r.stdout));
    assert.equal(ja.valid, true);
    assert.equal(typeof ja.progress, 'number');
    assert.deepEqual(Object.keys(ja.counts).sort(), ['inBin', 'target']);
    assert.match(ja.finalStateHash, /^[0-9a-f]{64}$/);
    assert.equal(ja.finalStateHash, jb.finalStateHash, 'bit-identical across processes');
    assert.notEqual(ja.finalStateHash, jc.finalStateHash, 'the seed changes the placement noise, so the final state');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unknown policy spec is one sentence listing the known ones, and nothing runs', async () => {
  const { dir, file } = layoutFile();
  try {
    const r = await runTandem(['sim', 'rollout', '--layouts', file, '--layout', '0', '--policy', 'code:juggle', '--json']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^Unknown policy 'code:juggle'; known policies: code:hold, code:bottles-in-the-bin, .*onnx:path\/to\/model\.onnx, ws:\/\/host:port\.\n$/);
    const bad = await runTandem(['sim', 'rollout', '--layouts', file, '--layout', '9', '--policy', 'code:hold']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^Layout 9 does not exist: this set has layouts 0 to 1\.\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
