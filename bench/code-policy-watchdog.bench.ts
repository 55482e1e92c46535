/**
 * Code-policy latency on the wall-clock emulated cell (npm run bench -- watchdog): a code policy
 * plans in a warmed-up worker thread, so its answers should come well inside the safety
 * supervisor's 100 ms watchdog and the arm is never held for want of a command (before the worker,
 * every cell rollout of code:bottles-in-the-bin held twice in its first 3 s: the cold first plan
 * and the first grasp plan took 115–130 ms). This was a wall-clock test; a latency depends on how
 * busy the machine is, so it is measured here and printed, never asserted in the test suite (on
 * virtual time the loop does not move while the policy thinks, so a hold cannot happen there).
 * Printed: the slowest answer against the 100 ms watchdog (the baseline), the holds, and how late
 * the loop woke (what the machine's load added), for 3 rollouts of 4 s.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../test/helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../src/layouts/layout-set.js';

const WATCHDOG_MS = 100;
const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-watchdog-'));
try {
  writeFileSync(
    join(dir, 'set.json'),
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 17 })),
  );
  writeFileSync(join(dir, 'cell.json'), JSON.stringify({ type: 'yam-cell', transport: 'slcan' }));
  for (let i = 0; i < 3; i++) {
    const r = await runTandem(
      [
        'rig',
        'rollout',
        '--policy',
        'code:bottles-in-the-bin',
        '--layouts',
        'set.json',
        '--layout',
        String(i % 2),
        '--seconds',
        '4',
        '--rig-config',
        'cell.json',
        '--data',
        join(dir, 'data'),
        '--json',
      ],
      { cwd: dir, timeoutMs: 120_000 },
    );
    if (r.code !== 0) throw new Error(`rig rollout exited ${r.code}: ${r.stderr}`);
    const j = JSON.parse(r.stdout) as {
      status: string;
      reason?: string;
      safetyEventsByKind: Record<string, number>;
      inferenceMs: { max: number };
      wakeLateMaxMs: number;
    };
    const holds = j.safetyEventsByKind['watchdog-hold'] ?? 0;
    console.log(
      `rollout ${i + 1}: ${j.status}${j.reason ? ` (${j.reason})` : ''}; slowest answer ${j.inferenceMs.max.toFixed(1)} ms = ${(j.inferenceMs.max / WATCHDOG_MS).toFixed(2)}× the ${WATCHDOG_MS} ms watchdog; ${holds} watchdog holds; loop woke up to ${j.wakeLateMaxMs.toFixed(1)} ms late`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
