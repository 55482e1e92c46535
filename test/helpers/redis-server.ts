/**
 * A real redis-server (Debian's, installed by .ci/run) on a free loopback port with its own temp
 * dir and no persistence, for the distributed-sweep tests. Stopped with stop(). Given a port, it
 * listens there (a Redis restarted where its clients look for it); given a dir, it keeps an
 * append-only file there that a restart in the same dir reads back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function startRedisServer(
  opts: { password?: string; port?: number; persistDir?: string } = {},
): Promise<RedisServer> {
  const dir = opts.persistDir ?? mkdtempSync(join(tmpdir(), 'tandem-redis-'));
  const port = opts.port ?? (await freePort());
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    opts.persistDir ? 'yes' : 'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
  ];
  if (opts.password) args.push('--requirepass', opts.password);
  const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s:\n${log}`)), 10_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start redis-server (.ci/run installs it from Debian): ${e.message}`));
    });
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      log += d;
      if (log.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (code ${code}):\n${log}`));
    });
  });
  const auth = opts.password ? `:${opts.password}@` : '';
  return {
    port,
    url: `redis://${auth}127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await exited;
      }
      if (!opts.persistDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
