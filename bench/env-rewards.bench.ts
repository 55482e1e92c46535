/**
 * The acceptance run for the env server: a Python client (clients/python/tandem_env)
 * steps ENV_REWARDS_ENVS (default 16) sort-from-tote environments ENV_REWARDS_STEPS (default
 * 10 000) steps through `tandem sim serve-env`, replaying code:sort-from-tote's recorded actions
 * on a one-bolt layout (test/helpers/sort-replay.ts), and checks that the sum of the rewards it
 * received equals the sum the server's task events imply by the task's rule on their kinds.
 * Prints the client's JSON line (sums, event counts, wall time, env steps/s) and exits non-zero
 * when the sums differ or no reward was positive.
 *
 *   npm run bench -- env-rewards
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SORT_FROM_TOTE } from '../src/tasks/index.js';
import { startEnvServer } from '../src/sim/env/env-server.js';
import { SORT_REPLAY_SECONDS, writeSortReplay } from '../test/helpers/sort-replay.js';

const ENVS = Number(process.env.ENV_REWARDS_ENVS ?? 16);
const STEPS = Number(process.env.ENV_REWARDS_STEPS ?? 10_000);
const WORKERS = Number(process.env.ENV_REWARDS_WORKERS ?? 2);
const PYTHON = process.env.TANDEM_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const ROOT = fileURLToPath(new URL('..', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'tandem-env-rewards-'));
const replay = join(dir, 'replay.json');
const recorded = await writeSortReplay(replay);
console.log(`replay: ${recorded.rows} rows, the recorded rollout put ${recorded.inCorrectSlot} bolt in its slot`);
const server = await startEnvServer({ task: SORT_FROM_TOTE, envs: ENVS, port: 0, workers: WORKERS, controlHz: 50 });
let code = 1;
try {
  const t0 = Date.now();
  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(
      PYTHON,
      [
        '-m',
        'tandem_env.reward_check',
        server.url,
        '--steps',
        String(STEPS),
        '--seed',
        '0',
        '--replay',
        replay,
        '--episode-seconds',
        String(SORT_REPLAY_SECONDS),
      ],
      { cwd: ROOT, env: { ...process.env, PYTHONPATH: join(ROOT, 'clients', 'python') } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (c) => resolve({ code: c ?? -1, stdout, stderr }));
  });
  const wallS = (Date.now() - t0) / 1000;
  process.stdout.write(out.stdout);
  if (out.stderr) process.stderr.write(out.stderr);
  const summary = JSON.parse(out.stdout.trim().split('\n').pop() ?? '{}') as {
    reward_sum?: number;
    event_sum?: number;
    positive_rewards?: number;
  };
  console.log(
    `${ENVS} envs × ${STEPS} steps on ${WORKERS} worker threads: ${wallS.toFixed(1)} s wall; rewards seen ${summary.reward_sum}, implied by the events ${summary.event_sum}, ${summary.positive_rewards} positive`,
  );
  code = out.code === 0 && (summary.positive_rewards ?? 0) > 0 ? 0 : 1;
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
