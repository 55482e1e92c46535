// The operator's takeover on the hardware stand-in, as a lab runs it: `tandem leader emulate` serves
// a YAM leader on a socat pty (Damiao USB-CAN framing), `tandem rig rollout --leader yam:damiao:PTY`
// drives a yam-can follower (two emulated arms on socat ptys) with a policy, and the operator's E
// key takes over and gives back. The episode file holds the stretch the leader drove, and the
// follower went where the leader's hand held it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { readIndexed } from '../helpers/mcap.js';
import { startEmulatorThread, type EmulatorThread } from '../helpers/emulator-thread.js';
import { TOPICS } from '../../src/record/episode-format.js';
import { openStore } from '../../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-takeover-pty-'));
let follower: EmulatorThread;
let rigConfig: string;
/** The hand holds the leader with the left shoulder at 0.3 rad, the rest at the follower's start pose (zeros). */
const HELD = 0.3;

before(async () => {
  follower = await startEmulatorThread();
  rigConfig = join(dir, 'rig.json');
  writeFileSync(
    rigConfig,
    JSON.stringify({ type: 'yam-can', transport: 'slcan', ports: follower.links, replyDeadlineMs: 350 }),
  );
});
after(async () => {
  await follower.stop();
  rmSync(dir, { recursive: true, force: true });
});

function tandem(args: readonly string[]) {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/tandem.js'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const closed = new Promise<number | null>((res) => child.on('close', res));
  return { child, out: () => out, err: () => err, closed };
}

test('on yam-can over ptys with `tandem leader emulate`, E takes over a rig rollout and gives it back: the stretch is recorded and the leader led the follower', {
  timeout: 180_000,
}, async () => {
  const hand = join(dir, 'hand.json');
  const q = new Array<number>(14).fill(0);
  q[0] = HELD;
  writeFileSync(hand, JSON.stringify({ points: [{ t: 0, q }] }));
  const link = join(dir, 'yam-leader-left');
  const leader = tandem([
    'leader',
    'emulate',
    '--kind',
    'yam',
    '--transport',
    'damiao',
    '--link',
    link,
    '--trajectory',
    hand,
  ]);
  try {
    await Promise.race([
      until(() => /Press Ctrl-C to stop/.test(leader.out() + leader.err()), 30_000),
      leader.closed.then((c) => assert.fail(`leader emulate exited ${c}: ${leader.err()}`)),
    ]);
    const rollout = tandem([
      'rig',
      'rollout',
      '--policy',
      'code:hold',
      '--layouts',
      join(PROJECT_ROOT, 'test/fixtures/layouts/bottles-golden.json'),
      '--layout',
      '0',
      '--seconds',
      '8',
      '--rig-config',
      rigConfig,
      '--leader',
      `yam:damiao:${link}`,
      '--ramp-s',
      '0.5',
      '--data',
      join(dir, 'data'),
      '--json',
    ]);
    const seen = (re: RegExp) =>
      Promise.race([
        until(() => re.test(rollout.err()), 60_000),
        rollout.closed.then((c) => assert.fail(`rig rollout exited ${c} before ${re}: ${rollout.err()}`)),
      ]);
    await seen(/^Running code:hold on yam-can/m);
    rollout.child.stdin.write('e');
    await seen(/^Taken over: the follower tracks the leader\./m);
    rollout.child.stdin.write('e');
    await seen(/^Given back: the policy resumes from here\./m);
    const code = await rollout.closed;
    assert.equal(code, 0, `${rollout.err()}${rollout.out()}`);
    const r = JSON.parse(rollout.out()) as {
      status: string;
      rolloutId: number;
      takeovers: { startS: number; endS: number; steps: number; open: boolean }[];
      episodeFile: string;
    };
    assert.equal(r.status, 'valid');
    assert.equal(r.takeovers.length, 1, JSON.stringify(r.takeovers));
    const [span] = r.takeovers;
    assert.equal(span.open, false);
    // The store keeps the stretch with the rollout: the report counts it as an assist.
    const store = openStore(join(dir, 'data', 'tandem.sqlite'));
    try {
      const stored = store.listTakeovers(r.rolloutId);
      assert.equal(stored.length, 1);
      assert.ok(
        Math.abs(stored[0].startS - span.startS) < 1e-3 &&
          Math.abs(stored[0].endS - span.endS) < 1e-3 &&
          !stored[0].open,
        JSON.stringify(stored),
      );
    } finally {
      store.close();
    }
    const ep = await readIndexed(r.episodeFile);
    const events = (ep.byTopic.get(TOPICS.events) ?? []).map(
      (e) => e.message as { kind: string; message: string; detail_json: string },
    );
    const marks = events
      .filter((e) => e.kind === 'takeover')
      .map((e) => (JSON.parse(e.detail_json) as { takeover: string }).takeover);
    assert.deepEqual(
      marks.filter((m) => m === 'start' || m === 'end'),
      ['start', 'end'],
      `takeover marks in the file: ${marks.join(', ')}; events: ${events.map((e) => e.kind).join(', ')}; takeovers: ${JSON.stringify(r.takeovers)}`,
    );
    assert.ok(marks.includes('sync-engaged'), marks.join(', '));
    // The leader's hand led the follower's left shoulder to where it held the leader; the policy (hold) had kept it at its start pose.
    const commands = (ep.byTopic.get(TOPICS.jointCommands) ?? []).map((m) => ({
      tS: Number(m.logTime) / 1e9,
      q: Array.from(m.message.position as Float64Array),
    }));
    const peak = Math.max(...commands.map((c) => c.q[0]));
    assert.ok(Math.abs(peak - HELD) < 0.02, `left joint 1 commanded up to ${peak}; the hand held ${HELD}`);
    // Never a jump, into the takeover or out of it: on the wall clock a late step moves the ramp on
    // by more than one period, so the command's speed is what is bounded — the 0.5 s minimum-jerk
    // ramp over 0.3 rad peaks at 1.1 rad/s; a jump of it in one 20 ms step would be 15 rad/s.
    let worst = { v: 0, at: 0 };
    for (let i = 1; i < commands.length; i++) {
      const dt = Math.max(commands[i].tS - commands[i - 1].tS, 0.02);
      for (let k = 0; k < 14; k++) {
        const v = Math.abs(commands[i].q[k] - commands[i - 1].q[k]) / dt;
        if (v > worst.v) worst = { v, at: i };
      }
    }
    assert.ok(
      worst.v < 2,
      `the command moved at ${worst.v.toFixed(2)} rad/s at command ${worst.at} of ${commands.length}`,
    );
  } finally {
    leader.child.kill('SIGINT');
    await leader.closed;
  }
});
