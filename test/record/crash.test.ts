import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { recoverEpisodeFile } from '../../src/record/recover.js';
import { inspectEpisodeFile } from '../../src/record/inspect.js';
import { TOPICS, cameraTopic } from '../../src/record/episode-format.js';
import { readIndexed } from '../helpers/mcap.js';

const CHILD = join(PROJECT_ROOT, 'test/record/fixtures/recorder-child.ts');

interface Progress {
  steps: number;
  frames: number;
  atS: number;
  status: string;
}

function startChild(argv: string[], wrap: string[] = []) {
  const cmd = [...wrap, process.execPath, '--import', 'tsx', CHILD, ...argv];
  const child = spawn(cmd[0], cmd.slice(1), { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
      buf = buf.slice(i + 1);
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return { child, lines, exited, stderr: () => err };
}

test('a recording killed with SIGKILL is recovered to a readable, finished file holding everything but its last moments', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-crash-'));
  try {
    const file = join(dir, 'killed.mcap');
    const c = startChild([file, 'until-killed']);
    await until(() => c.lines.some((l) => (l as unknown as Progress).atS > 2.5), 120_000);
    c.child.kill('SIGKILL');
    await c.exited;
    const progress = c.lines as unknown as Progress[];
    const last = progress[progress.length - 1];
    const unfinished = await inspectEpisodeFile(file);
    assert.equal(unfinished.complete, false, 'a killed recording has no footer');
    const r = await recoverEpisodeFile(file, join(dir, 'recovered.mcap'));
    const back = await readIndexed(r.output!);
    const states = back.byTopic.get(TOPICS.jointStates)!;
    const frames = back.byTopic.get(cameraTopic('cam_high'))!;
    states.forEach((m, i) => assert.equal(m.sequence, i, 'the recovered states are a prefix, without holes'));
    frames.forEach((m, i) => assert.equal(m.sequence, i));
    // The recorder syncs at least once a second; what the loss is in time is measured by
    // `npm run bench -- record`. Here: well over half of what was handed over survives a kill.
    assert.ok(states.length > 0.5 * last.steps, `kept ${states.length} of ${last.steps} joint states`);
    assert.ok(frames.length > 0.5 * last.frames, `kept ${frames.length} of ${last.frames} frames`);
    assert.equal(back.metadata.get('tandem.episode')!.get('task'), 'crash-test');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Runs the child inside a user+mount namespace on a tiny tmpfs (needs unshare and user namespaces). */
function canUnshare(): boolean {
  return (
    spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /tmp && true'], { stdio: 'ignore' })
      .status === 0
  );
}

test('a full disk stops the recording cleanly, not the episode: one sentence, and every byte already written recovers', {
  skip: canUnshare() ? false : 'needs `unshare -rm` (user namespaces) to mount a small tmpfs',
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-diskfull-'));
  try {
    const small = join(dir, 'small');
    mkdirSync(small);
    const file = join(small, 'e.mcap');
    const copy = join(dir, 'copy.mcap');
    // 4 MiB: three of the recorder's 1 MiB chunks (≈ 400 messages) before it fills, in ≈ 2 s of the
    // child's 1.8 MB/s; a bigger disk only makes the child run longer before the moment this checks.
    const script = `mount -t tmpfs -o size=4m tmpfs '${small}' && exec "$@"`;
    const c = startChild([file, 'disk-full', copy], ['unshare', '-rm', 'sh', '-c', script, 'sh']);
    const code = await c.exited;
    assert.equal(code, 0, c.stderr());
    const summary = (
      c.lines.find((l) => 'summary' in l) as {
        summary: { status: string; failure: string; lostMessages: number; bytes: number };
      }
    ).summary;
    assert.equal(summary.status, 'failed');
    assert.match(
      summary.failure,
      /^Recording stopped after \d+\.\d s because the disk is full; every byte written before is kept in .*e\.mcap \(recover it with `tandem record recover .*`\)\.$/,
    );
    assert.ok(summary.lostMessages >= 200, 'the episode went on; what came after is counted as lost');
    const r = await recoverEpisodeFile(copy, join(dir, 'recovered.mcap'));
    assert.ok(r.keptMessages > 100, `kept ${r.keptMessages}`);
    const back = await readIndexed(r.output!);
    assert.ok(back.byTopic.get(TOPICS.jointStates)!.length > 50);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an episode folder on a read-only disk is refused before anything is recorded, in one sentence', {
  skip: canUnshare() ? false : 'needs `unshare -rm` (user namespaces) to mount a read-only tmpfs',
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-rofs-'));
  try {
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    const c = startChild(
      [join(ro, 'e.mcap'), 'until-killed'],
      ['unshare', '-rm', 'sh', '-c', `mount -t tmpfs -o ro tmpfs '${ro}' && exec "$@"`, 'sh'],
    );
    assert.equal(await c.exited, 0, c.stderr());
    const open = c.lines[0] as { openError?: string };
    assert.match(open.openError ?? '', /^Cannot create the episode file .*e\.mcap: the disk is read-only\.$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
