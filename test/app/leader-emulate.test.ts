// Naming the leader: `tandem leader emulate` refuses what it cannot serve in one sentence before
// it makes any pty, and the YAM leader's CAN adapter framing (SLCAN or Damiao USB-CAN) is said the
// same way by `--leader` and the station config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { createLeader } from '../../src/app/leader-registry.js';
import { leaderSpecOf, parseStationConfig } from '../../src/app/station-config.js';
import { UserError } from '../../src/app/command.js';
import { VirtualClock } from '../../src/rig/clocks.js';

test('leader emulate refuses an unknown kind, a link that exists or has no folder, a transport for GELLO, three arms and a bad trajectory — one sentence each, exit 2, no pty made', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-leader-cli-'));
  try {
    const taken = join(dir, 'taken');
    writeFileSync(taken, '');
    const badHand = join(dir, 'hand.json');
    writeFileSync(badHand, '{"points": []}');
    const cases: [string[], string][] = [
      [
        ['--kind', 'spacemouse', '--link', join(dir, 'a')],
        "--kind must be yam (the YAM leader with its teaching handle) or gello (a GELLO on Dynamixel), not 'spacemouse'.",
      ],
      [
        ['--kind', 'yam', '--link', taken],
        `${taken} already exists; another emulator may be running there. Pick another --link or remove it.`,
      ],
      [
        ['--kind', 'gello', '--link', join(dir, 'no-such-folder', 'g')],
        `The folder ${join(dir, 'no-such-folder')} for the pty ${join(dir, 'no-such-folder', 'g')} does not exist; create it or pick another --link.`,
      ],
      [
        ['--kind', 'gello', '--transport', 'damiao', '--link', join(dir, 'b')],
        "--transport is the YAM leader's CAN adapter framing; a GELLO speaks Dynamixel on its own serial line, so leave it out.",
      ],
      [
        ['--kind', 'yam', '--transport', 'usb', '--link', join(dir, 'c')],
        "--transport must be one of slcan, damiao, not 'usb'.",
      ],
      [
        ['--kind', 'yam', '--link', `${join(dir, 'l')},${join(dir, 'r')},${join(dir, 'x')}`],
        '--link takes one pty path per arm, left first (at most two), e.g. /tmp/leader-left,/tmp/leader-right.',
      ],
      [
        ['--kind', 'yam', '--link', join(dir, 'd'), '--trajectory', badHand],
        `${badHand}: The trajectory has no points.`,
      ],
    ];
    const runs = await Promise.all(cases.map(([args]) => runTandem(['leader', 'emulate', ...args])));
    runs.forEach((r, i) => {
      assert.equal(r.code, 2, `${cases[i][0].join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr, `${cases[i][1]}\n`, cases[i][0].join(' '));
    });
    assert.deepEqual(readdirSync(dir).sort(), ['hand.json', 'taken'], 'no pty was made');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the YAM leader takes Damiao USB-CAN as well as SLCAN: yam:damiao:PORT and leader.transport "damiao" name the same leader; GELLO has no transport', () => {
  const clock = new VirtualClock();
  assert.equal(
    createLeader('yam:/dev/ttyACM2,/dev/ttyACM3', clock).leader.description,
    'YAM leader arms with teaching handle on SLCAN adapter on /dev/ttyACM2 and SLCAN adapter on /dev/ttyACM3',
  );
  assert.equal(
    createLeader('yam:damiao:/dev/ttyUSB0', clock).leader.description,
    'YAM leader arm with teaching handle on Damiao USB-CAN adapter on /dev/ttyUSB0',
  );
  assert.equal(
    createLeader('yam:slcan:/dev/ttyACM2', clock).leader.description,
    'YAM leader arm with teaching handle on SLCAN adapter on /dev/ttyACM2',
  );
  assert.throws(
    () => createLeader('gello:damiao:/dev/ttyUSB0', clock),
    (e: Error) =>
      e instanceof UserError &&
      e.message ===
        '--leader gello:damiao:/dev/ttyUSB0: a GELLO speaks Dynamixel on its own serial line, not damiao; write gello:PORT[,PORT].',
  );

  // Every spelling no registered kind takes gets the one sentence that lists them all, and builds nothing.
  const known =
    '--leader must be emulated-yam, emulated-gello, yam:PORT[,PORT] (yam:damiao:PORT[,PORT] for Damiao USB-CAN adapters) or gello:PORT[,PORT] (one port per arm, left first)';
  for (const spec of ['spacemouse', 'yam', 'yam:', 'gello', 'emulated-yam:/dev/ttyACM0', 'emulated', '']) {
    assert.throws(
      () => createLeader(spec, clock),
      (e: Error) => e instanceof UserError && e.message === `${known}, not '${spec}'.`,
      spec,
    );
  }
  assert.throws(
    () => createLeader('yam:/dev/a,/dev/b,/dev/c', clock),
    (e: Error) =>
      e instanceof UserError &&
      e.message ===
        '--leader yam:/dev/a,/dev/b,/dev/c: give one serial port per arm, left first (at most two), e.g. yam:/dev/ttyACM1,/dev/ttyACM2.',
  );
  assert.ok(createLeader('emulated-gello', clock).emulated, 'an emulated leader comes with its emulator');
  assert.equal(createLeader('gello:/dev/ttyUSB0', clock).emulated, undefined, 'a hardware leader has none');

  const rig = { type: 'yam-can', transport: 'damiao', ports: { left: '/dev/ttyUSB0' } };
  const station = parseStationConfig(
    { version: 1, rig, leader: { kind: 'yam', transport: 'damiao', ports: ['/dev/ttyUSB2', '/dev/ttyUSB3'] } },
    'station.json',
    '/lab',
  );
  assert.equal(leaderSpecOf(station.leader!), 'yam:damiao:/dev/ttyUSB2,/dev/ttyUSB3');
  assert.equal(
    leaderSpecOf(
      parseStationConfig({ version: 1, rig, leader: { kind: 'yam', ports: ['/dev/ttyACM2'] } }, 'station.json', '/lab')
        .leader!,
    ),
    'yam:/dev/ttyACM2',
  );
  const bad: [unknown, string][] = [
    [
      { kind: 'gello', transport: 'slcan', ports: ['/dev/ttyUSB0'] },
      "The station config station.json gives a transport to the gello leader; leader.transport is the YAM leader's CAN adapter framing (slcan or damiao), so remove it.",
    ],
    [
      { kind: 'yam', transport: 'can', ports: ['/dev/ttyUSB0'] },
      'The station config station.json has leader.transport "can"; use slcan (CANable) or damiao (Damiao USB-CAN).',
    ],
  ];
  for (const [leader, sentence] of bad) {
    assert.throws(
      () => parseStationConfig({ version: 1, rig, leader }, 'station.json', '/lab'),
      (e: Error) => e instanceof UserError && e.message === sentence,
      JSON.stringify(leader),
    );
  }
});
