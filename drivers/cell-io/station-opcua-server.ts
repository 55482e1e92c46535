/**
 * The station's own OPC UA server, for the factory side (an MES, a line PLC, a SCADA panel):
 * read-only variables under Objects/Station in the server's own namespace (ns=1) — SessionId,
 * RolloutPhase, RigStatus, Faults (String[]), FaultCount — kept equal to a StationStateBoard.
 * Nothing here can command the station: every variable is CurrentRead only.
 *
 * It binds 127.0.0.1 unless a host is given. Off loopback a user is required, and with one it lets in
 * only that user, over Sign or SignAndEncrypt: no anonymous session and no security None, since the state of the cell
 * would otherwise be readable (and its ten sessions taken) by anything on the network.
 */
import './opcua-logs.js';
import serverPkg from 'node-opcua-server';
import clientPkg from 'node-opcua-client';
import { timingSafeEqual } from 'node:crypto';
import { certificateManagerIn } from './pki.js';
import { isLoopbackHost } from './cell-io-config.js';
import type { StationState, StationStateBoard } from './station-state.js';

const { OPCUAServer } = serverPkg;
const { DataType, VariantArrayType, MessageSecurityMode, SecurityPolicy } = clientPkg;
type OPCUAServerInstance = InstanceType<typeof OPCUAServer>;
type UAVariable = ReturnType<
  ReturnType<NonNullable<OPCUAServerInstance['engine']['addressSpace']>['getOwnNamespace']>['addVariable']
>;

export const STATION_NODE_IDS = {
  sessionId: 'ns=1;s=Station.SessionId',
  rolloutPhase: 'ns=1;s=Station.RolloutPhase',
  rigStatus: 'ns=1;s=Station.RigStatus',
  faults: 'ns=1;s=Station.Faults',
  faultCount: 'ns=1;s=Station.FaultCount',
} as const;

export interface StationOpcuaServerOptions {
  readonly board: StationStateBoard;
  /** TCP port; 0 picks a free one. */
  readonly port: number;
  /** The address it binds (and advertises); default 127.0.0.1. */
  readonly host?: string;
  /** The one user let in; required off loopback. */
  readonly user?: { readonly name: string; readonly password: string };
  readonly pkiDir: string;
}

function samePassword(given: string, password: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(password);
  return a.length === b.length && timingSafeEqual(a, b);
}

export class StationOpcuaServer {
  private readonly vars = new Map<keyof typeof STATION_NODE_IDS, UAVariable>();
  private unsubscribe: (() => void) | undefined;

  private constructor(private readonly server: OPCUAServerInstance) {}

  static async start(opts: StationOpcuaServerOptions): Promise<StationOpcuaServer> {
    const host = opts.host ?? '127.0.0.1';
    const loopback = isLoopbackHost(host);
    if (!loopback && !opts.user)
      throw new Error(
        `it would listen on ${host}, off this machine, with no user configured; anonymous sessions are refused off loopback`,
      );
    const user = opts.user;
    const server = new OPCUAServer({
      port: opts.port,
      // node-opcua binds `host` (and only advertises `hostname`): without it, every interface.
      host,
      hostname: host,
      serverCertificateManager: certificateManagerIn(opts.pkiDir, 'station-server', false),
      userCertificateManager: certificateManagerIn(opts.pkiDir, 'station-server-users', false),
      buildInfo: { productName: 'tandem station', manufacturerName: 'tandem' },
      // With a user (required off loopback): that user only, signed or encrypted.
      allowAnonymous: !user,
      ...(!user
        ? {}
        : {
            securityModes: [MessageSecurityMode.Sign, MessageSecurityMode.SignAndEncrypt],
            securityPolicies: [
              SecurityPolicy.Basic256Sha256,
              SecurityPolicy.Aes128_Sha256_RsaOaep,
              SecurityPolicy.Aes256_Sha256_RsaPss,
            ],
          }),
      ...(user
        ? {
            userManager: {
              isValidUser: (name: string, password: string) =>
                name === user.name && samePassword(password, user.password),
            },
          }
        : {}),
    });
    await server.initialize();
    const s = new StationOpcuaServer(server);
    s.build();
    s.show(opts.board.state);
    s.unsubscribe = opts.board.onChange((state) => s.show(state));
    await server.start();
    return s;
  }

  private build(): void {
    const addressSpace = this.server.engine.addressSpace!;
    const ns = addressSpace.getOwnNamespace();
    const station = ns.addObject({ organizedBy: addressSpace.rootFolder.objects, browseName: 'Station' });
    const add = (
      key: keyof typeof STATION_NODE_IDS,
      browseName: string,
      dataType: 'String' | 'UInt32',
      valueRank = -1,
    ): void => {
      this.vars.set(
        key,
        ns.addVariable({
          componentOf: station,
          nodeId: STATION_NODE_IDS[key].replace('ns=1;', ''),
          browseName,
          dataType,
          valueRank,
          ...(valueRank === 1 ? { arrayDimensions: [0] } : {}),
          minimumSamplingInterval: 0,
          accessLevel: 'CurrentRead',
          userAccessLevel: 'CurrentRead',
        }),
      );
    };
    add('sessionId', 'SessionId', 'String');
    add('rolloutPhase', 'RolloutPhase', 'String');
    add('rigStatus', 'RigStatus', 'String');
    add('faults', 'Faults', 'String', 1);
    add('faultCount', 'FaultCount', 'UInt32');
  }

  private show(state: StationState): void {
    const str = (key: keyof typeof STATION_NODE_IDS, value: string): void =>
      this.vars.get(key)!.setValueFromSource({ dataType: DataType.String, value });
    str('sessionId', state.sessionId);
    str('rolloutPhase', state.rolloutPhase);
    str('rigStatus', state.rigStatus);
    this.vars
      .get('faults')!
      .setValueFromSource({ dataType: DataType.String, arrayType: VariantArrayType.Array, value: [...state.faults] });
    this.vars.get('faultCount')!.setValueFromSource({ dataType: DataType.UInt32, value: state.faults.length });
  }

  get endpointUrl(): string {
    return this.server.getEndpointUrl();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.server.shutdown(0);
  }
}
