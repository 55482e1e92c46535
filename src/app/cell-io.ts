/**
 * The cell I/O as the composition root brings it up for a rollout: the config file read and
 * checked against the control rate, the PLC client connected (the rig's interlock), the tower
 * light following the station state, and — when the config names a port — the station's own
 * OPC UA server for the factory side. Bad input and an unreachable PLC are one UserError sentence.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from './command.js';
import { CellIoConfigError, readCellIoConfig, type CellIoConfig } from '../../drivers/cell-io/cell-io-config.js';
import { CellIoError, CellPlcClient } from '../../drivers/cell-io/plc-client.js';
import { StationStateBoard } from '../../drivers/cell-io/station-state.js';
import { StationOpcuaServer } from '../../drivers/cell-io/station-opcua-server.js';
import { TowerLightDriver } from '../../drivers/cell-io/tower-light-driver.js';

export interface CellIo {
  readonly config: CellIoConfig;
  /** The rig's interlock source. */
  readonly plc: CellPlcClient;
  /** What the tower light and the station's server show; the caller updates it. */
  readonly board: StationStateBoard;
  readonly station?: StationOpcuaServer;
  /** Waits for the tower light to show the latest state, then disconnects and stops the server. */
  close(): Promise<void>;
}

/** The PKI folder node-opcua keeps its certificates in, inside the station's data directory. */
export function cellIoPkiDir(dataDir: string): string {
  return join(dataDir, 'cell-io-pki');
}

/** Opens the cell I/O of a config file (--cell-io FILE) or of a config already read (the station config's cellIo). */
export async function openCellIo(
  from: string | { readonly config: CellIoConfig; readonly where: string },
  o: { readonly dataDir: string; readonly controlHz: number; readonly log: (line: string) => void },
): Promise<CellIo> {
  let config: CellIoConfig;
  const file = typeof from === 'string' ? from : from.where;
  try {
    config = typeof from === 'string' ? readCellIoConfig(from) : from.config;
  } catch (e) {
    if (e instanceof CellIoConfigError) throw new UserError(e.message);
    throw e;
  }
  const periodMs = 1000 / o.controlHz;
  if (config.samplingIntervalMs > periodMs) {
    throw new UserError(
      `The cell I/O config ${file} samples the interlocks every ${config.samplingIntervalMs} ms, longer than the ${periodMs.toFixed(1)} ms control period at ${o.controlHz} Hz; set samplingIntervalMs to ${Math.floor(periodMs)} or less.`,
    );
  }
  const pkiDir = config.pkiDir ?? cellIoPkiDir(o.dataDir);
  let plc: CellPlcClient;
  try {
    plc = await CellPlcClient.connect({ config, pkiDir, log: o.log });
  } catch (e) {
    if (e instanceof CellIoError) throw new UserError(e.message);
    throw e;
  }
  const board = new StationStateBoard();
  const tower = new TowerLightDriver(plc, board, o.log);
  let station: StationOpcuaServer | undefined;
  try {
    const st = config.station;
    if (st)
      station = await StationOpcuaServer.start({
        board,
        port: st.port,
        host: st.host,
        ...(st.user
          ? { user: { name: st.user.name, password: readFileSync(st.user.passwordFile, 'utf8').trim() } }
          : {}),
        pkiDir,
      });
  } catch (e) {
    tower.close();
    await plc.close();
    throw new UserError(
      `The station's OPC UA server could not start on port ${config.station!.port}: ${(e as Error).message}`,
    );
  }
  return {
    config,
    plc,
    board,
    ...(station ? { station } : {}),
    async close() {
      await tower.settled();
      tower.close();
      await plc.close();
      await station?.stop();
    },
  };
}
