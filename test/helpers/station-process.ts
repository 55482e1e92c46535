/** A real `tandem station` process (as `npm start` runs it) on a free port with its own data folder. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN_HEADER, tokenInFragment } from '../../src/server/api-types.js';
import { BIN } from './cli.js';

export interface StationProcess {
  readonly child: ChildProcess;
  /** The line's URL, the token in its fragment. */
  readonly url: string;
  readonly base: string;
  readonly token: string;
  readonly dataDir: string;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then the exit code (SIGKILL after timeoutMs). */
  stop(timeoutMs?: number): Promise<number | null>;
  /** Stops (if running) and removes the data folder. */
  dispose(): Promise<void>;
  /** GET (no body) or POST (JSON body) with the token, as the UI's page would; a non-2xx answer fails with its body. */
  api<T>(path: string, body?: unknown): Promise<T>;
}

/** `dataDir`: a data folder to start in (a restart after a crash); default a new one. */
export async function startStation(
  opts: {
    env?: NodeJS.ProcessEnv;
    startTimeoutMs?: number;
    rigConfig?: unknown;
    args?: readonly string[];
    dataDir?: string;
  } = {},
): Promise<StationProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'tandem-station-serve-'));
  const args = [BIN, 'station'];
  if (opts.rigConfig !== undefined) {
    const file = join(dataDir, 'rig.json');
    writeFileSync(file, JSON.stringify(opts.rigConfig));
    args.push('--rig-config', file);
  }
  args.push(...(opts.args ?? []));
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: '0', TANDEM_DATA: dataDir, TANDEM_SHELL: 'browser', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the station printed no URL in time; stdout: ${out} stderr: ${err}`)),
      opts.startTimeoutMs ?? 90_000,
    );
    const check = (): void => {
      const m = /(http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the station exited (${code}) before printing its URL; stderr: ${err}`));
    });
  });
  const u = new URL(url);
  const token = tokenInFragment(u.hash)!;
  let stopped: Promise<number | null> | undefined;
  const stop = (timeoutMs = 30_000): Promise<number | null> => {
    stopped ??= (async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(killer);
      return code;
    })();
    return stopped;
  };
  return {
    child,
    url,
    base: `${u.protocol}//${u.host}`,
    token,
    dataDir,
    stdout: () => out,
    stderr: () => err,
    stop,
    async dispose() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    async api<T>(path: string, body?: unknown): Promise<T> {
      const base = `${u.protocol}//${u.host}`;
      const res = await fetch(`${base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { [TOKEN_HEADER]: token, 'Content-Type': 'application/json', Origin: base },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const data = (await res.json()) as T;
      if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(data)}`);
      return data;
    },
  };
}
