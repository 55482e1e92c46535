// The station's own OPC UA server on the network: it binds loopback unless told otherwise (the
// kernel's list of listening sockets says so, not the server), off loopback it refuses to start
// without a user, and with a user it offers no anonymous session and no security None.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import clientPkg from 'node-opcua-client';
import { parseCellIoConfig, CellIoConfigError } from '../../drivers/cell-io/cell-io-config.js';
import { StationStateBoard } from '../../drivers/cell-io/station-state.js';
import { StationOpcuaServer } from '../../drivers/cell-io/station-opcua-server.js';
import { PlcEmulator } from '../../drivers/cell-io/plc-emulator.js';
import { certificateManagerIn } from '../../drivers/cell-io/pki.js';
import { isLoopbackAddress, listeningAddresses } from '../helpers/listening.js';

const { OPCUAClient, MessageSecurityMode, SecurityPolicy, UserTokenType } = clientPkg;

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-opcua-bind-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const portOf = (url: string): number => Number(/:(\d+)(\/|$)/.exec(url.replace('opc.tcp://', ''))?.[1]);

test("without a host the station's OPC UA server listens on loopback only", async () => {
  const station = await StationOpcuaServer.start({ board: new StationStateBoard(), port: 0, pkiDir: join(dir, 'pki') });
  try {
    const addresses = listeningAddresses(portOf(station.endpointUrl));
    assert.ok(addresses.length > 0, `something listens on ${station.endpointUrl}`);
    assert.deepEqual(
      addresses.filter((a) => !isLoopbackAddress(a)),
      [],
      `bound to ${addresses.join(', ')}`,
    );
  } finally {
    await station.stop();
  }
});

test('the PLC emulator listens on loopback only too', async () => {
  const plc = await PlcEmulator.start({ pkiDir: join(dir, 'pki') });
  try {
    const addresses = listeningAddresses(portOf(plc.endpointUrl));
    assert.ok(addresses.length > 0);
    assert.deepEqual(
      addresses.filter((a) => !isLoopbackAddress(a)),
      [],
      `bound to ${addresses.join(', ')}`,
    );
  } finally {
    await plc.stop();
  }
});

test('off loopback the server needs a user: the config says so in one sentence, and the server will not start without one', async () => {
  const base = {
    endpointUrl: 'opc.tcp://127.0.0.1:4840',
    nodes: {
      estopOk: 'ns=1;s=A',
      doorClosed: 'ns=1;s=B',
      lightCurtainClear: 'ns=1;s=C',
      towerRed: 'ns=1;s=D',
      towerAmber: 'ns=1;s=E',
      towerGreen: 'ns=1;s=F',
    },
  };
  assert.throws(
    () => parseCellIoConfig({ ...base, station: { port: 4841, host: '0.0.0.0' } }, 'cell.json', dir),
    (e: unknown) =>
      e instanceof CellIoConfigError &&
      /serves the station's OPC UA server on 0\.0\.0\.0, off this machine, without a user; add "user"/.test(
        e.message,
      ) &&
      e.message.split('. ').length === 1,
  );
  const ok = parseCellIoConfig(
    { ...base, station: { port: 4841, host: '0.0.0.0', user: { name: 'mes', passwordFile: 'mes.pw' } } },
    'cell.json',
    dir,
  );
  assert.deepEqual(ok.station, {
    port: 4841,
    host: '0.0.0.0',
    user: { name: 'mes', passwordFile: join(dir, 'mes.pw') },
  });
  // The server itself refuses too, before it binds anything.
  await assert.rejects(
    StationOpcuaServer.start({ board: new StationStateBoard(), port: 0, host: '0.0.0.0', pkiDir: join(dir, 'pki') }),
    /off this machine, with no user configured/,
  );
});

test('with a user the server offers neither anonymous sessions nor security None, and an anonymous client is turned away', async () => {
  const station = await StationOpcuaServer.start({
    board: new StationStateBoard(),
    port: 0,
    user: { name: 'mes', password: 'correct horse' },
    pkiDir: join(dir, 'pki'),
  });
  const client = OPCUAClient.create({
    endpointMustExist: false,
    securityMode: MessageSecurityMode.None,
    securityPolicy: SecurityPolicy.None,
    clientCertificateManager: certificateManagerIn(join(dir, 'pki'), 'factory-client', true),
    connectionStrategy: { maxRetry: 0 },
  });
  try {
    await client.connect(station.endpointUrl);
    const endpoints = await client.getEndpoints();
    assert.ok(endpoints.length > 0);
    for (const e of endpoints) {
      assert.notEqual(e.securityMode, MessageSecurityMode.None, `endpoint ${e.securityPolicyUri} offers security None`);
      assert.ok(
        !(e.userIdentityTokens ?? []).some((t) => t.tokenType === UserTokenType.Anonymous),
        'an anonymous token is offered',
      );
    }
    await assert.rejects(client.createSession(), 'an anonymous session over security None is refused');
  } finally {
    await client.disconnect();
    await station.stop();
  }
});
