// The cell I/O driver against a real node-opcua server as the PLC (one for the whole file: a
// node-opcua server takes seconds to start on a busy machine), and the station's own server read
// by an independent node-opcua client.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import clientPkg from 'node-opcua-client';
import { PlcEmulator } from '../../drivers/cell-io/plc-emulator.js';
import { CellPlcClient } from '../../drivers/cell-io/plc-client.js';
import { CellIoConfigError, parseCellIoConfig, type CellIoConfig } from '../../drivers/cell-io/cell-io-config.js';
import { StationStateBoard } from '../../drivers/cell-io/station-state.js';
import { StationOpcuaServer, STATION_NODE_IDS } from '../../drivers/cell-io/station-opcua-server.js';
import { TowerLightDriver } from '../../drivers/cell-io/tower-light-driver.js';
import { certificateManagerIn } from '../../drivers/cell-io/pki.js';
import { until } from '../helpers/until.js';

const { OPCUAClient, AttributeIds, DataType, MessageSecurityMode, SecurityPolicy } = clientPkg;

let dir: string;
let plc: PlcEmulator;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-cell-io-'));
  plc = await PlcEmulator.start({ pkiDir: join(dir, 'pki'), heartbeatMs: 50 });
});

after(async () => {
  await plc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function config(extra: Record<string, unknown> = {}): CellIoConfig {
  return parseCellIoConfig({ ...plc.config(), staleAfterMs: 400, ...extra }, 'test.json', dir);
}

async function connect(extra: Record<string, unknown> = {}): Promise<CellPlcClient> {
  return CellPlcClient.connect({ config: config(extra), pkiDir: join(dir, 'pki'), connectTimeoutMs: 20_000 });
}

const WAIT_MS = 10_000;

test('config: a PLC on the network without security, a mode without its policy, a missing node id — each one sentence', () => {
  const good = plc.config();
  assert.throws(
    () => parseCellIoConfig({ ...good, endpointUrl: 'opc.tcp://192.168.0.10:4840' }, 'cell.json'),
    (e: unknown) => e instanceof CellIoConfigError && /without security \(mode None\).*SignAndEncrypt/.test(e.message),
  );
  assert.throws(
    () => parseCellIoConfig({ ...good, security: { mode: 'SignAndEncrypt', policy: 'None' } }, 'cell.json'),
    /mode None goes with policy None only/,
  );
  const nodes = { ...(good.nodes as Record<string, string>) };
  delete nodes.doorClosed;
  assert.throws(
    () => parseCellIoConfig({ ...good, nodes }, 'cell.json'),
    /needs nodes\.doorClosed as an OPC UA node id/,
  );
  // A real PLC: SignAndEncrypt with the station's own certificate, and no blind trust of the PLC's.
  const real = parseCellIoConfig(
    {
      ...good,
      endpointUrl: 'opc.tcp://192.168.0.10:4840',
      security: {
        mode: 'SignAndEncrypt',
        policy: 'Basic256Sha256',
        certificateFile: 'station.pem',
        privateKeyFile: 'station.key',
      },
    },
    'cell.json',
    '/etc/tandem',
  );
  assert.deepEqual(real.security, {
    mode: 'SignAndEncrypt',
    policy: 'Basic256Sha256',
    certificateFile: '/etc/tandem/station.pem',
    privateKeyFile: '/etc/tandem/station.key',
    trustUnknownServerCertificate: false,
  });
});

test('the client subscribes to the interlocks: each input opening is open with its sentence, closing again is closed', async () => {
  const c = await connect();
  try {
    assert.deepEqual(c.current(), { open: false });
    const granted = c.granted();
    assert.ok(
      granted.keepAliveMs > 0 && granted.keepAliveMs <= 200,
      `keep-alive ${granted.keepAliveMs} ms within half the 400 ms staleness`,
    );
    const cases = [
      ['doorClosed', /^The cell door is open\.$/],
      ['lightCurtainClear', /^The light curtain is broken/],
      ['estopOk', /^The cell's e-stop is pressed/],
    ] as const;
    for (const [input, sentence] of cases) {
      plc.setInput(input, false);
      await until(() => c.current().open, WAIT_MS);
      assert.match(c.current().reason ?? '', sentence);
      assert.equal(c.inputsNow()[input].value, false);
      plc.setInput(input, true);
      await until(() => !c.current().open, WAIT_MS);
    }
    // A bad status on an input is open too, whatever its value says.
    plc.setInputBad('doorClosed');
    await until(() => c.current().open, WAIT_MS);
    assert.match(
      c.current().reason ?? '',
      /reports the cell door as BadDeviceFailure, so the station treats it as open/,
    );
    plc.setInput('doorClosed', true);
    await until(() => !c.current().open, WAIT_MS);
  } finally {
    await c.close();
  }
});

test('a frozen heartbeat (the PLC program stalled) is open; a dropped connection is open with "stopped answering"; both close again when the PLC is back', async () => {
  const c = await connect();
  try {
    assert.equal(c.current().open, false);
    plc.stall();
    await until(() => c.current().open, WAIT_MS);
    assert.match(
      c.current().reason ?? '',
      /^The cell PLC at opc\.tcp:\/\/127\.0\.0\.1:\d+.* answers, but its heartbeat has not changed for \d+\.\d s \(its program may have stopped\); the arms are held until it runs again\.$/,
    );
    plc.resume();
    await until(() => !c.current().open, WAIT_MS);

    await plc.drop();
    await until(() => c.current().open, WAIT_MS);
    assert.match(
      c.current().reason ?? '',
      /^The cell PLC at opc\.tcp:\/\/127\.0\.0\.1:\d+\S* stopped answering \d+\.\d s ago; the arms are held until it is back\.$/,
    );
    // Nothing counts from before the drop: every input must be reported afresh.
    assert.deepEqual(
      Object.values(c.inputsNow()).map((i) => i.value),
      [null, null, null],
    );
    await plc.restore();
    await until(() => !c.current().open, 30_000);
  } finally {
    await plc.restore();
    await c.close();
  }
});

test('the tower light follows the station state: green idle, amber running, red on a safety stop', async () => {
  const c = await connect();
  const board = new StationStateBoard();
  const driver = new TowerLightDriver(c, board);
  try {
    await driver.settled();
    assert.deepEqual(plc.towerLight(), { towerRed: false, towerAmber: false, towerGreen: true });
    board.update({ rolloutPhase: 'running', rigStatus: 'active' });
    await driver.settled();
    assert.deepEqual(plc.towerLight(), { towerRed: false, towerAmber: true, towerGreen: false });
    board.update({ rigStatus: 'estopped', faults: ['The cell door is open.'] });
    await driver.settled();
    assert.deepEqual(plc.towerLight(), { towerRed: true, towerAmber: false, towerGreen: false });
    board.update({ rolloutPhase: 'idle', rigStatus: 'damped', faults: [] });
    await driver.settled();
    assert.deepEqual(plc.towerLight(), { towerRed: false, towerAmber: false, towerGreen: true });
  } finally {
    driver.close();
    await c.close();
  }
});

test('the client connects with SignAndEncrypt (Basic256Sha256) and its own certificate', async () => {
  const c = await connect({ security: { mode: 'SignAndEncrypt', policy: 'Basic256Sha256' } });
  try {
    assert.deepEqual(c.current(), { open: false });
    plc.setInput('doorClosed', false);
    await until(() => c.current().open, WAIT_MS);
    plc.setInput('doorClosed', true);
    await until(() => !c.current().open, WAIT_MS);
  } finally {
    await c.close();
  }
});

test("the station's own server: an independent OPC UA client reads session, phase, rig status and faults, and cannot write them", async () => {
  const board = new StationStateBoard({ sessionId: 'S-7', rolloutPhase: 'placing', rigStatus: 'holding', faults: [] });
  const station = await StationOpcuaServer.start({ board, port: 0, pkiDir: join(dir, 'pki') });
  const client = OPCUAClient.create({
    endpointMustExist: false,
    securityMode: MessageSecurityMode.None,
    securityPolicy: SecurityPolicy.None,
    clientCertificateManager: certificateManagerIn(join(dir, 'pki'), 'factory-client', true),
    connectionStrategy: { maxRetry: 3 },
  });
  try {
    await client.connect(station.endpointUrl);
    const session = await client.createSession();
    const read = async (): Promise<unknown[]> =>
      (
        await session.read(
          Object.values(STATION_NODE_IDS).map((nodeId) => ({ nodeId, attributeId: AttributeIds.Value })),
        )
      ).map((dv) => (dv.value.value instanceof Array ? [...(dv.value.value as string[])] : dv.value.value));
    assert.deepEqual(await read(), ['S-7', 'placing', 'holding', [], 0]);
    board.update({
      rolloutPhase: 'running',
      rigStatus: 'estopped',
      faults: ['The cell door is open. Arms stopped at their pose, then damped.'],
    });
    assert.deepEqual(await read(), [
      'S-7',
      'running',
      'estopped',
      ['The cell door is open. Arms stopped at their pose, then damped.'],
      1,
    ]);
    const [status] = await session.write([
      {
        nodeId: STATION_NODE_IDS.rolloutPhase,
        attributeId: AttributeIds.Value,
        value: { value: { dataType: DataType.String, value: 'idle' } },
      },
    ]);
    assert.equal(status.isGood(), false, 'the factory side cannot command the station');
    assert.deepEqual((await read())[1], 'running');
    await session.close();
  } finally {
    await client.disconnect();
    await station.stop();
  }
});
