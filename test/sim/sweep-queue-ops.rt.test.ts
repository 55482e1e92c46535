/**
 * Sweep workers and coordinators as operations run them: a real redis-server stopped and
 * restarted under real `tandem` processes, which are sent SIGTERM / SIGINT as a process manager
 * or an operator would. Each stop has a bound (5 s), each lost Redis one line, and the health
 * port answers a probe. Episodes are short; rollouts meant to be cut are long and are cut.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { runTandem } from '../helpers/cli.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { setup, start, stopProcess, storedHashes, until, type Running } from '../helpers/queue-sweep.js';
import { connectRedis, parseQueueUrl } from '../../src/sim/queue/connection.js';
import { SIM_QUEUE_NAME } from '../../src/sim/queue/job.js';
import { openStore } from '../../src/store/store.js';

const STOP_BOUND_MS = 5000;

/** Sends the signal and resolves with the exit code and how long the process took to end (SIGKILLed after 20 s, as a process manager would). */
async function signalAndTime(p: Running, signal: NodeJS.Signals): Promise<{ code: number; ms: number }> {
  const t0 = Date.now();
  p.child.kill(signal);
  const kill = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
  const code = await p.exited;
  clearTimeout(kill);
  return { code, ms: Date.now() - t0 };
}

function count(text: string, re: RegExp): number {
  return (text.match(new RegExp(re.source, `${re.flags.replace('g', '')}g`)) ?? []).length;
}

/** The lines a lost Redis may print: the one sentence, never the client's own errors or a stack trace. */
function assertQuietLog(text: string): void {
  assert.doesNotMatch(text, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(text, /^(queue worker: )?(Error: )?connect ECONNREFUSED/m, 'no raw connection error');
  assert.doesNotMatch(text, /\[ioredis\]/, 'no unhandled client error');
}

async function health(
  port: number,
  path: '/health' | '/ready',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function healthPortOf(p: Running): number {
  const m = /^Health probes: http:\/\/127\.0\.0\.1:(\d+)\/health and \/ready$/m.exec(p.stderr());
  assert.ok(m, p.stderr());
  return Number(m[1]);
}

/** A plain view of the queue through BullMQ; reconnects while its Redis is away, closed after the test. */
async function queueOn(redis: RedisServer): Promise<{ queue: Queue; close: () => Promise<void> }> {
  const client = await connectRedis(parseQueueUrl(redis.url));
  client.on('error', () => undefined);
  const queue = new Queue(SIM_QUEUE_NAME, { connection: client });
  queue.on('error', () => undefined);
  return {
    queue,
    close: async () =>
      void (await Promise.race([queue.close(), new Promise((r) => setTimeout(r, 1000))]), client.disconnect()),
  };
}

test('an idle worker with Redis stopped: one line says so, /ready turns 503, and SIGTERM ends it at once with exit 0', async (t) => {
  const redis = await startRedisServer();
  const procs: Running[] = [];
  t.after(async () => {
    for (const p of procs) await stopProcess(p);
    await redis.stop();
  });
  const worker = start(['sim', 'worker', '--queue', redis.url, '--health-port', '0']);
  procs.push(worker);
  await worker.waitFor(/rollout thread/);
  const port = healthPortOf(worker);
  const up = await health(port, '/ready');
  assert.equal(up.status, 200);
  assert.equal(up.body.redis, 'reachable');
  assert.equal(up.body.jobsDone, 0);
  await redis.stop();
  await worker.waitFor(/is unreachable/);
  const down = await health(port, '/ready');
  assert.equal(down.status, 503, 'not ready without Redis');
  assert.equal(down.body.redis, 'unreachable');
  assert.equal((await health(port, '/health')).status, 200, 'alive though not ready');
  // Several reconnect attempts fail meanwhile (one a second): still one line.
  await new Promise((r) => setTimeout(r, 3000));
  const { code, ms } = await signalAndTime(worker, 'SIGTERM');
  assert.equal(code, 0, worker.stderr());
  assert.ok(ms < STOP_BOUND_MS, `stopped in ${ms} ms`);
  const log = worker.stderr();
  assert.equal(
    count(
      log,
      new RegExp(
        `^Redis at redis://127\\.0\\.0\\.1:${redis.port}/0 is unreachable \\(connection refused\\); retrying every 1 s\\.$`,
        'm',
      ),
    ),
    1,
    log,
  );
  assert.match(
    log,
    new RegExp(
      `^Worker stopped cleanly: 0 jobs done, 0 failed; no job was running\\. Redis at redis://127\\.0\\.0\\.1:${redis.port}/0 was unreachable\\.\\n$`,
      'm',
    ),
  );
  assertQuietLog(log);
  // Nothing listens on the health port any more.
  await assert.rejects(fetch(`http://127.0.0.1:${port}/health`));
});

test('SIGTERM mid-rollout with Redis up: the thread ends, the job goes back to the queue unspent, exit 0 within 5 s; /health showed the job and its age', async (t) => {
  const { dir, file, data } = setup([1]);
  const redis = await startRedisServer();
  const { queue, close } = await queueOn(redis);
  const procs: Running[] = [];
  t.after(async () => {
    for (const p of procs) await stopProcess(p);
    await close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const worker = start(['sim', 'worker', '--queue', redis.url, '--health-port', '0']);
  procs.push(worker);
  await worker.waitFor(/rollout thread/);
  // A rollout far longer than the test: only the stop ends it.
  procs.push(
    start([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      'code:hold',
      '--seconds',
      '600',
      '--queue',
      redis.url,
      '--data',
      data,
    ]),
  );
  await worker.waitFor(/^job \S+ \(layout 0 repeat 0, code:hold\): started$/m);
  const jobId = /^job (\S+) /m.exec(worker.stderr())![1];
  await until(
    async () =>
      Number(
        ((await health(healthPortOf(worker), '/health')).body.currentJobs as { ageSeconds: number }[])[0]?.ageSeconds ??
          0,
      ) >= 1,
    10_000,
  );
  const h = await health(healthPortOf(worker), '/ready');
  assert.equal(h.status, 200);
  const [current] = h.body.currentJobs as Record<string, unknown>[];
  assert.deepEqual(
    { ...current, ageSeconds: undefined },
    { id: jobId, layout: 0, repeat: 0, policy: 'code:hold', ageSeconds: undefined },
  );
  const { code, ms } = await signalAndTime(worker, 'SIGTERM');
  assert.equal(code, 0, worker.stderr());
  assert.ok(ms < STOP_BOUND_MS, `stopped in ${ms} ms`);
  const log = worker.stderr();
  assert.equal(
    count(
      log,
      new RegExp(`^job ${jobId} \\(layout 0 repeat 0, code:hold\\): stopped; the job went back to the queue$`, 'm'),
    ),
    1,
    log,
  );
  assert.match(
    log,
    new RegExp(`^Worker stopped cleanly: 0 jobs done, 0 failed; ${jobId} went back to the queue\\.\\n$`, 'm'),
  );
  const job = await queue.getJob(jobId);
  assert.equal(await job!.getState(), 'waiting', 'back on the queue for the next worker');
  assert.equal(job!.attemptsMade, 0, 'the stop spent none of its attempts');
  assertQuietLog(log);
});

test('SIGTERM mid-rollout with Redis stopped: exit 1 within 5 s saying the job waits for its lock to lapse, and once Redis is back another worker takes it', async (t) => {
  const { dir, file, data } = setup([1]);
  const persistDir = mkdtempSync(join(tmpdir(), 'tandem-redis-aof-'));
  let redis = await startRedisServer({ persistDir });
  const procs: Running[] = [];
  t.after(async () => {
    for (const p of procs) await stopProcess(p);
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(persistDir, { recursive: true, force: true });
  });
  const worker = start(['sim', 'worker', '--queue', redis.url, '--lock-seconds', '2']);
  procs.push(worker);
  await worker.waitFor(/rollout thread/);
  procs.push(
    start([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      'code:hold',
      '--seconds',
      '600',
      '--queue',
      redis.url,
      '--data',
      data,
    ]),
  );
  await worker.waitFor(/^job \S+ \(layout 0 repeat 0, code:hold\): started$/m);
  const jobId = /^job (\S+) /m.exec(worker.stderr())![1];
  await redis.stop();
  await worker.waitFor(/is unreachable/);
  const { code, ms } = await signalAndTime(worker, 'SIGTERM');
  assert.equal(code, 1, worker.stderr());
  assert.ok(ms < STOP_BOUND_MS, `stopped in ${ms} ms`);
  const log = worker.stderr();
  assert.equal(count(log, /is unreachable \(connection refused\); retrying every 1 s\.$/m), 1, log);
  assert.match(
    log,
    new RegExp(
      `^Worker stopped leaving work behind: 0 jobs done, 0 failed; ${jobId} stays claimed until its lock lapses \\(2 s\\), then another worker takes it\\. Redis at redis://127\\.0\\.0\\.1:${redis.port}/0 was unreachable\\.\\n$`,
      'm',
    ),
  );
  assertQuietLog(log);
  // Redis back with what it held: the claim lapses and the next worker reruns the job.
  redis = await startRedisServer({ port: redis.port, persistDir });
  const next = start(['sim', 'worker', '--queue', redis.url, '--lock-seconds', '2']);
  procs.push(next);
  await next.waitFor(new RegExp(`^job ${jobId} \\(layout 0 repeat 0, code:hold\\): started$`, 'm'), 1, 30_000);
});

test("Redis restarted mid-sweep (its queue lost): worker and coordinator each say it once, gone and back, and the sweep stores the in-process sweep's results", async (t) => {
  const { dir, file, data } = setup([1, 2]);
  let redis = await startRedisServer();
  const procs: Running[] = [];
  t.after(async () => {
    for (const p of procs) await stopProcess(p);
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  // Rollouts of about a second each: Redis goes away while the sweep is under way.
  const sweepArgs = [
    'sim',
    'sweep',
    '--layouts',
    file,
    '--policy',
    'code:hold',
    '--repeats',
    '2',
    '--seconds',
    '30',
    '--json',
  ];
  const local = await runTandem([...sweepArgs, '--workers', '1', '--data', join(dir, 'local')]);
  assert.equal(local.code, 0, local.stderr);
  const expected = storedHashes(join(dir, 'local'));
  assert.equal(expected.rows, 4);
  const worker = start(['sim', 'worker', '--queue', redis.url, '--lock-seconds', '2']);
  procs.push(worker);
  await worker.waitFor(/rollout thread/);
  const coordinator = start([...sweepArgs, '--queue', redis.url, '--data', data]);
  procs.push(coordinator);
  // One rollout done, the next under way: Redis stops, and comes back empty after a while.
  await worker.waitFor(/^job \S+ \(.*\): started$/m, 2, 60_000);
  await redis.stop();
  await Promise.all([worker.waitFor(/is unreachable/), coordinator.waitFor(/is unreachable/)]);
  await new Promise((r) => setTimeout(r, 1500));
  redis = await startRedisServer({ port: redis.port });
  const stuck = setTimeout(() => coordinator.child.kill('SIGKILL'), 90_000);
  assert.equal(await coordinator.exited, 0, coordinator.stderr());
  clearTimeout(stuck);
  const out = JSON.parse(coordinator.stdout());
  assert.equal(out.rollouts, 4);
  assert.equal(out.stopped, false);
  const got = storedHashes(data);
  assert.equal(got.rows, 4);
  assert.deepEqual(
    Object.fromEntries([...got.hashes].sort()),
    Object.fromEntries([...expected.hashes].sort()),
    "each (layout, repeat) ends in the in-process sweep's final state",
  );
  for (const [who, log] of [
    ['worker', worker.stderr()],
    ['coordinator', coordinator.stderr()],
  ] as const) {
    // Refused when it next connects, or reset when a command was in flight as Redis stopped: either is the cause in words.
    assert.equal(
      count(
        log,
        new RegExp(
          `^Redis at redis://127\\.0\\.0\\.1:${redis.port}/0 is unreachable \\(connection (refused|reset)\\); retrying every 1 s\\.$`,
          'm',
        ),
      ),
      1,
      `${who}:\n${log}`,
    );
    assert.equal(
      count(
        log,
        new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${redis.port}/0 is back after \\d+\\.\\d s away\\.$`, 'm'),
      ),
      1,
      `${who}:\n${log}`,
    );
    assertQuietLog(log);
  }
});

test('--give-up-after: a worker whose Redis stays away ends with exit 1 and one sentence, whether Redis left or was never there', async (t) => {
  const redis = await startRedisServer();
  const procs: Running[] = [];
  t.after(async () => {
    for (const p of procs) await stopProcess(p);
    await redis.stop();
  });
  const worker = start(['sim', 'worker', '--queue', redis.url, '--give-up-after', '2']);
  procs.push(worker);
  await worker.waitFor(/rollout thread/);
  const t0 = Date.now();
  await redis.stop();
  const stuck = setTimeout(() => worker.child.kill('SIGKILL'), 20_000);
  const code = await worker.exited;
  clearTimeout(stuck);
  const ms = Date.now() - t0;
  assert.equal(code, 1, worker.stderr());
  assert.ok(ms >= 2000 && ms < 2000 + STOP_BOUND_MS, `gave up after ${ms} ms`);
  const log = worker.stderr();
  assert.equal(count(log, /is unreachable \(connection refused\); retrying every 1 s\.$/m), 1, log);
  assert.match(
    log,
    new RegExp(
      `^Worker gave up: Redis at redis://127\\.0\\.0\\.1:${redis.port}/0 stayed unreachable for 2 s \\(--give-up-after\\); 0 jobs done, 0 failed; no job was running\\.\\n$`,
      'm',
    ),
  );
  assertQuietLog(log);
  // Started while nothing listens there: it waits, says so once, and gives up the same way.
  const never = start(['sim', 'worker', '--queue', redis.url, '--give-up-after', '1']);
  procs.push(never);
  assert.equal(await never.exited, 1, never.stderr());
  assert.equal(
    count(never.stderr(), /is unreachable \(connection refused\); retrying every 1 s\.$/m),
    1,
    never.stderr(),
  );
  assert.match(
    never.stderr(),
    /^Worker gave up: Redis at \S+ stayed unreachable for 1 s \(--give-up-after\); no job was running\.\n$/m,
  );
});

test('Ctrl-C on the coordinator with Redis stopped: it ends within 5 s, every finished rollout stays stored, and the same command resumes the sweep', async (t) => {
  const { dir, file, data } = setup([1, 2]);
  let redis = await startRedisServer();
  const procs: Running[] = [];
  t.after(async () => {
    for (const p of procs) await stopProcess(p);
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const sweepArgs = [
    'sim',
    'sweep',
    '--layouts',
    file,
    '--policy',
    'code:hold',
    '--repeats',
    '2',
    '--seconds',
    '1',
    '--queue',
    redis.url,
    '--data',
    data,
    '--json',
  ];
  const worker = start(['sim', 'worker', '--queue', redis.url]);
  procs.push(worker);
  await worker.waitFor(/rollout thread/);
  const coordinator = start(sweepArgs);
  procs.push(coordinator);
  await until(() => storedHashes(data).rows >= 1, 60_000);
  await stopProcess(worker);
  await redis.stop();
  await coordinator.waitFor(/is unreachable/);
  const { code, ms } = await signalAndTime(coordinator, 'SIGINT');
  assert.equal(code, 1, coordinator.stderr());
  assert.ok(ms < STOP_BOUND_MS, `stopped in ${ms} ms`);
  const stored = storedHashes(data).rows;
  assert.ok(stored >= 1 && stored < 4, `${stored} of 4 stored`);
  assert.equal(JSON.parse(coordinator.stdout()).rollouts, stored, 'what it reports is what is stored');
  const log = coordinator.stderr();
  assert.match(
    log,
    new RegExp(
      `^Stopped with Redis at redis://127\\.0\\.0\\.1:${redis.port}/0 unreachable: ${stored} of 4 rollouts are stored \\(session 1\\) and the rest stay queued; once Redis is back, run the same command again to resume the sweep\\.\\n$`,
      'm',
    ),
  );
  assert.equal(count(log, /is unreachable \(connection refused\)/), 1, log);
  assertQuietLog(log);
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    assert.equal(store.getSession(1)?.endedAt, null, 'the session stays open to be resumed');
  } finally {
    store.close();
  }
  // Redis back (empty: this one kept nothing) and a worker: the same command finishes the sweep.
  redis = await startRedisServer({ port: redis.port });
  procs.push(start(['sim', 'worker', '--queue', redis.url]));
  const resumed = await runTandem(sweepArgs);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(
    resumed.stderr,
    new RegExp(`Resuming sweep \\S+ \\(session 1\\): ${stored} of 4 rollouts already stored`),
  );
  assert.equal(storedHashes(data).rows, 4);
});
