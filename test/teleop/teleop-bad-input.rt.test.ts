/**
 * Bad input during teleop recording, each ending in one sentence, the follower in a safe hold and
 * every recorded byte kept: the leader stops answering, the leader is far from the follower at
 * engage, garbage floods the leader's line, a camera is lost mid-take (then --resume).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { openStore, type Store } from '../../src/store/store.js';
import { recordTeleop, type TeleopRecordOptions } from '../../src/app/teleop-recording.js';
import type { EmulatedYamLeader } from '../../drivers/leaders/emulators/yam-leader-emulator.js';
import { LEADER_REST_POSE } from '../../drivers/leaders/emulators/operator-hand.js';
import type { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';
import { readIndexed } from '../helpers/mcap.js';

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-teleop-bad-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  return {
    dir,
    out: join(dir, 'takes'),
    store,
    done: () => (store.close(), rmSync(dir, { recursive: true, force: true })),
  };
}

function base(store: Store, out: string, lines: string[], extra: Partial<TeleopRecordOptions>): TeleopRecordOptions {
  return {
    store,
    outDir: out,
    leader: 'emulated-yam',
    follower: 'cell',
    gap: 'none',
    cameras: 'none',
    task: 'bottles-in-the-bin',
    episodes: 1,
    seconds: 3,
    resetSeconds: 0.5,
    rampS: 1,
    log: (l) => lines.push(l),
    ...extra,
  };
}

/** Runs `act` once a take has been recording for `afterMs`. */
function duringTake(lines: string[], afterMs: number, act: () => void) {
  let armed = true;
  return (l: string) => {
    lines.push(l);
    if (armed && l.startsWith('Episode 1/')) {
      armed = false;
      setTimeout(act, afterMs);
    }
  };
}

async function events(file: string) {
  const ep = await readIndexed(file);
  return (ep.byTopic.get('/tandem/events') ?? []).map((m) => ({
    kind: String(m.message.kind),
    message: String(m.message.message),
  }));
}

test('the leader stops answering mid-take: the follower holds, the take is marked and kept; back within 2 s it re-engages', {
  timeout: 300_000,
}, async () => {
  const w = workspace();
  const lines: string[] = [];
  let emu: EmulatedYamLeader | undefined;
  try {
    const log = duringTake(lines, 600, () => {
      emu!.inject({ kind: 'silence' });
      setTimeout(() => emu!.inject({ kind: 'recover' }), 800);
    });
    const { sessionId, session } = await recordTeleop({
      ...base(w.store, w.out, lines, { seconds: 4 }),
      log,
      onReady: (c) => (emu = c.leader.emulated as EmulatedYamLeader),
    });
    assert.equal(session.end, 'done', `${session.problem}\n${lines.join('\n')}`);
    assert.ok(
      lines.some((l) =>
        /^LEADER LOST: The (left|right) leader stopped answering \(no sample for \d+ ms\); the follower holds where it is\./.test(
          l,
        ),
      ),
      lines.join('\n'),
    );
    assert.equal(session.kept.length, 1);
    assert.match(session.kept[0].marks.join(' '), /stopped answering/);
    const ev = await events(session.kept[0].file);
    assert.ok(ev.some((e) => e.kind === 'mark' && /stopped answering/.test(e.message)));
    assert.ok(ev.some((e) => e.kind === 'mark' && /re-engaging/.test(e.message)));
    assert.ok(
      !ev.some((e) => e.kind === 'safety' && /damp/i.test(e.message)),
      'the follower was held, never left to its watchdog',
    );
    const [take] = w.store.listTeleopTakes(sessionId);
    assert.equal(take.state, 'kept');
    assert.match(take.marks.join(' '), /stopped answering/);
  } finally {
    w.done();
  }
});

test('a leader far from the follower at engage is refused in one sentence; nothing moves, nothing is recorded, the session stops resumable', {
  timeout: 300_000,
}, async () => {
  const w = workspace();
  const lines: string[] = [];
  const far = [...LEADER_REST_POSE];
  far[8] = 1.2; // right joint 2
  const traj = join(w.dir, 'far.json');
  writeFileSync(traj, JSON.stringify({ points: [{ t: 0, q: far }] }));
  const keys = new PassThrough();
  try {
    const log = (l: string) => {
      lines.push(l);
      if (l.startsWith('Not engaging')) setTimeout(() => keys.write('q'), 200);
    };
    const { sessionId, session } = await recordTeleop({
      ...base(w.store, w.out, lines, {}),
      trajectory: traj,
      keyboard: keys,
      log,
    });
    assert.equal(session.end, 'operator');
    assert.ok(
      lines.some((l) =>
        /^Not engaging: the leader's right joint 2 is 1\.\d\d rad from the follower's \(more than 0\.60 rad\); move the leader to the follower's pose, then engage again\. Press E/.test(
          l,
        ),
      ),
      lines.join('\n'),
    );
    assert.equal(session.kept.length, 0);
    assert.deepEqual(
      readdirSync(w.dir).filter((f) => f === 'takes'),
      [],
      'no take was opened',
    );
    assert.equal(w.store.getTeleopSession(sessionId)?.state, 'stopped');
  } finally {
    w.done();
  }
});

test('refused at engage with nobody to answer (stdin ended, an emulated leader, no pedal): the session stops in one sentence instead of waiting forever', {
  timeout: 300_000,
}, async () => {
  const w = workspace();
  const lines: string[] = [];
  const far = [...LEADER_REST_POSE];
  far[8] = 1.2;
  const traj = join(w.dir, 'far.json');
  writeFileSync(traj, JSON.stringify({ points: [{ t: 0, q: far }] }));
  const keys = new PassThrough();
  keys.end(); // a script's stdin at EOF, as with `< /dev/null`
  try {
    const { sessionId, session } = await recordTeleop({
      ...base(w.store, w.out, lines, {}),
      trajectory: traj,
      keyboard: keys,
    });
    assert.equal(session.end, 'unattended', lines.join('\n'));
    assert.match(
      session.problem ?? '',
      /^Not engaging: .* Nobody can answer \(the keyboard's input has ended and no pedal, hand-moved leader or station page is attached\), so the session stops here; the takes so far are kept — continue with --resume\.$/,
    );
    assert.equal(session.kept.length, 0);
    assert.equal(w.store.getTeleopSession(sessionId)?.state, 'stopped');
  } finally {
    w.done();
  }
});

test('garbage floods the leader line mid-take: dropped, the leader is untrusted, the follower holds, the take is kept and marked', {
  timeout: 300_000,
}, async () => {
  const w = workspace();
  const lines: string[] = [];
  let emu: EmulatedYamLeader | undefined;
  try {
    const log = duringTake(lines, 500, () => emu!.inject({ kind: 'garbage', bytes: 4000 }, ['left']));
    const { session } = await recordTeleop({
      ...base(w.store, w.out, lines, {}),
      log,
      onReady: (c) => (emu = c.leader.emulated as EmulatedYamLeader),
    });
    assert.ok(
      lines.some((l) =>
        /^LEADER LOST: The left leader's SLCAN adapter on \S+ keeps sending bytes that are not CAN frames/.test(l),
      ),
      lines.join('\n'),
    );
    assert.equal(session.kept.length, 1);
    assert.match(session.kept[0].marks.join(' '), /not CAN frames/);
    assert.ok(session.kept[0].summary.messages > 100);
    assert.ok((emu!.leader.diagnostics()[0].bus.garbageBytes ?? 0) >= 4000);
  } finally {
    w.done();
  }
});

test('a camera lost mid-take ends the take (kept, marked), the session stops with one sentence, and --resume records the next episode', {
  timeout: 300_000,
}, async () => {
  const w = workspace();
  const lines: string[] = [];
  let cams: readonly FfmpegCamera[] = [];
  try {
    const log = duringTake(lines, 800, () => process.kill(cams[0].pid!, 'SIGKILL'));
    const first = await recordTeleop({
      ...base(w.store, w.out, lines, { cameras: 'testsrc:2', episodes: 2, seconds: 4 }),
      log,
      onReady: (c) => (cams = c.cameras as FfmpegCamera[]),
    });
    assert.equal(first.session.end, 'camera-lost', lines.join('\n'));
    assert.match(
      first.session.problem ?? '',
      /^Camera cam_high was lost \(.+\); the take in flight was kept and marked, the follower holds\. Fix the camera, then continue with --resume\.$/,
    );
    assert.equal(first.session.kept.length, 1);
    const ev = await events(first.session.kept[0].file);
    assert.ok(ev.some((e) => e.kind === 'camera-lost'));
    const ep = await readIndexed(first.session.kept[0].file);
    assert.ok(
      (ep.byTopic.get('/cameras/cam_left_wrist/image/compressed') ?? []).length > 3,
      'the other camera kept recording',
    );
    assert.equal(w.store.getTeleopSession(first.sessionId)?.state, 'stopped');
    // Resume: the same session, at episode 2.
    const lines2: string[] = [];
    const again = await recordTeleop({
      ...base(w.store, w.out, lines2, { episodes: undefined, seconds: 1 }),
      resume: true,
    });
    assert.equal(again.sessionId, first.sessionId);
    assert.equal(again.session.end, 'done', lines2.join('\n'));
    assert.deepEqual(
      again.session.kept.map((k) => k.episodeIndex),
      [1],
    );
    assert.ok(lines2.some((l) => /^Resuming teleop session \d+ at episode 2 of 2\./.test(l)));
    assert.equal(w.store.getTeleopSession(first.sessionId)?.state, 'finished');
    assert.deepEqual(
      w.store.listTeleopTakes(first.sessionId).map((t) => [t.episodeIndex, t.state]),
      [
        [0, 'kept'],
        [1, 'kept'],
      ],
    );
  } finally {
    w.done();
  }
});
