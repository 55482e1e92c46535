/**
 * A queue worker's health answer for a process manager (systemd, Docker, Kubernetes): plain
 * HTTP on loopback by default. `/health` says the process answers (liveness); `/ready` says it
 * can take jobs — Redis reachable and not stopping — with 503 otherwise (readiness). Both carry
 * the same JSON: Redis, jobs done and failed, and each current job with its age.
 */
import { createServer, type Server } from 'node:http';

export interface CurrentJobHealth {
  readonly id: string;
  readonly layout: number;
  readonly repeat: number;
  readonly policy: string;
  readonly ageSeconds: number;
}

export interface WorkerHealth {
  readonly state: 'connecting' | 'working' | 'stopping';
  readonly queue: string;
  readonly redis: 'reachable' | 'unreachable';
  /** How long Redis has been away, when it is. */
  readonly redisAwaySeconds?: number;
  readonly jobsDone: number;
  readonly jobsFailed: number;
  readonly currentJobs: readonly CurrentJobHealth[];
}

/** The health port cannot be opened: one sentence. */
export class HealthPortError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HealthPortError';
  }
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

export function isReady(h: WorkerHealth): boolean {
  return h.redis === 'reachable' && h.state === 'working';
}

export async function serveWorkerHealth(host: string, port: number, status: () => WorkerHealth): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('GET /health or /ready\n');
      return;
    }
    if (path !== '/health' && path !== '/ready') {
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('GET /health (the process answers) or /ready (it can take jobs)\n');
      return;
    }
    const h = status();
    const ok = path === '/health' || isReady(h);
    res
      .writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(`${JSON.stringify({ ready: isReady(h), ...h })}\n`);
  });
  // A probe that never finishes its request must not hold the worker's stop.
  server.requestTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      const why =
        e.code === 'EADDRINUSE'
          ? 'the port is in use'
          : e.code === 'EACCES'
            ? 'permission denied'
            : e.code === 'EADDRNOTAVAIL'
              ? 'no such address here'
              : e.message;
      reject(
        new HealthPortError(`Cannot answer health probes on ${host}:${port} (${why}); pick another --health-port.`),
      );
    });
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as { port: number }).port;
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
