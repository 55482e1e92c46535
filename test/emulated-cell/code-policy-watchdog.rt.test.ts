/**
 * A code policy on the emulated cell plans in a warmed-up worker thread: its answers come well
 * inside the safety supervisor's 100 ms watchdog, so the arm is never held for want of a command.
 * Before, every cell rollout of code:bottles-in-the-bin held twice in its first 3 s (the cold
 * first plan at 0.1 s, the first grasp plan at 2.9 s: inference max 115–130 ms). Wall clock, so it
 * lives in the real-time tier (run alone): an invalid rollout or a hold is a failure, with its reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';

const WATCHDOG_MS = 100;

test('a code policy on the emulated cell answers inside the 100 ms watchdog: no watchdog hold in its first 4 s', { timeout: 300_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-cell-watchdog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 17 })));
  writeFileSync(join(dir, 'cell.json'), JSON.stringify({ type: 'yam-cell', transport: 'slcan' }));
  const r = await runTandem(['rig', 'rollout', '--policy', 'code:bottles-in-the-bin', '--layouts', 'set.json', '--layout', '0', '--seconds', '4', '--rig-config', 'cell.json', '--data', join(dir, 'data'), '--json'], { cwd: dir, timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as { status: string; reason?: string; safetyEventsByKind: Record<string, number>; inferenceMs: { max: number }; wakeLateMaxMs: number };
  const holds = j.safetyEventsByKind['watchdog-hold'] ?? 0;
  t.diagnostic(`${j.status}, ${holds} watchdog holds, inference max ${j.inferenceMs.max} ms, wake late max ${j.wakeLateMaxMs} ms`);
  assert.equal(j.status, 'valid', j.reason);
  // The policy's own part: every answer well inside the watchdog (cold, the first plans took 115–130 ms).
  assert.ok(j.inferenceMs.max < WATCHDOG_MS, `the policy answered in ${j.inferenceMs.max} ms, past the ${WATCHDOG_MS} ms watchdog`);
  assert.equal(holds, 0, `${holds} watchdog holds though the policy answered within ${j.inferenceMs.max} ms (the loop woke up to ${j.wakeLateMaxMs} ms late)`);
});
