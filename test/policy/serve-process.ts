/** Runs `tandem policy serve` as a child process and waits until it prints its address. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../helpers/cli.js';

export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
}

export function startServeProcess(args: readonly string[], timeoutMs = 30_000): Promise<ServeProcess> {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/tandem.js'), 'policy', 'serve', ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tandem policy serve did not start within ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /on (wss?:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child, stdout: () => out, stderr: () => err, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`tandem policy serve exited with ${code} before serving: ${err}`));
    });
  });
}
