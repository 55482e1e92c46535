// The leader path rehearsed on the hardware stand-in, as a lab runs it: `tandem leader emulate` in
// one process serves the leader on a socat pty, `tandem teleop record --leader yam:…|gello:…` in
// another drives a yam-can follower (two emulated arms on socat ptys) through the real leader
// driver, and the take's MCAP (read with @mcap/core's indexed reader) holds the joint states the
// leader's hand led the follower to.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { readIndexed } from '../helpers/mcap.js';
import { startEmulatorThread, type EmulatorThread } from '../helpers/emulator-thread.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-leader-pty-'));
let follower: EmulatorThread;
let rigConfig: string;

// The hand holds the follower's rest pose (all zeros) for 0.5 s, then brings the left shoulder to
// 0.4 rad, the left wrist roll to -0.3 rad and the left gripper half open by 2 s, and stays there
// (joints gravity does not load: the stand-in's lumped motors sag where gravity pulls).
const TARGET = { joint1: 0.4, joint6: -0.3, gripper: 0.5 };
const trajectory = join(dir, 'hand.json');
const zeros = new Array<number>(14).fill(0);
const target = [...zeros];
target[0] = TARGET.joint1;
target[5] = TARGET.joint6;
target[6] = TARGET.gripper;

before(async () => {
  writeFileSync(
    trajectory,
    JSON.stringify({
      points: [
        { t: 0, q: zeros },
        { t: 0.5, q: zeros },
        { t: 2, q: target },
      ],
    }),
  );
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

/** `tandem leader emulate` in a child process, once it says it serves. */
async function emulateLeader(
  args: readonly string[],
): Promise<{ child: ChildProcessWithoutNullStreams; out: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/tandem.js'), 'leader', 'emulate', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const closed = new Promise<number | null>((res) => child.on('close', res));
  await Promise.race([
    until(() => /Press Ctrl-C to stop/.test(out), 30_000),
    closed.then((code) => assert.fail(`leader emulate exited ${code}: ${out}`)),
  ]);
  return {
    child,
    out: () => out,
    stop: async () => {
      child.kill('SIGINT');
      return closed;
    },
  };
}

/** One take of `seconds` with `leader`; returns the take's file after checking the run and its session. */
async function recordOneTake(leader: string, name: string, seconds: number): Promise<string> {
  const out = join(dir, name);
  const r = await runTandem(
    [
      'teleop',
      'record',
      '--leader',
      leader,
      '--follower',
      rigConfig,
      '--task',
      'bottles-in-the-bin',
      '--episodes',
      '1',
      '--seconds',
      String(seconds),
      '--reset',
      '0',
      '--ramp-s',
      '0.5',
      '--out',
      out,
      '--data',
      join(dir, 'data'),
      '--json',
    ],
    { timeoutMs: 90_000 },
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const summary = JSON.parse(r.stdout) as { end: string; kept: { file: string }[] };
  assert.equal(summary.end, 'done', r.stderr);
  assert.equal(summary.kept.length, 1);
  assert.deepEqual(
    readdirSync(out).filter((f) => f.endsWith('.mcap')),
    [summary.kept[0].file.slice(out.length + 1)],
  );
  return summary.kept[0].file;
}

/** The take was led by `leader` on the yam-can follower, and the follower ended where the hand took the leader. */
async function assertLeaderDriven(file: string, leader: string): Promise<void> {
  const ep = await readIndexed(file);
  const meta = ep.metadata.get('tandem.episode')!;
  assert.equal(meta.get('kind'), 'teleop');
  assert.equal(meta.get('leader'), leader);
  assert.equal(meta.get('rig'), 'yam-can');
  const states = ep.byTopic.get('/joint_states') ?? [];
  assert.ok(states.length > 100, `${states.length} joint states`);
  const last = states.at(-1)!.message.position as Float64Array | number[];
  // The follower's arms started at zero: only the leader's hand can have moved the left arm there.
  assert.ok(
    Math.abs(last[0] - TARGET.joint1) < 0.05,
    `left joint 1 ends at ${last[0]}, the hand holds ${TARGET.joint1}`,
  );
  assert.ok(
    Math.abs(last[5] - TARGET.joint6) < 0.05,
    `left joint 6 ends at ${last[5]}, the hand holds ${TARGET.joint6}`,
  );
  assert.ok(
    Math.abs(last[6] - TARGET.gripper) < 0.1,
    `left gripper ends at ${last[6]}, the hand holds ${TARGET.gripper}`,
  );
  // No right leader arm: the right follower arm held its pose.
  assert.ok(Math.abs(last[7]) < 0.05, `right joint 1 ends at ${last[7]}`);
}

test('leader emulate --kind yam on a Damiao USB-CAN pty: teleop record with --leader yam:damiao:PTY drives the yam-can follower, and the take holds the leader-driven joint states', {
  timeout: 180_000,
}, async () => {
  const link = join(dir, 'yam-leader-left');
  const leader = await emulateLeader([
    '--kind',
    'yam',
    '--transport',
    'damiao',
    '--link',
    link,
    '--trajectory',
    trajectory,
  ]);
  let code: number | null;
  try {
    assert.match(
      leader.out(),
      /Emulated YAM leader with its teaching handle \(damiao\): left arm on .*yam-leader-left\./,
    );
    const spec = `yam:damiao:${link}`;
    assert.match(leader.out(), new RegExp(`Try: tandem teleop record --leader ${spec.replace(/[/.]/g, '\\$&')} `));
    // The wrong framing first: SLCAN asked of the Damiao adapter is one sentence that says how to name it.
    const wrong = await runTandem([
      'teleop',
      'record',
      '--leader',
      `yam:${link}`,
      '--follower',
      rigConfig,
      '--task',
      'bottles-in-the-bin',
      '--episodes',
      '1',
      '--out',
      join(dir, 'wrong'),
      '--data',
      join(dir, 'data'),
    ]);
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.match(
      wrong.stderr,
      /^The left leader arm's bus cannot be opened: The SLCAN adapter on \S+ did not answer the SLCAN command 'C' within \d+ ms\. Is it an SLCAN adapter \(e\.g\. CANable with slcan firmware\)\? For a Damiao USB-CAN adapter write --leader yam:damiao:PORT \(in a station config, leader\.transport "damiao"\)\.\n$/,
    );
    const file = await recordOneTake(spec, 'yam-takes', 3);
    await assertLeaderDriven(file, spec);
    // Faults typed at the emulator, as an operator rehearsing bad input would.
    leader.child.stdin.write('status\ncrc-errors 3\nright silence\nleft garbage\n');
    await until(
      () =>
        /the left arm sent a burst of garbage bytes/.test(leader.out()) &&
        /This leader has no right arm\./.test(leader.out()),
      10_000,
    );
    assert.match(leader.out(), /left arm: \d+ frames answered/);
    assert.match(
      leader.out(),
      /crc-errors is a GELLO fault \(Dynamixel packets carry a CRC\); the YAM leader speaks CAN\./,
    );
  } finally {
    code = await leader.stop();
  }
  assert.equal(code, 0, leader.out());
  const frames = Number(/Stopped the leader emulator; left arm answered (\d+) frames\./.exec(leader.out())?.[1]);
  // Six motors and the handle every 4 ms cycle for the take alone.
  assert.ok(frames > 7 * 250, `${frames} frames answered\n${leader.out()}`);
  assert.equal(existsSync(link), false, 'the pty link is gone');
  const st = await follower.status();
  for (const m of [...st.motors.left!, ...st.motors.right!])
    assert.equal(m.status, 0, `follower motor ${m.id} disabled after the take`);
});

test('leader emulate --kind gello: teleop record with --leader gello:PTY drives the yam-can follower; an emulated leader on it is refused in one sentence', {
  timeout: 180_000,
}, async () => {
  await follower.reset();
  const refused = await runTandem([
    'teleop',
    'record',
    '--leader',
    'emulated-yam',
    '--follower',
    rigConfig,
    '--task',
    'bottles-in-the-bin',
    '--episodes',
    '1',
    '--out',
    join(dir, 'refused'),
    '--data',
    join(dir, 'data'),
  ]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.equal(
    refused.stderr,
    "The emulated-yam leader moves by a script, and would drive the real arms of the yam-can rig with nobody at the leader; use a real leader (--leader yam:PORT,PORT or gello:PORT,PORT, or the station config's leader).\n",
  );
  const st = await follower.status();
  assert.ok(
    [...st.motors.left!, ...st.motors.right!].every((m) => m.mits === 0),
    'the refused run commanded no motor',
  );

  const link = join(dir, 'gello-left');
  const leader = await emulateLeader(['--kind', 'gello', '--link', link, '--trajectory', trajectory]);
  let code: number | null;
  try {
    const file = await recordOneTake(`gello:${link}`, 'gello-takes', 2.5);
    await assertLeaderDriven(file, `gello:${link}`);
    leader.child.stdin.write('crc-errors 5\n');
    await until(() => /the leader sends the next 5 packets with a wrong CRC/.test(leader.out()), 10_000);
  } finally {
    code = await leader.stop();
  }
  assert.equal(code, 0, leader.out());
  assert.match(leader.out(), /Stopped the leader emulator; left arm answered \d+ sync reads\./);
});
