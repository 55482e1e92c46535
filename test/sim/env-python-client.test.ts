import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { SORT_REPLAY_SECONDS, writeSortReplay } from '../helpers/sort-replay.js';

// The Python vector-env client (clients/python/tandem_env, stdlib + websockets + msgpack) against a
// running `tandem sim serve-env`: it steps N environments through code:sort-from-tote's recorded
// actions on a one-bolt layout (so parts do reach their slots), and the rewards it saw add up to
// what the server's task events imply by the task's rule on their kinds. The 16 envs ×
// 10 000 steps is `npm run bench -- env-rewards` (docs/env-server.md).

/** Debian's python3 (python3-websockets, python3-msgpack); a pyenv shim on PATH may lack them. */
const PYTHON = process.env.TANDEM_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const BIN = join(PROJECT_ROOT, 'bin', 'tandem.js');

function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

test('a Python client steps 2 sort-from-tote envs through scoring actions; the rewards it saw equal the sum the task events imply, and are not 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-replay-'));
  const replayPath = join(dir, 'replay.json');
  const recorded = await writeSortReplay(replayPath);
  assert.equal(recorded.inCorrectSlot, 1, 'the recorded rollout put its bolt in the bolt slot');
  const server = spawn(
    process.execPath,
    [BIN, 'sim', 'serve-env', '--task', 'sort-from-tote', '--envs', '2', '--workers', '2', '--port', '0'],
    { cwd: PROJECT_ROOT },
  );
  let out = '';
  let err = '';
  server.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => server.on('close', (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      server.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const m = /on (ws:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1]);
      });
      void exited.then((code) => reject(new Error(`serve-env exited (${code}) before serving: ${err}`)));
    });
    const steps = recorded.rows;
    const r = await run(
      PYTHON,
      [
        '-m',
        'tandem_env.reward_check',
        url,
        '--steps',
        String(steps),
        '--seed',
        '5',
        '--replay',
        replayPath,
        '--episode-seconds',
        String(SORT_REPLAY_SECONDS),
      ],
      { PYTHONPATH: join(PROJECT_ROOT, 'clients', 'python') },
    );
    assert.equal(r.code, 0, `reward_check: ${r.stdout}${r.stderr}`);
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      envs: number;
      steps: number;
      reward_sum: number;
      event_sum: number;
      episodes_ended: number;
      positive_rewards: number;
      events: Record<string, number>;
    };
    assert.equal(summary.envs, 2);
    assert.equal(summary.steps, steps);
    assert.equal(summary.reward_sum, summary.event_sum);
    assert.ok(
      summary.positive_rewards > 0 && (summary.events['in-correct-slot'] ?? 0) > 0,
      `some env put the bolt in its slot: ${r.stdout}`,
    );
    assert.equal(summary.episodes_ended, 2, 'each env ran one episode to its end');
    // Bad input from Python: one sentence, and the client can go on.
    const bad = await run(
      PYTHON,
      [
        '-c',
        `
import sys
from tandem_env import VectorEnv, EnvServerError
with VectorEnv(sys.argv[1]) as env:
    env.reset(seed=0, tier=1)
    try:
        env.step([[0.0] * 13] * 2)
    except EnvServerError as e:
        print("refused:", e)
    obs, reward, terminated, truncated, info = env.step([[0.0] * 14] * 2)
    print("stepped", len(reward))
`,
        url,
      ],
      { PYTHONPATH: join(PROJECT_ROOT, 'clients', 'python') },
    );
    assert.equal(bad.code, 0, bad.stderr);
    assert.match(
      bad.stdout,
      /refused: "actions" has shape \[2, 13\]; this server runs 2 environments of 14 joint targets each/,
    );
    assert.match(bad.stdout, /stepped 2/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    server.kill('SIGINT');
    assert.equal(await exited, 0, `serve-env stops cleanly on Ctrl-C: ${err}`);
  }
});

test('serve-env refuses bad options with one sentence', async () => {
  const r = await runTandem(['sim', 'serve-env', '--task', 'juggling', '--envs', '2']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /Unknown task 'juggling'\. Known tasks: bottles-in-the-bin, mug-flipping, sort-from-tote\./);
  const n = await runTandem(['sim', 'serve-env', '--task', 'sort-from-tote', '--envs', '0']);
  assert.notEqual(n.code, 0);
  assert.doesNotMatch(n.stderr, /at .*\.(ts|js):\d+/);
  const cam = await runTandem([
    'sim',
    'serve-env',
    '--task',
    'sort-from-tote',
    '--envs',
    '1',
    '--cameras',
    'cam_high,cam_top',
  ]);
  assert.notEqual(cam.code, 0);
  assert.equal(
    cam.stderr,
    "Unknown camera 'cam_top' in --cameras; the sim's cameras are cam_high, cam_left_wrist, cam_right_wrist.\n",
  );
});
