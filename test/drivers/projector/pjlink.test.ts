import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, Socket } from 'node:net';
import {
  PjlinkClient,
  PjlinkError,
  parsePjlinkAddress,
  type PjlinkFailure,
} from '../../../drivers/projector/pjlink-client.js';
import { PjlinkEmulator, type PjlinkEmulatorOptions } from '../../../drivers/projector/pjlink-emulator.js';
import { pjlinkDigest } from '../../../drivers/projector/pjlink-protocol.js';

async function withProjector(
  opts: PjlinkEmulatorOptions,
  fn: (emu: PjlinkEmulator, port: number) => Promise<void>,
): Promise<void> {
  const emu = new PjlinkEmulator(opts);
  const port = await emu.start();
  try {
    await fn(emu, port);
  } finally {
    await emu.close();
  }
}

async function failsWith(p: Promise<unknown>, failure: PjlinkFailure, pattern: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof PjlinkError, `not a PjlinkError: ${String(e)}`);
    assert.equal(e.failure, failure, e.message);
    assert.match(e.message, pattern);
    assert.ok(!e.message.includes('\n'));
    return true;
  });
}

/** Reads what the emulator says on a raw socket, CR-terminated lines. */
function rawExchange(port: number, send: (greeting: string) => string | undefined): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const s = new Socket();
    const lines: string[] = [];
    let buf = '';
    s.setEncoding('latin1');
    s.on('data', (d: string) => {
      buf += d;
      let i: number;
      while ((i = buf.indexOf('\r')) >= 0) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (lines.length === 1) {
          const out = send(lines[0]);
          if (out) s.write(out, 'latin1');
          else s.end();
        } else s.end();
      }
    });
    s.on('close', () => resolve(lines));
    s.on('error', reject);
    s.connect(port, '127.0.0.1');
  });
}

test('the emulator speaks PJLink bytes: greeting with an 8-character random, MD5(random + password) before the first command', async () => {
  await withProjector({ password: 'JBMIAProjectorLink', poweredOn: true }, async (_emu, port) => {
    const lines = await rawExchange(port, (greeting) => {
      const m = /^PJLINK 1 ([0-9a-f]{8})$/.exec(greeting);
      assert.ok(m, greeting);
      return `${pjlinkDigest(m[1], 'JBMIAProjectorLink')}%1POWR ?\r`;
    });
    assert.deepEqual(lines.slice(1), ['%1POWR=1']);
  });
  // The digest is MD5 over the ASCII of random + password, lowercase hex (the standard's own example).
  assert.equal(pjlinkDigest('498e4a67', 'JBMIAProjectorLink'), '5d8409bc1c3fa39749434aa3a5c38682');
});

test('power on: standby → warming up (AV mute refused with ERR3 meanwhile) → on, then mute and unmute', async () => {
  await withProjector({ warmUpMs: 400 }, async (emu, port) => {
    const pj = new PjlinkClient({ host: '127.0.0.1', port, timeoutMs: 2000 });
    assert.equal(await pj.powerState(), 'standby');
    await pj.powerOn();
    assert.equal(await pj.powerState(), 'warming-up');
    await failsWith(
      pj.setAvMute(true),
      'unavailable',
      /cannot do 'AVMT 31' right now \(ERR3: unavailable time — it is warming up, cooling down or in standby\); wait until it is on/,
    );
    await pj.powerOnAndWait({ timeoutMs: 5000, pollMs: 50 });
    assert.equal(await pj.powerState(), 'on');
    await pj.setAvMute(true);
    assert.equal(emu.state().avMuted, true);
    assert.equal(await pj.avMuted(), true);
    await pj.setAvMute(false);
    assert.equal(emu.state().avMuted, false);
    assert.equal(await pj.avMuted(), false);
    assert.deepEqual(await pj.errorStatus(), {
      fan: 'ok',
      lamp: 'ok',
      temperature: 'ok',
      cover: 'ok',
      filter: 'ok',
      other: 'ok',
    });
    assert.equal(await pj.input(), '31');
    await failsWith(pj.setInput('52'), 'out-of-parameter', /refused the parameter of 'INPT 52' \(ERR2\)/);
  });
});

test('with the right password every command is authenticated; a wrong one is refused in a sentence naming the setting', async () => {
  await withProjector({ password: 'secret', poweredOn: true }, async (emu, port) => {
    await new PjlinkClient({ host: '127.0.0.1', port, password: 'secret' }).setAvMute(true);
    assert.equal(emu.state().avMuted, true);
    await failsWith(
      new PjlinkClient({ host: '127.0.0.1', port, password: 'wrong' }).setAvMute(false),
      'auth-refused',
      /refused the PJLink password; set TANDEM_PJLINK_PASSWORD/,
    );
    assert.equal(emu.state().avMuted, true, 'a refused command changed nothing');
    await failsWith(
      new PjlinkClient({ host: '127.0.0.1', port }).powerState(),
      'password-needed',
      /asks for a PJLink password and none is set/,
    );
  });
});

test('a projector that accepts the connection and never answers times out with a sentence naming the stage it stuck at', async () => {
  await withProjector({}, async (emu, port) => {
    emu.setFault('silent');
    await failsWith(
      new PjlinkClient({ host: '127.0.0.1', port, timeoutMs: 300 }).powerState(),
      'timeout',
      /at 127\.0\.0\.1:\d+ accepted the connection but sent no PJLink greeting within 300 ms/,
    );
  });
});

test('a projector that is not there is unreachable; one that hangs up mid-command says so', async () => {
  // A port that was just free: nothing listens on it.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  await failsWith(
    new PjlinkClient({ host: '127.0.0.1', port, timeoutMs: 2000 }).powerState(),
    'unreachable',
    /cannot be reached \(ECONNREFUSED\); check that it is on the network/,
  );
  await withProjector({}, async (emu, p) => {
    emu.setFault('hang-up');
    await failsWith(
      new PjlinkClient({ host: '127.0.0.1', port: p }).powerOn(),
      'protocol',
      /closed the connection before answering 'POWR 1'/,
    );
  });
});

test('a lamp failure: power on answers ERR4 and the error status names the lamp', async () => {
  await withProjector({}, async (emu, port) => {
    emu.setFault('lamp-failure');
    const pj = new PjlinkClient({ host: '127.0.0.1', port });
    await failsWith(
      pj.powerOn(),
      'projector-failure',
      /reports a projector failure \(ERR4\) on 'POWR 1'; check its lamp/,
    );
    assert.equal((await pj.errorStatus()).lamp, 'error');
  });
});

test('projector addresses: HOST, HOST:PORT, [IPv6]:PORT; anything else is refused', () => {
  assert.deepEqual(parsePjlinkAddress('10.0.0.5'), { host: '10.0.0.5', port: 4352 });
  assert.deepEqual(parsePjlinkAddress('proj.local:14352'), { host: 'proj.local', port: 14352 });
  assert.deepEqual(parsePjlinkAddress('[::1]:4352'), { host: '::1', port: 4352 });
  assert.throws(() => parsePjlinkAddress('a:b:c'), /is not a projector address/);
  assert.throws(() => parsePjlinkAddress('host:99999'), /is not a projector address/);
});
