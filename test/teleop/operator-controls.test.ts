import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { OperatorControls, inputEvent, keysToActions } from '../../src/teleop/operator-controls.js';

test('terminal keys map to actions, escape sequences included (arrows, PageUp/Down, a lone Esc)', () => {
  assert.deepEqual(keysToActions(Buffer.from(' \rnd\x7feq')), [
    'next',
    'next',
    'next',
    'discard',
    'discard',
    'sync',
    'quit',
  ]);
  assert.deepEqual(keysToActions(Buffer.from('\x1b[C\x1b[D\x1b[6~\x1b[5~\x1b')), [
    'next',
    'discard',
    'next',
    'discard',
    'quit',
  ]);
  assert.deepEqual(keysToActions(Buffer.from('\x03')), ['quit']);
  assert.deepEqual(keysToActions(Buffer.from('xyz')), []);
});

test('a byte stream (stdin over SSH, a pipe) feeds the controls; a TTY is put in raw mode and restored', async () => {
  const c = new OperatorControls();
  const keys = Object.assign(new PassThrough(), {
    isTTY: true,
    raw: [] as boolean[],
    setRawMode(r: boolean) {
      this.raw.push(r);
    },
  });
  assert.ok(c.attachKeyboard(keys));
  keys.write('d');
  assert.deepEqual(await c.next(1000), { action: 'discard', from: 'keyboard' });
  c.close();
  assert.deepEqual(keys.raw, [true, false]);
});

test('the controls know when nobody can answer: stdin at its end with no pedal, handle or station page', async () => {
  const c = new OperatorControls();
  assert.equal(c.attended, false, 'nothing attached');
  const keys = new PassThrough();
  c.attachKeyboard(keys);
  assert.equal(c.attended, true);
  const waiting = c.next(60_000);
  keys.end();
  assert.equal(await waiting, undefined, 'the end of the input wakes a waiting session');
  assert.equal(c.attended, false);
  c.attend('the station UI');
  assert.equal(c.attended, true);
  c.close();
});

test('a foot pedal read from its evdev node: presses count, releases and auto-repeat do not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pedal-'));
  try {
    const node = join(dir, 'event0');
    const EV_KEY = 1;
    const EV_SYN = 0;
    writeFileSync(
      node,
      Buffer.concat([
        inputEvent(EV_KEY, 48, 1),
        inputEvent(EV_SYN, 0, 0),
        inputEvent(EV_KEY, 48, 2),
        inputEvent(EV_KEY, 48, 0), // B pressed, repeat, released
        inputEvent(EV_KEY, 30, 1),
        inputEvent(EV_KEY, 30, 0), // A
        inputEvent(EV_KEY, 46, 1), // C
      ]),
    );
    const c = new OperatorControls();
    c.attachPedal(node, (s) => assert.fail(s));
    const got = [];
    for (let i = 0; i < 3; i++) got.push((await c.next(2000))?.action);
    assert.deepEqual(got, ['next', 'discard', 'sync']);
    assert.equal(await c.next(100), undefined);
    c.close();
    const problems: string[] = [];
    const d = new OperatorControls();
    d.attachPedal(join(dir, 'missing'), (s) => problems.push(s));
    await new Promise((r) => setTimeout(r, 100));
    assert.match(problems[0] ?? '', /^The pedal at .*missing cannot be read \(.*\); check that it is plugged in/);
    d.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the handle buttons: top toggles sync, second is next, second held 0.8 s is discard', async () => {
  const c = new OperatorControls();
  c.leaderEvents([
    { kind: 'button', arm: 'left', button: 0, pressed: true, timeS: 1 },
    { kind: 'button', arm: 'left', button: 0, pressed: false, timeS: 1.1 },
    { kind: 'button', arm: 'left', button: 1, pressed: true, timeS: 2 },
    { kind: 'button', arm: 'left', button: 1, pressed: false, timeS: 2.2 },
    { kind: 'button', arm: 'right', button: 1, pressed: true, timeS: 3 },
    { kind: 'button', arm: 'right', button: 1, pressed: false, timeS: 3.9 },
  ]);
  assert.deepEqual(
    [c.take()?.action, c.take()?.action, c.take()?.action, c.take()],
    ['sync', 'next', 'discard', undefined],
  );
});
