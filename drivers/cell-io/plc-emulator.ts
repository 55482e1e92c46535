/**
 * A stand-in for the cell PLC: a real node-opcua server with the nodes a cell PLC program
 * exposes — the three interlock inputs, a heartbeat counter, the tower light outputs — so the
 * station's client is tested over real OPC UA, and the emulated cell has I/O to talk to.
 *
 * On cue it opens an interlock, goes wrong the ways a PLC does (a bad status on an input, its
 * program stalls so the heartbeat freezes, the network drops), and comes back.
 */
import './opcua-logs.js';
import serverPkg from 'node-opcua-server';
import clientPkg from 'node-opcua-client';
import { certificateManagerIn } from './pki.js';
import {
  INTERLOCK_INPUTS,
  TOWER_OUTPUTS,
  type CellIoConfig,
  type InterlockInput,
  type TowerOutput,
} from './cell-io-config.js';

const { OPCUAServer } = serverPkg;
const { DataType, StatusCodes } = clientPkg;
type OPCUAServerInstance = InstanceType<typeof OPCUAServer>;
type UAVariable = ReturnType<
  ReturnType<NonNullable<OPCUAServerInstance['engine']['addressSpace']>['getOwnNamespace']>['addVariable']
>;

export interface PlcEmulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Where the server keeps its certificate (and the clients it has seen). */
  readonly pkiDir: string;
  /** Heartbeat counter period, ms; default 100. 0: no heartbeat node advances. */
  readonly heartbeatMs?: number;
}

/** Node ids as the emulator's PLC program names them (namespace 1, the server's own). */
export const EMULATOR_NODE_NAMES: Readonly<Record<InterlockInput | TowerOutput | 'heartbeat', string>> = {
  estopOk: 'Cell.EStopOk',
  doorClosed: 'Cell.DoorClosed',
  lightCurtainClear: 'Cell.LightCurtainClear',
  heartbeat: 'Cell.Heartbeat',
  towerRed: 'Cell.TowerLight.Red',
  towerAmber: 'Cell.TowerLight.Amber',
  towerGreen: 'Cell.TowerLight.Green',
};

export class PlcEmulator {
  private readonly inputs = new Map<InterlockInput, UAVariable>();
  private readonly outputs = new Map<TowerOutput, UAVariable>();
  private heartbeatNode: UAVariable | undefined;
  private heartbeat = 0;
  private timer: NodeJS.Timeout | undefined;
  private stalled = false;
  private dropped = false;
  private readonly towerChanges: { output: TowerOutput; on: boolean }[] = [];

  private constructor(
    private readonly server: OPCUAServerInstance,
    private readonly heartbeatMs: number,
  ) {}

  static async start(opts: PlcEmulatorOptions): Promise<PlcEmulator> {
    const server = new OPCUAServer({
      port: opts.port ?? 0,
      // The endpoint the station is pointed at: loopback, not whatever this machine is called. node-opcua
      // binds `host` (and only advertises `hostname`): without it, every interface.
      host: '127.0.0.1',
      hostname: '127.0.0.1',
      serverCertificateManager: certificateManagerIn(opts.pkiDir, 'plc-emulator', true),
      userCertificateManager: certificateManagerIn(opts.pkiDir, 'plc-emulator-users', true),
      buildInfo: { productName: 'tandem cell PLC emulator', manufacturerName: 'tandem' },
      allowAnonymous: true,
    });
    await server.initialize();
    const emu = new PlcEmulator(server, opts.heartbeatMs ?? 100);
    emu.build();
    await server.start();
    emu.startHeartbeat();
    return emu;
  }

  private build(): void {
    const addressSpace = this.server.engine.addressSpace!;
    const ns = addressSpace.getOwnNamespace();
    const cell = ns.addObject({ organizedBy: addressSpace.rootFolder.objects, browseName: 'Cell' });
    const tower = ns.addObject({ componentOf: cell, browseName: 'TowerLight' });
    for (const input of INTERLOCK_INPUTS) {
      const name = EMULATOR_NODE_NAMES[input];
      // minimumSamplingInterval 0: every change is reported (exception-based), as a PLC's
      // change-driven inputs are.
      this.inputs.set(
        input,
        ns.addVariable({
          componentOf: cell,
          nodeId: `s=${name}`,
          browseName: name.split('.').pop()!,
          dataType: 'Boolean',
          minimumSamplingInterval: 0,
          accessLevel: 'CurrentRead',
          userAccessLevel: 'CurrentRead',
          value: { dataType: DataType.Boolean, value: true },
        }),
      );
    }
    this.heartbeatNode = ns.addVariable({
      componentOf: cell,
      nodeId: `s=${EMULATOR_NODE_NAMES.heartbeat}`,
      browseName: 'Heartbeat',
      dataType: 'UInt32',
      minimumSamplingInterval: 0,
      accessLevel: 'CurrentRead',
      userAccessLevel: 'CurrentRead',
      value: { dataType: DataType.UInt32, value: 0 },
    });
    for (const output of TOWER_OUTPUTS) {
      const name = EMULATOR_NODE_NAMES[output];
      const node = ns.addVariable({
        componentOf: tower,
        nodeId: `s=${name}`,
        browseName: name.split('.').pop()!,
        dataType: 'Boolean',
        minimumSamplingInterval: 0,
        accessLevel: 'CurrentRead | CurrentWrite',
        userAccessLevel: 'CurrentRead | CurrentWrite',
        value: { dataType: DataType.Boolean, value: false },
      });
      node.on('value_changed', (dv) => this.towerChanges.push({ output, on: dv.value.value === true }));
      this.outputs.set(output, node);
    }
  }

  private startHeartbeat(): void {
    if (this.heartbeatMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.stalled) return;
      this.heartbeat = (this.heartbeat + 1) >>> 0;
      this.heartbeatNode!.setValueFromSource({ dataType: DataType.UInt32, value: this.heartbeat });
    }, this.heartbeatMs);
    this.timer.unref();
  }

  /** opc.tcp://127.0.0.1:PORT/… */
  get endpointUrl(): string {
    return this.server.getEndpointUrl();
  }

  get port(): number {
    return this.server.endpoints[0].port;
  }

  /** A cell I/O config pointing at this emulator (security None: it listens on loopback). */
  config(extra: Partial<CellIoConfig> = {}): Record<string, unknown> {
    const id = (k: keyof typeof EMULATOR_NODE_NAMES): string => `ns=1;s=${EMULATOR_NODE_NAMES[k]}`;
    return {
      endpointUrl: this.endpointUrl,
      security: { mode: 'None', policy: 'None' },
      nodes: {
        estopOk: id('estopOk'),
        doorClosed: id('doorClosed'),
        lightCurtainClear: id('lightCurtainClear'),
        heartbeat: id('heartbeat'),
        towerRed: id('towerRed'),
        towerAmber: id('towerAmber'),
        towerGreen: id('towerGreen'),
      },
      ...extra,
    };
  }

  /** Sets an input: true = safe (closed), false = open. */
  setInput(input: InterlockInput, safe: boolean): void {
    this.inputs.get(input)!.setValueFromSource({ dataType: DataType.Boolean, value: safe }, StatusCodes.Good);
  }

  /** The input's value goes bad (a wire break the PLC diagnoses, a module fault). */
  setInputBad(input: InterlockInput): void {
    this.inputs
      .get(input)!
      .setValueFromSource({ dataType: DataType.Boolean, value: true }, StatusCodes.BadDeviceFailure);
  }

  input(input: InterlockInput): boolean {
    return this.inputs.get(input)!.readValue().value.value === true;
  }

  /** What the station last wrote to each tower light output. */
  towerLight(): Record<TowerOutput, boolean> {
    const out = {} as Record<TowerOutput, boolean>;
    for (const o of TOWER_OUTPUTS) out[o] = this.outputs.get(o)!.readValue().value.value === true;
    return out;
  }

  /** Every tower light output change, in order (drained). */
  takeTowerChanges(): { output: TowerOutput; on: boolean }[] {
    return this.towerChanges.splice(0);
  }

  /** The PLC program stops: the heartbeat freezes while the server still answers. */
  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
  }

  /** The network goes: every client connection is cut and new ones are refused until restore(). */
  async drop(): Promise<void> {
    if (this.dropped) return;
    this.dropped = true;
    for (const ep of this.server.endpoints) {
      await new Promise<void>((res) => ep.suspendConnection(() => res()));
      ep.abruptlyInterruptChannels();
      await new Promise<void>((res) => ep.killClientSockets(() => res()));
    }
  }

  async restore(): Promise<void> {
    if (!this.dropped) return;
    this.dropped = false;
    for (const ep of this.server.endpoints) await new Promise<void>((res) => ep.restoreConnection(() => res()));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.server.shutdown(0);
  }
}
