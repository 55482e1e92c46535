/**
 * `npm start` uses the Electron shell where its binary is installed, and otherwise serves the
 * same UI on loopback for a browser. The electron package's own index resolves the binary's path
 * (and throws when its download was skipped, as package.json's allowScripts does on build
 * machines); nothing is faked — without the binary there is no shell, and the station says so.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { UserError } from './command.js';

/** The shell's main-process entry (registers tsx, then runs src/electron/main.ts). */
export const ELECTRON_MAIN_ENTRY = fileURLToPath(new URL('../electron/main-entry.mjs', import.meta.url));

export type ElectronLookup = { readonly path: string } | { readonly missing: string };

/** Where the Electron binary is, or why there is none. `TANDEM_SHELL=browser` skips the shell. */
export function findElectron(
  env: NodeJS.ProcessEnv,
  resolveElectron: () => unknown = () => createRequire(import.meta.url)('electron'),
): ElectronLookup {
  if (env.TANDEM_SHELL === 'browser') return { missing: 'TANDEM_SHELL=browser' };
  let path: unknown;
  try {
    path = resolveElectron();
  } catch {
    return { missing: 'its binary was not downloaded: package.json allowScripts skips it on build machines' };
  }
  if (typeof path !== 'string') return { missing: 'the electron package did not name a binary' };
  if (!existsSync(path)) return { missing: `its binary ${path} is not there` };
  return { path };
}

/** The one line `npm start` prints when it serves without the shell. */
export function noShellLine(lookup: { readonly missing: string }): string {
  return `Electron is not installed here (${lookup.missing}); serving the same operator UI on loopback — open the address below in a browser.`;
}

/** The cell's parts of a station (absolute paths), passed to the shell's main process in its environment. */
export interface CellParts {
  readonly projectorCalibrationFile?: string;
  readonly pjlink?: string;
  readonly cellIoFile?: string;
}

/** The environment variables the shell's main process reads CellParts from. */
export const CELL_PART_ENV = {
  projectorCalibrationFile: 'TANDEM_PROJECTOR_CALIBRATION',
  pjlink: 'TANDEM_PJLINK',
  cellIoFile: 'TANDEM_CELL_IO',
} as const satisfies Record<keyof CellParts, string>;

/** CellParts back from the shell's environment (main.ts). */
export function cellPartsFromEnv(env: NodeJS.ProcessEnv): CellParts {
  const out: { -readonly [K in keyof CellParts]: string } = {};
  for (const [key, name] of Object.entries(CELL_PART_ENV) as [keyof CellParts, string][])
    if (env[name]) out[key] = env[name];
  return out;
}

export interface ShellLaunch extends CellParts {
  readonly electronPath: string;
  readonly dataDir: string;
  readonly rigConfigFile?: string;
  readonly stationConfigFile?: string;
  readonly port: number;
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
}

/** Runs the shell (its main process hosts the station) until it exits; Ctrl-C / SIGTERM pass on. */
export async function runElectronShell(o: ShellLaunch): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...o.env, TANDEM_DATA: o.dataDir, PORT: String(o.port) };
  delete env.ELECTRON_RUN_AS_NODE; // it would start Electron as a plain Node, without windows
  if (o.rigConfigFile) env.TANDEM_RIG_CONFIG = o.rigConfigFile;
  if (o.stationConfigFile) env.TANDEM_STATION_CONFIG = o.stationConfigFile;
  for (const [key, name] of Object.entries(CELL_PART_ENV) as [keyof CellParts, string][]) {
    const value = o[key];
    if (value) env[name] = value;
    else delete env[name];
  }
  const child = spawn(o.electronPath, [ELECTRON_MAIN_ENTRY], { env, stdio: 'inherit' });
  const stop = (): void => void child.kill('SIGTERM');
  o.signal.addEventListener('abort', stop, { once: true });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  }).finally(() => o.signal.removeEventListener('abort', stop));
  if (code !== 0 && code !== null && !o.signal.aborted)
    throw new UserError(
      `The Electron shell exited with code ${code}; its messages are above. Run with TANDEM_SHELL=browser to serve the UI without it.`,
      code,
    );
}
