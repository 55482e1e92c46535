/**
 * The station as a client of the cell PLC over OPC UA: it subscribes to the interlock inputs
 * (e-stop circuit, door, light curtain, optional heartbeat) and keeps their latest values, so the
 * safety supervisor can ask `current()` every control cycle without touching the network; and it
 * writes the tower light outputs.
 *
 * Fail-safe: `current()` answers "open" whenever it cannot vouch for "closed" — not connected,
 * nothing heard (values, keep-alives) for staleAfterMs, a heartbeat that stopped changing, an
 * input with a bad status or not reported yet. After a reconnection every input must be reported
 * afresh before it counts again.
 *
 * Silence is counted on the station's own responsive time: while this process's event loop is
 * stalled (a GC pause, a busy core) the PLC's messages wait unread in the socket, so a stall must
 * not read as the PLC going quiet. A ticker measures the loop; time it was stalled for (beyond two
 * ticks) is not counted. A dropped connection is open at once, stall or not.
 */
import './opcua-logs.js';
import { performance } from 'node:perf_hooks';
import clientPkg from 'node-opcua-client';
import type { ClientSession, DataValue } from 'node-opcua-client';
import type { InterlockReading, CellInterlock } from '../../src/rig/contract.js';
import {
  INTERLOCK_INPUTS,
  TOWER_OUTPUTS,
  type CellIoConfig,
  type InterlockInput,
  type TowerOutput,
} from './cell-io-config.js';
import { certificateManagerIn } from './pki.js';
import { heartbeatKeyOf, inputReportOf, interlockOfInputs, type InputReport } from './plc-values.js';
import type { TowerLight } from './tower-light.js';

const {
  OPCUAClient,
  ClientSubscription,
  ClientMonitoredItem,
  AttributeIds,
  TimestampsToReturn,
  MessageSecurityMode,
  SecurityPolicy,
  DataType,
} = clientPkg;
type Client = ReturnType<typeof OPCUAClient.create>;
type Session = ClientSession;
type Subscription = ReturnType<typeof ClientSubscription.create>;

export class CellIoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CellIoError';
  }
}

export interface CellPlcClientOptions {
  readonly config: CellIoConfig;
  /** The PKI folder (config.pkiDir wins when set). */
  readonly pkiDir: string;
  /** Seconds on a monotonic clock; default performance.now(). Staleness is judged on it. */
  readonly nowS?: () => number;
  /** How long connect() waits for the PLC and its first values. Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Connection changes in words (lost, back). */
  readonly log?: (line: string) => void;
}

/** The responsive-time ticker's period. */
const TICK_S = 0.02;

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CellIoError(message)), ms);
    }),
  ]);
}

export class CellPlcClient implements CellInterlock {
  readonly endpointUrl: string;
  private readonly nowS: () => number;
  private readonly staleS: number;
  private readonly inputs = new Map<InterlockInput, InputReport>();
  private connected = false;
  private heardS: number;
  private heartbeatChangedS: number;
  private heartbeatKey: string | undefined = undefined;
  private session: Session | undefined;
  private subscription: Subscription | undefined;
  private closed = false;
  private revisedKeepAliveMs = 0;
  private revisedSamplingMs: number[] = [];
  /** Responsive time: seconds the event loop was not stalled, up to the last tick. */
  private aliveS = 0;
  private lastTickS: number;
  private readonly ticker: NodeJS.Timeout;

  private constructor(
    private readonly client: Client,
    private readonly opts: CellPlcClientOptions,
  ) {
    this.endpointUrl = opts.config.endpointUrl;
    this.nowS = opts.nowS ?? (() => performance.now() / 1000);
    this.staleS = opts.config.staleAfterMs / 1000;
    this.lastTickS = this.nowS();
    this.heardS = this.heartbeatChangedS = 0;
    this.ticker = setInterval(() => {
      const now = this.nowS();
      this.aliveS += Math.min(now - this.lastTickS, 2 * TICK_S);
      this.lastTickS = now;
    }, TICK_S * 1000);
    this.ticker.unref();
    for (const i of INTERLOCK_INPUTS) this.inputs.set(i, { value: undefined, good: false, status: 'not reported' });
  }

  /** Connects, subscribes and waits for every input's first value; CellIoError with a sentence otherwise. */
  static async connect(opts: CellPlcClientOptions): Promise<CellPlcClient> {
    const { config } = opts;
    const sec = config.security;
    const client = OPCUAClient.create({
      applicationName: 'tandem station',
      endpointMustExist: false,
      securityMode: MessageSecurityMode[sec.mode],
      securityPolicy: SecurityPolicy[sec.policy],
      clientCertificateManager: certificateManagerIn(
        config.pkiDir ?? opts.pkiDir,
        'station-client',
        sec.trustUnknownServerCertificate,
      ),
      ...(sec.certificateFile ? { certificateFile: sec.certificateFile, privateKeyFile: sec.privateKeyFile } : {}),
      // Keep trying for as long as the station runs: the arms stay held meanwhile.
      connectionStrategy: { initialDelay: 200, maxDelay: 2000, maxRetry: 1_000_000 },
      keepSessionAlive: true,
      requestedSessionTimeout: 30_000,
    });
    const plc = new CellPlcClient(client, opts);
    const timeoutMs = opts.connectTimeoutMs ?? 10_000;
    try {
      await withTimeout(
        plc.start(),
        timeoutMs,
        `The cell PLC at ${config.endpointUrl} did not answer within ${(timeoutMs / 1000).toFixed(0)} s; check its address, the network and its OPC UA server (security ${sec.mode}), then try again.`,
      );
    } catch (e) {
      await plc.close();
      if (e instanceof CellIoError) throw e;
      throw new CellIoError(`The cell PLC at ${config.endpointUrl} refused the station: ${(e as Error).message}`);
    }
    return plc;
  }

  private async start(): Promise<void> {
    const { config } = this.opts;
    const client = this.client;
    client.on('connection_lost', () => this.lost());
    client.on('connection_reestablished', () => {
      this.connected = true;
      this.opts.log?.(
        `The cell PLC at ${this.endpointUrl} is back; its inputs count again once each is reported afresh.`,
      );
    });
    await client.connect(config.endpointUrl);
    this.session = await client.createSession();
    this.connected = true;
    this.heardS = this.aliveNow();
    const publishingMs = Math.max(config.samplingIntervalMs, 1);
    const sub = ClientSubscription.create(this.session, {
      requestedPublishingInterval: publishingMs,
      // A keep-alive well inside the staleness window, so a quiet PLC is never mistaken for a gone
      // one; counted on 50 ms publishing, the floor servers commonly revise faster requests to.
      requestedMaxKeepAliveCount: Math.max(1, Math.floor(config.staleAfterMs / 4 / Math.max(publishingMs, 50))),
      requestedLifetimeCount: 1000,
      maxNotificationsPerPublish: 100,
      publishingEnabled: true,
      priority: 100,
    });
    this.subscription = sub;
    sub.on('keepalive', () => {
      this.heardS = this.aliveNow();
    });
    sub.on('terminated', () => {
      if (!this.closed) this.lost();
    });
    await new Promise<void>((res, rej) => {
      sub.once('started', () => res());
      sub.once('internal_error', (e: Error) => rej(e));
    });
    this.revisedKeepAliveMs = sub.publishingInterval * sub.maxKeepAliveCount;
    if (this.revisedKeepAliveMs > config.staleAfterMs / 2) {
      throw new CellIoError(
        `The cell PLC at ${this.endpointUrl} sends keep-alives only every ${this.revisedKeepAliveMs} ms, more than half of staleAfterMs (${config.staleAfterMs} ms): a quiet PLC would hold the arms. Raise staleAfterMs in the cell I/O config.`,
      );
    }
    const firstValues: Promise<void>[] = [];
    const monitor = (nodeId: string, onValue: (dv: DataValue) => void): Promise<void> => {
      const item = ClientMonitoredItem.create(
        sub,
        { nodeId, attributeId: AttributeIds.Value },
        { samplingInterval: config.samplingIntervalMs, queueSize: 1, discardOldest: true },
        TimestampsToReturn.Both,
      );
      return new Promise<void>((res, rej) => {
        item.once('err', (message: string) =>
          rej(
            new CellIoError(
              `The cell PLC at ${this.endpointUrl} has no node ${nodeId} the station can read (${message}); check the node ids in the cell I/O config.`,
            ),
          ),
        );
        item.once('initialized', () => {
          const revised = (item as unknown as { result?: { revisedSamplingInterval?: number } }).result
            ?.revisedSamplingInterval;
          if (typeof revised === 'number') this.revisedSamplingMs.push(revised);
        });
        item.on('changed', (dv: DataValue) => {
          this.heardS = this.aliveNow();
          onValue(dv);
          res();
        });
      });
    };
    for (const input of INTERLOCK_INPUTS) {
      firstValues.push(
        monitor(config.nodes[input], (dv) => {
          this.inputs.set(input, inputReportOf(dv));
        }),
      );
    }
    if (config.nodes.heartbeat) {
      firstValues.push(
        monitor(config.nodes.heartbeat, (dv) => {
          const key = heartbeatKeyOf(dv);
          if (key !== undefined && key !== this.heartbeatKey) {
            this.heartbeatKey = key;
            this.heartbeatChangedS = this.aliveNow();
          }
        }),
      );
    }
    await Promise.all(firstValues);
  }

  private lost(): void {
    if (this.closed) return;
    if (this.connected)
      this.opts.log?.(`The cell PLC at ${this.endpointUrl} stopped answering; the arms are held until it is back.`);
    this.connected = false;
    // Values from before the drop say nothing about now: each must be reported afresh.
    for (const input of INTERLOCK_INPUTS)
      this.inputs.set(input, { value: undefined, good: false, status: 'not reported since the connection came back' });
  }

  /** Responsive time now: a stall in progress counts for at most two ticks. */
  private aliveNow(): number {
    return this.aliveS + Math.min(this.nowS() - this.lastTickS, 2 * TICK_S);
  }

  /** The interlock now: open unless every input is reported good and safe by a PLC heard from recently. */
  current(): InterlockReading {
    const now = this.aliveNow();
    const silentS = now - this.heardS;
    if (!this.connected || silentS > this.staleS) {
      return {
        open: true,
        reason: `The cell PLC at ${this.endpointUrl} stopped answering ${silentS.toFixed(1)} s ago; the arms are held until it is back.`,
      };
    }
    if (this.opts.config.nodes.heartbeat && now - this.heartbeatChangedS > this.staleS) {
      return {
        open: true,
        reason: `The cell PLC at ${this.endpointUrl} answers, but its heartbeat has not changed for ${(now - this.heartbeatChangedS).toFixed(1)} s (its program may have stopped); the arms are held until it runs again.`,
      };
    }
    return interlockOfInputs(this.endpointUrl, this.inputs);
  }

  /** Each input's latest value and status, for bring-up and the station's status. */
  inputsNow(): Record<InterlockInput, { value: boolean | null; status: string }> {
    const out = {} as Record<InterlockInput, { value: boolean | null; status: string }>;
    for (const [k, st] of this.inputs) out[k] = { value: st.value ?? null, status: st.status };
    return out;
  }

  /** What the subscription was granted: the keep-alive period and each item's sampling interval, ms. */
  granted(): { keepAliveMs: number; samplingIntervalsMs: readonly number[] } {
    return { keepAliveMs: this.revisedKeepAliveMs, samplingIntervalsMs: [...this.revisedSamplingMs] };
  }

  /** Writes the three tower light outputs in one request. Never called from the control loop. */
  async setTowerLight(light: TowerLight): Promise<void> {
    const session = this.session;
    if (!session || !this.connected)
      throw new CellIoError(`The tower light cannot be set: the cell PLC at ${this.endpointUrl} is not connected.`);
    const nodes = this.opts.config.nodes;
    const values: Record<TowerOutput, boolean> = {
      towerRed: light.red,
      towerAmber: light.amber,
      towerGreen: light.green,
    };
    const statuses = await session.write(
      TOWER_OUTPUTS.map((o) => ({
        nodeId: nodes[o],
        attributeId: AttributeIds.Value,
        value: { value: { dataType: DataType.Boolean, value: values[o] } },
      })),
    );
    const bad = statuses.findIndex((s) => !s.isGood());
    if (bad >= 0)
      throw new CellIoError(
        `The cell PLC at ${this.endpointUrl} refused the tower light output ${TOWER_OUTPUTS[bad]} (${nodes[TOWER_OUTPUTS[bad]]}): ${statuses[bad].name}.`,
      );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.connected = false;
    clearInterval(this.ticker);
    const quietly = async (p: Promise<unknown> | undefined): Promise<void> => {
      if (!p) return;
      await withTimeout(p, 2000, 'timed out').catch(() => undefined);
    };
    await quietly(this.subscription?.terminate());
    await quietly(this.session?.close());
    await quietly(this.client.disconnect());
  }
}
