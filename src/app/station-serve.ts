/**
 * `npm start`: the station stays up and serves its API and operator UI on loopback. This file
 * composes the concrete parts the server only knows by interface — the configured rig (with the
 * YamCanRig's motor reports and the emulated cell's numbers), rollouts through the same code as
 * `tandem rig rollout`, the store — and shuts them down in order: rig damped, store closed.
 */
import { EPISODE_CONTROL_HZ } from '../rollout/run-episode.js';
import { RigError } from '../rig/contract.js';
import { getTask } from '../tasks/registry.js';
import { knownPolicySpecs } from '../rollout/policy-registry.js';
import { RigHost, type RigParts } from '../server/rig-host.js';
import { StationServer } from '../server/station-server.js';
import { buildUi } from '../server/ui-bundle.js';
import { UserError } from './command.js';
import { openStationStore } from './station-store.js';
import { clockForRigConfig } from './rig-registry.js';
import { createStationRig, isCellMarkerKind } from './station-rig.js';
import type { RigServices } from './services/rig-services.js';
import {
  cellIoSourceOf,
  readRigConfig,
  rigConfigWithGrippers,
  stationConfigOfRig,
  type StationConfig,
} from './station-config.js';
import { defaultEpisodesDir, unfinishedRecordings } from './episode-recording.js';
import { SessionHost } from '../server/session-host.js';
import { TeleopHost } from '../server/teleop-host.js';
import { join, resolve } from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import type { CellIo } from './cell-io.js';
import { DEFAULT_PLACEMENT_THRESHOLDS } from '../session/placement-gate.js';
import { stationPlacementGate } from './placement-check.js';
import { openStationProjector } from './station-projector.js';
import { FoxgloveLiveError, FoxgloveLiveServer } from '../server/foxglove-live.js';
import type { FoxgloveListen } from './foxglove-options.js';
import { cellStatus, calibrationsInUse, motorReports } from './station-rig-status.js';
import { rolloutRunner } from './station-rollouts.js';
import { interlockReading, sessionParts } from './station-session-parts.js';
import { teleopChoices, teleopParts } from './station-teleop-parts.js';

/** How often the Session view's interlock words are re-read (the rig's own stop does not wait for this). */
const SAFETY_REFRESH_MS = 250;

export interface ServeOptions {
  readonly dataDir: string;
  /** The station config (--station-config); without one, the rig config file (or the embedded default) alone. */
  readonly station?: StationConfig;
  readonly rigConfigFile?: string;
  readonly port: number;
  readonly cwd: string;
  readonly signal: AbortSignal;
  /** The one line with the URL, then nothing but problems. */
  log(line: string): void;
  /** Called once the station listens, with the URL to open (token included): the Electron shell opens its window on it. */
  onListening?(url: string): void;
  /** A calibration from 'tandem projector calibrate': sessions project each layout's footprints with it. */
  readonly projectorCalibrationFile?: string;
  /** HOST[:PORT] of a PJLink projector, AV-muted for every blank. */
  readonly pjlink?: string;
  /** The cell PLC's e-stop and interlocks over OPC UA (docs/cell-io.md): the rig stops when one opens. */
  readonly cellIoFile?: string;
  /** $TANDEM_PJLINK_PASSWORD. */
  readonly env?: NodeJS.ProcessEnv;
  /** Every projector frame as it goes out (the Electron shell's projector window); null is black. */
  onProjectorFrame?(png: Buffer | null): void;
  /** Serve the live rig state to Foxglove there too (off when absent: no port opened). */
  readonly foxglove?: FoxgloveListen;
}

/** TANDEM_REQUEST_TIMEOUT_MS: how long a request's headers and body may take to arrive (default 30 s). */
function requestTimeoutOf(env: NodeJS.ProcessEnv): { requestTimeoutMs?: number } {
  const text = env.TANDEM_REQUEST_TIMEOUT_MS;
  if (text === undefined || text === '') return {};
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 100 || ms > 3_600_000)
    throw new UserError(`TANDEM_REQUEST_TIMEOUT_MS must be milliseconds from 100 to 3600000, not '${text}'.`);
  return { requestTimeoutMs: ms };
}

async function serveFoxglove(listen: FoxgloveListen, host: RigHost<RigServices>): Promise<FoxgloveLiveServer> {
  try {
    const live = new FoxgloveLiveServer({
      source: host,
      port: listen.port,
      host: listen.host,
      allowRemote: listen.allowRemote,
      allowedOrigins: listen.allowedOrigins,
      name: `tandem station (${host.type})`,
      metadata: { rigType: host.type },
    });
    await live.listen().catch(async (e: unknown) => {
      await live.close();
      throw e;
    });
    return live;
  } catch (e) {
    if (e instanceof FoxgloveLiveError) throw new UserError(e.message);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new UserError(
        `The Foxglove port ${listen.port} is taken (a ROS foxglove_bridge?); pick another with --foxglove-port, or 0 for any.`,
      );
    if (code === 'EADDRNOTAVAIL')
      throw new UserError(
        `This machine has no address ${listen.host} to serve the Foxglove live view on; use 127.0.0.1.`,
      );
    throw e;
  }
}

/** How the embedded default (no config given) names itself; teleop records it as the cell follower. */
const DEFAULT_STATION_SOURCE = 'the embedded default (the emulated cell)';

/** Where a running station's address (with its launch token) is kept for the operator: the data folder, readable by its owner only. */
export const STATION_ADDRESS_FILE = 'station-address.txt';

function writeStationAddress(dataDir: string, url: string): string {
  const file = join(dataDir, STATION_ADDRESS_FILE);
  writeFileSync(file, `${url}\n`, { mode: 0o600 });
  return file;
}

/** Serves until the signal aborts, then damps the rig and closes the store. */
export async function serveStation(opts: ServeOptions): Promise<void> {
  const configured =
    opts.station ??
    stationConfigOfRig(await readRigConfig(opts.rigConfigFile), opts.rigConfigFile ?? DEFAULT_STATION_SOURCE);
  const store = openStationStore(opts.dataDir);
  let host: RigHost<RigServices> | undefined;
  let server: StationServer | undefined;
  let sessions: SessionHost | undefined;
  let placement: ReturnType<typeof stationPlacementGate> | undefined;
  let teleop: TeleopHost | undefined;
  let cellIo: CellIo | undefined;
  let safetyTimer: NodeJS.Timeout | undefined;
  let live: FoxgloveLiveServer | undefined;
  let addressFile: string | undefined;
  try {
    const station: StationConfig = { ...configured, rig: rigConfigWithGrippers(configured, store) };
    const rigConfig = station.rig;
    const cellIoFrom = cellIoSourceOf(
      station,
      opts.cellIoFile === undefined ? undefined : resolve(opts.cwd, opts.cellIoFile),
    );
    const projectorFile = opts.projectorCalibrationFile ?? station.projector?.calibration;
    const pjlink = opts.pjlink ?? station.projector?.pjlink;
    const env = opts.env ?? {};
    // node-opcua loads only when the station is asked for cell I/O (seconds of start-up otherwise).
    // Opened before the rig: its safety supervisor reads the interlock from the first cycle.
    if (cellIoFrom !== undefined)
      cellIo = await (await import('./cell-io.js')).openCellIo(cellIoFrom, {
        dataDir: opts.dataDir,
        controlHz: EPISODE_CONTROL_HZ,
        log: opts.log,
      });
    const projector = await openStationProjector({
      ...(projectorFile !== undefined ? { calibrationFile: projectorFile } : {}),
      ...(pjlink !== undefined ? { pjlink } : {}),
      cwd: opts.cwd,
      env,
      store,
      say: opts.log,
    });
    if (opts.onProjectorFrame) {
      const show = opts.onProjectorFrame;
      projector.feed.onChange((s) => show(s.showing === 'layout' ? projector.feed.frame() : null));
    }
    const interlock = cellIo?.plc;
    const parts: RigParts<RigServices> = {
      type: String(rigConfig.type),
      clock: () => clockForRigConfig(rigConfig),
      create: async (context) =>
        await createStationRig(rigConfig, { ...context, signal: opts.signal, ...(interlock ? { interlock } : {}) }),
      motors: motorReports,
      cell: cellStatus,
      ...(cellIo ? { interlock: () => interlockReading(cellIo!) } : {}),
      // Object and fixture poses where something tracks them (the emulated cell's world: a rehearsal view).
      bodies: (services) => services.bodies(),
    };
    host = new RigHost(parts);
    try {
      await host.start();
    } catch (e) {
      if (e instanceof RigError) throw new UserError(e.message);
      throw e;
    }
    const ui = await buildUi();
    // Code policies plan from object poses only a rig whose services see them has (the emulated
    // cell's world): on any other rig the rollout form neither suggests nor starts with one (it would be refused).
    const seesObjects = host.rigServices()?.objectPoses.available === true;
    const policySpecs = knownPolicySpecs().filter((s) => seesObjects || !s.startsWith('code:'));
    placement = stationPlacementGate(station, {
      thresholds: { ...DEFAULT_PLACEMENT_THRESHOLDS, ...station.placementCheck },
    });
    sessions = new SessionHost(
      store,
      sessionParts(
        store,
        host,
        station,
        opts.cwd,
        defaultEpisodesDir(opts.dataDir),
        cellIo,
        projector.session,
        placement.gate,
      ),
    );
    teleop = new TeleopHost(
      store,
      teleopParts(
        store,
        host,
        opts.rigConfigFile
          ? resolve(opts.cwd, opts.rigConfigFile)
          : opts.station && opts.station.source !== DEFAULT_STATION_SOURCE
            ? opts.station.source
            : 'cell',
        opts.dataDir,
        opts.station ? station : undefined,
      ),
    );
    server = new StationServer({
      ...(station.simDrift ? { simDrift: station.simDrift } : {}),
      sessions,
      teleop,
      projector: projector.feed,
      calibrationsInUse: calibrationsInUse(host, parts.type, store, projector),
      store,
      rig: host,
      rollouts: rolloutRunner(store, host, station, opts.cwd, defaultEpisodesDir(opts.dataDir)),
      ui,
      info: {
        dataDir: opts.dataDir,
        startedAt: new Date().toISOString(),
        policySpecs,
        defaultPolicy: seesObjects ? 'code:bottles-in-the-bin' : '',
        teleop: teleopChoices(opts.station ? station : undefined, parts.type),
      },
      views: {
        policy: (id) => store.getPolicy(id),
        taskOf: (sha) => store.getLayoutSet(sha)?.task ?? null,
        isCellMarker: (sha) => isCellMarkerKind(store.getCalibration(sha)?.kind),
        episodeSecondsOf: (task) => getTask(task).episodeSeconds,
      },
      port: opts.port,
      ...requestTimeoutOf(env),
      logError: (e) => opts.log(`station error: ${(e as Error).stack ?? String(e)}`),
    });
    let url: string;
    try {
      url = await server.listen();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new UserError(
          `Port ${opts.port} is taken (another station?); set PORT to a free one, or PORT=0 for any.`,
        );
      throw e;
    }
    // A page left open across a restart says to look here for the new address (its key changed).
    // Written before the line is printed: whoever sees the line finds the file already current.
    addressFile = writeStationAddress(opts.dataDir, url);
    opts.log(`tandem station (${parts.type}, data in ${opts.dataDir}) — open ${url}`);
    if (cellIo) {
      const s = sessions;
      safetyTimer = setInterval(() => s.refreshSafety(), SAFETY_REFRESH_MS);
    }
    if (opts.foxglove) {
      live = await serveFoxglove(opts.foxglove, host);
      opts.log(
        `Foxglove live view on ${live.url} (Foxglove: Open connection → Foxglove WebSocket; read only, no token)`,
      );
    }
    opts.onListening?.(url);
    // Episode files a crash cut off, or a failed write stopped: said once, with the command that recovers them.
    for (const r of unfinishedRecordings(store)) {
      opts.log(
        `Unfinished episode file ${r.file} (${r.state === 'failed' ? (r.problem ?? 'a write failed') : 'the station stopped while recording it'}); recover it with: tandem record recover ${r.file}`,
      );
    }
    if (!opts.signal.aborted)
      await new Promise<void>((resolve) => opts.signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    if (addressFile) rmSync(addressFile, { force: true });
    clearInterval(safetyTimer);
    // In order: no new requests, the rig damped (a rollout in flight is stopped first), the store closed.
    await live?.close();
    await server?.close();
    // The session first: its rollout stops and it stays resumable; then the rig is damped.
    await sessions?.close();
    await placement?.close();
    await teleop?.close();
    await host?.close();
    await server?.settled();
    cellIo?.board.update({ sessionId: '', rolloutPhase: 'idle' });
    await cellIo?.close();
    store.close();
  }
}
