/**
 * A service manager's stop (SIGTERM) and an operator's Ctrl-C twice, while a session rollout runs
 * on a real `tandem station` (emulated cell): the station is gone within 5 s, and the session is
 * left resumable at its step — the journal says the rollout was running, nothing is lost.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startStation, type StationProcess } from '../helpers/station-process.js';
import { runTandem } from '../helpers/cli.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { STATION_ADDRESS_FILE } from '../../src/app/station-serve.js';
import type { LayoutSetSummary, SessionView } from '../../src/server/api-types.js';

/** Starts a one-policy session of long episodes and answers its first placement: a rollout is running. */
async function sessionRolloutRunning(station: StationProcess): Promise<number> {
  const set = await station.api<LayoutSetSummary>('/api/layout-sets/sample', {
    task: 'bottles-in-the-bin',
    tiers: [1],
    perTier: 1,
    seed: 5,
  });
  const v = await station.api<SessionView>('/api/sessions', {
    layoutSet: set.sha256,
    policies: ['code:hold'],
    perLayout: 1,
    blind: false,
    seconds: 60,
  });
  for (let i = 0; i < 600; i++) {
    const s = await station.api<SessionView | null>('/api/session');
    if (s?.phase === 'place' && s.prompt) {
      await station.api('/api/session/answer', { prompt: s.prompt.id, answer: { action: 'confirm' } });
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  for (let i = 0; i < 600; i++) {
    if ((await station.api<SessionView | null>('/api/session'))?.phase === 'running') return v.id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the session rollout never started');
}

async function exitWithin(station: StationProcess, send: () => void): Promise<{ code: number | null; ms: number }> {
  const t0 = performance.now();
  const exited = new Promise<number | null>((resolve) => {
    if (station.child.exitCode !== null) resolve(station.child.exitCode);
    else station.child.once('exit', (code) => resolve(code));
  });
  send();
  const code = await Promise.race([exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 5_000))]);
  assert.notEqual(
    code,
    'late',
    `the station was still running 5 s after the signal; stdout: ${station.stdout()} stderr: ${station.stderr()}`,
  );
  return { code: code as number | null, ms: performance.now() - t0 };
}

async function resumableAt(station: StationProcess, id: number): Promise<void> {
  const r = await runTandem(['session', 'export', String(id), '--json', '--data', station.dataDir]);
  assert.equal(r.code, 0, r.stderr);
  const x = JSON.parse(r.stdout) as { session: { endedAt: string | null }; progress: { done: number; ended: boolean } };
  assert.equal(x.session.endedAt, null, 'the session stays open, resumable');
  assert.equal(x.progress.ended, false);
}

test('SIGTERM during a session rollout: the station exits cleanly within 5 s and the session stays resumable', async (t) => {
  const station = await startStation({ rigConfig: { type: 'yam-cell', transport: 'slcan', replyDeadlineMs: 350 } });
  t.after(() => station.dispose());
  // A page left open across a restart is told where the new address is: the data folder, owner only.
  const address = join(station.dataDir, STATION_ADDRESS_FILE);
  assert.equal(readFileSync(address, 'utf8').trim(), station.url);
  assert.equal(statSync(address).mode & 0o777, 0o600);
  const id = await sessionRolloutRunning(station);
  const { code } = await exitWithin(station, () => station.child.kill('SIGTERM'));
  assert.equal(code, 0, station.stderr());
  assert.equal(existsSync(address), false, 'a stopped station leaves no address behind');
  await resumableAt(station, id);
});

test('Ctrl-C twice during a session rollout: the station is gone at once (exit 130) and the session stays resumable', async (t) => {
  const station = await startStation({ rigConfig: { type: 'yam-cell', transport: 'slcan', replyDeadlineMs: 350 } });
  t.after(() => station.dispose());
  const id = await sessionRolloutRunning(station);
  const { code } = await exitWithin(station, () => {
    station.child.kill('SIGINT');
    setTimeout(() => station.child.kill('SIGINT'), 200);
  });
  assert.ok(code === 130 || code === 0, `exit ${code}: ${station.stderr()}`);
  await resumableAt(station, id);
});
