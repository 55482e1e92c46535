/**
 * The "done when" of teleoperation: a new user records three episodes on the emulated cell with
 * the emulated YAM leader and the cell's three cameras, discards and re-records one, and gets
 * three readable MCAP files, a teleop session in the store and a LeRobot export of them.
 * Real SQLite, real SLCAN bytes through serialport, real MCAP read back with the indexed reader.
 * The cell and its cameras run on virtual time: what this checks is the workflow and what is
 * stored, which must not depend on how busy the machine is (on the wall clock a starved main thread
 * let a motor's own watchdog trip mid-session); the station's teleop test covers the wall clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { openStore } from '../../src/store/store.js';
import { recordTeleop } from '../../src/app/teleop-recording.js';
import { readIndexed } from '../helpers/mcap.js';
import { runTandem } from '../helpers/cli.js';

test('three teleop episodes on the emulated cell with three cameras, one discarded and re-recorded, stored and exported to LeRobot', {
  timeout: 600_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-teleop-'));
  const out = join(dir, 'takes');
  const store = openStore(join(dir, 'tandem.sqlite'));
  const keys = new PassThrough();
  const lines: string[] = [];
  let discardSent = false;
  const follower = join(dir, 'cell.json');
  writeFileSync(follower, JSON.stringify({ type: 'yam-cell', transport: 'slcan', gap: 'seed:1', clock: 'virtual' }));
  try {
    const { sessionId, session } = await recordTeleop({
      store,
      outDir: out,
      leader: 'emulated-yam',
      follower,
      cameras: 'cell',
      task: 'bottles-in-the-bin',
      episodes: 3,
      // 1 s takes: the workflow and what is stored are the same at any length, and every take
      // renders three cameras through chromium for its whole length.
      seconds: 1,
      resetSeconds: 0.5,
      rampS: 1,
      keyboard: keys,
      log: (line) => {
        lines.push(line);
        // The operator presses D (discard and re-record) as the second episode's first take starts.
        if (!discardSent && line.startsWith('Episode 2/3')) {
          discardSent = true;
          keys.write('d');
        }
      },
    });
    assert.equal(session.end, 'done', `${session.problem}\n${lines.join('\n')}`);
    assert.equal(session.kept.length, 3);
    assert.equal(session.discarded.length, 1);
    assert.equal(session.discarded[0].episodeIndex, 1);
    assert.ok(
      lines.some((l) => /Discarded the take of episode 2 .*recording it again/.test(l)),
      lines.join('\n'),
    );

    // Three readable episode files in the out folder, the discarded take kept aside.
    const files = readdirSync(out)
      .filter((f) => f.endsWith('.mcap'))
      .sort();
    assert.equal(files.length, 3, files.join(', '));
    assert.equal(readdirSync(join(out, 'discarded')).length, 1);
    for (const [i, f] of files.entries()) {
      const ep = await readIndexed(join(out, f));
      const meta = ep.metadata.get('tandem.episode')!;
      assert.equal(meta.get('kind'), 'teleop');
      assert.equal(meta.get('episode_index'), String(i));
      assert.equal(meta.get('prompt'), 'put all the bottles in the bin');
      const states = ep.byTopic.get('/joint_states') ?? [];
      const commands = ep.byTopic.get('/joint_commands') ?? [];
      assert.ok(states.length > 100, `${f}: ${states.length} joint states`);
      assert.ok(commands.length > 100, `${f}: ${commands.length} commands`);
      // On virtual time no frame is dropped: 1 s at 10 fps is 10 frames of each camera (± the tick at either end).
      for (const cam of ['cam_high', 'cam_left_wrist', 'cam_right_wrist']) {
        const frames = (ep.byTopic.get(`/cameras/${cam}/image/compressed`) ?? []).length;
        assert.ok(frames >= 9 && frames <= 11, `${f}: ${frames} frames of ${cam}`);
      }
      const phases = (ep.byTopic.get('/tandem/events') ?? []).map((m) => m.message.kind);
      assert.ok(phases.includes('phase'));
      // The follower moved with the leader during the take: its joint 1 swept a range.
      const q0 = states.map((m) => (m.message.position as Float64Array | number[])[0]);
      assert.ok(Math.max(...q0) - Math.min(...q0) > 0.02, `${f}: joint 1 range ${Math.max(...q0) - Math.min(...q0)}`);
    }
    const discardedFile = join(out, 'discarded', readdirSync(join(out, 'discarded'))[0]);
    const d = await readIndexed(discardedFile);
    assert.ok(
      (d.byTopic.get('/tandem/events') ?? []).some((m) => /discarded by the operator/i.test(String(m.message.message))),
    );

    // One teleop session in the store, finished, with its takes.
    const s = store.getTeleopSession(sessionId)!;
    assert.equal(s.state, 'finished');
    assert.equal(s.prompt, 'put all the bottles in the bin');
    assert.equal(store.listSessions({ kind: 'teleop-recording' }).length, 1);
    const takes = store.listTeleopTakes(sessionId);
    assert.deepEqual(
      takes.map((t) => [t.episodeIndex, t.state]),
      [
        [0, 'kept'],
        [1, 'discarded'],
        [1, 'kept'],
        [2, 'kept'],
      ],
    );
    assert.equal(takes[1].file, discardedFile);
    for (const t of takes) assert.equal(store.getRecording(t.recordingId)?.state, 'finished');

    // A LeRobot export of the three, through the CLI a user runs.
    const ds = join(dir, 'dataset');
    const r = await runTandem([
      'record',
      'export',
      '--format',
      'lerobot',
      '--codec',
      'h264',
      '--fps',
      '5',
      '--out',
      ds,
      ...files.map((f) => join(out, f)),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const info = JSON.parse(readFileSync(join(ds, 'meta', 'info.json'), 'utf8'));
    assert.equal(info.total_episodes, 3);
    assert.ok(existsSync(join(ds, 'videos')));
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
