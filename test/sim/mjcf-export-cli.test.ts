import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import load from 'mujoco-js';
import { runTandem } from '../helpers/cli.js';
import { pinLayoutSet, sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';

// `tandem sim export-mjcf` as an operator runs it: a file MuJoCo loads, nothing written on bad input.

test('export-mjcf writes a layout as MJCF that MuJoCo loads, to stdout or to -o FILE (kept unless --force)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-mjcf-'));
  try {
    const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [5], perTier: 1, seed: 3 });
    const file = join(dir, 'bottles.json');
    writeFileSync(file, serializeLayoutSet(set));
    const toStdout = await runTandem(['sim', 'export-mjcf', '--layouts', file, '--layout', '0']);
    assert.equal(toStdout.code, 0, toStdout.stderr);
    const out = join(dir, 'scene.xml');
    const toFile = await runTandem(['sim', 'export-mjcf', '--layouts', file, '--layout', '0', '-o', out]);
    assert.equal(toFile.code, 0, toFile.stderr);
    assert.equal(toFile.stdout, '');
    const xml = readFileSync(out, 'utf8');
    assert.equal(xml, toStdout.stdout, 'the same scene either way');
    const mj = await load();
    mj.FS.writeFile('/cli.xml', xml);
    const m = mj.MjModel.loadFromXML('/cli.xml');
    for (const o of set.layouts[0].objects)
      assert.ok(mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY.value, o.id) >= 0, `body ${o.id} in the file`);
    const again = await runTandem(['sim', 'export-mjcf', '--layouts', file, '--layout', '0', '-o', out]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /already exists; choose another name or add --force/);
    const forced = await runTandem(['sim', 'export-mjcf', '--layouts', file, '--layout', '0', '-o', out, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('export-mjcf of a layout the sim cannot build, or one that is not there, is one sentence (exit 2) and writes nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-mjcf-'));
  try {
    const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 3 });
    const file = join(dir, 'bad.json');
    // An object kind bottles-in-the-bin does not have (the file re-pinned, so only the kind is wrong).
    const [first, ...rest] = set.layouts;
    const teapot = { ...first, objects: [{ ...first.objects[0], kind: 'teapot' }, ...first.objects.slice(1)] };
    writeFileSync(file, serializeLayoutSet(pinLayoutSet({ ...set, layouts: [teapot, ...rest] })));
    const out = join(dir, 'scene.xml');
    const bad = await runTandem(['sim', 'export-mjcf', '--layouts', file, '--layout', '0', '-o', out]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^[^\n]*kind 'teapot'[^\n]*\n$/, 'one sentence naming the kind');
    assert.equal(existsSync(out), false);
    const good = join(dir, 'good.json');
    writeFileSync(good, serializeLayoutSet(set));
    const missing = await runTandem(['sim', 'export-mjcf', '--layouts', good, '--layout', '4', '-o', out]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^Layout 4 does not exist: this set has layouts 0 to 0\.\n$/);
    assert.equal(existsSync(out), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
