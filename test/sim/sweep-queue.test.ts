/**
 * Sweeps over the BullMQ queue, end to end: real redis-server, real `tandem sim sweep --queue`
 * coordinators and `tandem sim worker`s, the real store. Episodes are short and the sets small: the
 * machine these run on has two cores. A coordinator or worker the test SIGKILLs is a process of its
 * own; the others run in this process (startInProcess: the same entry point, its Ctrl-C an abort),
 * which spares each the CPU-second of a process start — they still meet only through Redis.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { runTandem } from '../helpers/cli.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import {
  setup,
  start,
  startInProcess,
  stopInProcess,
  stopProcess,
  storedHashes,
  until,
  type InProcess,
  type Running,
} from '../helpers/queue-sweep.js';
import { openStore } from '../../src/store/store.js';
import { connectRedis, parseQueueUrl } from '../../src/sim/queue/connection.js';
import { BLOB_TTL_S, blobKey, layoutSetKey } from '../../src/sim/queue/blobs.js';
import { SIM_QUEUE_NAME, TANDEM_VERSION } from '../../src/sim/queue/job.js';
import { queueVersionKey } from '../../src/sim/queue/keys.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { readIndexed, type IndexedEpisode } from '../helpers/mcap.js';
import { TOPICS } from '../../src/record/episode-format.js';
import { recordingKey } from '../../src/sim/queue/recording-blob.js';
import type { SimJobResult } from '../../src/sim/queue/job.js';

/** The test's own view of the queue, through BullMQ, and a plain client for Redis itself. */
async function queueFor(redis: RedisServer) {
  const client = await connectRedis(parseQueueUrl(redis.url));
  const forQueue = client.duplicate();
  const queue = new Queue(SIM_QUEUE_NAME, { connection: forQueue });
  const close = async (): Promise<void> => {
    await queue.close();
    forQueue.disconnect();
    client.disconnect();
  };
  return { client, queue, close };
}

/** A layout set, a redis-server and a queue client for one test; the processes it pushes to `procs` are stopped after it. */
async function queueSweep(t: TestContext, tiers: number[]) {
  const { dir, file, data } = setup(tiers);
  const redis = await startRedisServer();
  const { client, queue, close } = await queueFor(redis);
  const procs: (Running | InProcess)[] = [];
  t.after(async () => {
    for (const p of procs) await ('child' in p ? stopProcess(p) : stopInProcess(p));
    await close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, file, data, redis, client, queue, procs };
}

test("a sweep over two workers stores exactly the in-process sweep's rollouts, with the same final states, though one worker is SIGKILLed mid-rollout", async (t) => {
  const { dir, file, data } = setup([1, 2, 3]);
  const redis = await startRedisServer();
  const workers: (Running | InProcess)[] = [];
  t.after(async () => {
    for (const w of workers) await ('child' in w ? stopProcess(w) : stopInProcess(w));
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
    '3',
    '--json',
  ];
  const local = await runTandem([...sweepArgs, '--workers', '1', '--data', join(dir, 'local')]);
  assert.equal(local.code, 0, local.stderr);
  const expected = storedHashes(join(dir, 'local'));
  assert.equal(expected.rows, 6);

  // W1's jobs lapse 2 s after it dies, so the test need not wait long for W2 to take one over. W2,
  // in this process beside the coordinator and on a busy machine's spare CPU, keeps its jobs 10 s:
  // a 2 s lease lapsed under load while W2 was still running, and its job failed as if killed twice.
  const w1 = start(['sim', 'worker', '--queue', redis.url, '--lock-seconds', '2']);
  const w2 = startInProcess(['sim', 'worker', '--queue', redis.url, '--lock-seconds', '10']);
  workers.push(w1, w2);
  await Promise.all([w1.waitFor(/rollout thread/), w2.waitFor(/rollout thread/)]);
  const coordinator = startInProcess([...sweepArgs, '--queue', redis.url, '--data', data]);
  // W1 finishes a rollout, starts its next one, and dies in the middle of it.
  await w1.waitFor(/: valid \(/, 1, 90_000);
  await w1.waitFor(/^job \S+ \(.*\): started$/m, 2, 90_000);
  const killedJob = [...w1.stderr().matchAll(/^job (\S+) \(.*\): started$/gm)][1][1];
  w1.child.kill('SIGKILL');
  const code = await coordinator.exited;
  assert.equal(code, 0, coordinator.stderr());
  const out = JSON.parse(coordinator.stdout());
  assert.equal(out.rollouts, 6);
  assert.equal(out.stopped, false);
  assert.match(
    w2.stderr(),
    new RegExp(`^job ${killedJob} \\(layout \\d repeat \\d, code:hold\\): started$`, 'm'),
    'the killed job was run again by the other worker',
  );
  const got = storedHashes(data);
  assert.equal(got.rows, 6, 'one row per (layout, repeat), the killed attempt left none');
  assert.deepEqual(
    Object.fromEntries([...got.hashes].sort()),
    Object.fromEntries([...expected.hashes].sort()),
    "each (layout, repeat) ends in the in-process sweep's final state",
  );
});

test('a coordinator SIGKILLed mid-sweep: the same command resumes collecting, and a duplicated job stores one row', async (t) => {
  const { file, data, redis, procs, queue } = await queueSweep(t, [1, 2]);
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
    '0.5',
    '--queue',
    redis.url,
    '--data',
    data,
    '--json',
  ];
  const first = start(sweepArgs);
  procs.push(first);
  await until(async () => (await queue.getJobCounts('waiting')).waiting === 4, 30_000);
  // A duplicate delivery: the same (sweep, layout, repeat) a second time, under another job id.
  const [one] = await queue.getJobs(['waiting'], 0, 0, true);
  await queue.add('sim-rollout', one.data, { jobId: 'duplicate-of-one' });
  const worker = startInProcess(['sim', 'worker', '--queue', redis.url]);
  procs.push(worker);
  await until(() => storedHashes(data).rows >= 1, 60_000);
  first.child.kill('SIGKILL');
  await first.exited;
  // The worker goes on: its results wait in Redis for a coordinator.
  await worker.waitFor(/: valid \(/, 5, 60_000);
  assert.ok(storedHashes(data).rows < 4, 'the first coordinator died before collecting everything');
  const second = await runTandem(sweepArgs);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, /Resuming sweep \S+ \(session 1\): \d of 4 rollouts already stored/);
  const out = JSON.parse(second.stdout);
  assert.equal(out.session, 1);
  assert.equal(out.rollouts, 4);
  const got = storedHashes(data);
  assert.equal(got.sessions, 1, 'resumed, not started again');
  assert.equal(got.rows, 4, 'five results (one duplicated) and two coordinators: four rows');
  assert.equal(got.hashes.size, 4);
  const left = await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
  assert.deepEqual(Object.values(left), [0, 0, 0, 0, 0], 'every collected job left Redis');
});

test('a model whose bytes in Redis do not match its hash ends as an invalid rollout saying so; a job naming a file is refused', async (t) => {
  const { dir, file, data, redis, procs, client, queue } = await queueSweep(t, [1]);
  const model = buildLinearPolicyModel({ horizon: 5, cameras: [] });
  const modelFile = join(dir, 'model.onnx');
  writeFileSync(modelFile, model.bytes);
  const coordinator = startInProcess([
    'sim',
    'sweep',
    '--layouts',
    file,
    '--policy',
    `onnx:${modelFile}`,
    '--seconds',
    '0.3',
    '--queue',
    redis.url,
    '--data',
    data,
    '--json',
  ]);
  procs.push(coordinator);
  await until(async () => (await queue.getJobCounts('waiting')).waiting === 1, 30_000);
  const [job] = await queue.getJobs(['waiting'], 0, 0, true);
  const sha = (job.data as { policy: { sha256: string } }).policy.sha256;
  // The weights and the layout set expire a week after the sweep that put them, not never.
  for (const key of [blobKey(sha), layoutSetKey((job.data as { layoutSetSha256: string }).layoutSetSha256)]) {
    const ttl = await client.ttl(key);
    assert.ok(ttl > BLOB_TTL_S - 600 && ttl <= BLOB_TTL_S, `${key} expires in ${ttl} s`);
  }
  await client.set(blobKey(sha), Buffer.from('not the model'));
  // A hostile job: a policy path from the job itself.
  await queue.add(
    'sim-rollout',
    { ...job.data, sweepId: 'hostile', policy: { kind: 'spec', spec: 'onnx:/etc/passwd' } },
    { jobId: 'hostile-0-0', attempts: 3 },
  );
  procs.push(startInProcess(['sim', 'worker', '--queue', redis.url]));
  assert.equal(await coordinator.exited, 0, coordinator.stderr());
  const out = JSON.parse(coordinator.stdout());
  assert.equal(out.invalid, 1);
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    const [row] = store.listRollouts({});
    assert.equal(row.status, 'invalid');
    assert.equal(row.outcome, 'worker-failed');
    assert.match(
      row.statusReason ?? '',
      /^sweep job failed on 1 attempt: The ONNX model in the queue's store under [0-9a-f]{12}… hashes to [0-9a-f]{12}…: its bytes were changed or damaged/,
    );
    assert.equal(row.progress, null, 'never scored');
  } finally {
    store.close();
  }
  await until(async () => (await queue.getJobCounts('failed')).failed === 1, 30_000);
  const [hostile] = await queue.getJobs(['failed'], 0, 0, true);
  assert.equal(hostile.id, 'hostile-0-0');
  assert.match(
    hostile.failedReason,
    /a worker opens only code:NAME and ws:\/\/ specs, and ONNX models by hash, never a path from a job/,
  );
  assert.equal(hostile.attemptsMade, 1, 'a refused payload is not retried');
});

test('an unreachable Redis, a refused password and a queue of another tandem version: one sentence each, no sweep stored', async (t) => {
  const { dir, file, data } = setup([1]);
  const secured = await startRedisServer({ password: 's3cr3t-pw' });
  const plain = await startRedisServer();
  t.after(async () => {
    await secured.stop();
    await plain.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const sweep = (url: string) =>
    runTandem([
      'sim',
      'sweep',
      '--layouts',
      file,
      '--policy',
      'code:hold',
      '--seconds',
      '0.3',
      '--queue',
      url,
      '--data',
      data,
    ]);
  const closedPort = (await startRedisServer()) as RedisServer;
  await closedPort.stop();
  const cases: [string, RegExp][] = [
    [
      `redis://127.0.0.1:${closedPort.port}`,
      new RegExp(
        `^Cannot reach Redis at redis://127\\.0\\.0\\.1:${closedPort.port}/0 \\(.*ECONNREFUSED.*\\); start redis-server there or check --queue\\.\\n$`,
      ),
    ],
    [
      `redis://:bad-pw-x@127.0.0.1:${secured.port}`,
      /^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 refused the password in --queue; give the right one as redis:\/\/:PASSWORD@HOST:PORT\.\n$/,
    ],
    [
      `redis://127.0.0.1:${secured.port}`,
      /^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 needs a password; give it as redis:\/\/:PASSWORD@HOST:PORT\.\n$/,
    ],
  ];
  for (const [url, sentence] of cases) {
    const r = await sweep(url);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, sentence);
    assert.doesNotMatch(r.stderr, /bad-pw-x|s3cr3t-pw/, 'the password is never printed');
  }
  // A queue stamped by another tandem, still holding its job.
  const { client, queue, close } = await queueFor(plain);
  try {
    await client.set(queueVersionKey(), '0.0.1-other');
    await queue.add('sim-rollout', { tandemVersion: '0.0.1-other' }, { jobId: 'old-0-0' });
    const r = await sweep(plain.url);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      `The queue at redis://127.0.0.1:${plain.port}/0 holds 1 job of tandem 0.0.1-other; this is tandem ${TANDEM_VERSION}: let tandem 0.0.1-other finish them, or use another database (redis://HOST:PORT/1).\n`,
    );
    const w = await runTandem(['sim', 'worker', '--queue', plain.url], { timeoutMs: 30_000 });
    assert.equal(w.code, 2, w.stderr);
    assert.equal(
      w.stderr,
      `The queue at redis://127.0.0.1:${plain.port}/0 holds jobs of tandem 0.0.1-other; this worker is tandem ${TANDEM_VERSION}: start a tandem 0.0.1-other worker for them.\n`,
    );
    assert.deepEqual((await queue.getJobCounts('waiting')).waiting, 1, "the other version's job is left alone");
  } finally {
    await close();
  }
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    assert.deepEqual(store.listSessions({}), [], 'no sweep was started');
  } finally {
    store.close();
  }
});

test('Ctrl-C on the coordinator stops the sweep as on one machine: finished rollouts stay stored (recorded, with their files), unstarted jobs leave the queue, exit 130', async (t) => {
  const { dir, file, data, redis, procs, client, queue } = await queueSweep(t, [1, 2, 3]);
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
    '2',
    '--queue',
    redis.url,
    '--data',
    data,
    '--record',
    join(dir, 'episodes'),
    '--json',
  ];
  const worker = startInProcess(['sim', 'worker', '--queue', redis.url]);
  procs.push(worker);
  await worker.waitFor(/rollout thread/);
  const coordinator = startInProcess(sweepArgs);
  procs.push(coordinator);
  await until(() => storedHashes(data).rows >= 1, 90_000);
  coordinator.interrupt();
  assert.equal(await coordinator.exited, 130, coordinator.stderr());
  const out = JSON.parse(coordinator.stdout());
  assert.equal(out.stopped, true);
  assert.ok(out.rollouts >= 1 && out.rollouts < 6, `${out.rollouts} of 6 stored`);
  assert.equal(storedHashes(data).rows, out.rollouts, 'what it reports is what is stored');
  assert.equal(out.episodeFiles, out.rollouts, 'each stored rollout has its file');
  for (const [key, ep] of storedEpisodes(data)) assert.equal(ep.state, 'finished', key);
  // The worker stops the rollout it was running within a second; a stopped rollout leaves no recording.
  await until(async () => (await client.keys('tandem:recording:*')).length === 0, 10_000);
  const left = await queue.getJobCounts('waiting', 'delayed', 'prioritized');
  assert.deepEqual(Object.values(left), [0, 0, 0], 'no job of the stopped sweep is left for a worker to start');
  // Its session ended: the same command starts a new sweep rather than resuming this one.
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    assert.notEqual(store.getSession(out.session)?.endedAt, null);
  } finally {
    store.close();
  }
});

/** Each stored rollout's episode file (layout/repeat → file or null), and the recordings' state and link. */
function storedEpisodes(data: string): Map<string, { file: string | null; state?: string; linked?: boolean }> {
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    return new Map(
      store.listRollouts({}).map((r) => {
        const rec = r.episodeFile === null ? undefined : store.findRecordingByFile(r.episodeFile);
        return [
          `${r.layoutIndex}/${r.repeatIndex}`,
          { file: r.episodeFile, state: rec?.state, linked: rec ? rec.rolloutId === r.id : undefined },
        ];
      }),
    );
  } finally {
    store.close();
  }
}

/** An episode's messages without what depends on when its file was opened (header stamps, absolute log times). */
function comparable(ep: IndexedEpisode): Record<string, unknown[]> {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v as ArrayLike<unknown>, strip);
    if (typeof v !== 'object' || v === null) return v;
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => k !== 'header' && k !== 'stamp')
        .map(([k, x]) => [k, strip(x)]),
    );
  };
  const first = [...ep.byTopic.values()]
    .flat()
    .reduce((m, x) => (x.logTime < m ? x.logTime : m), BigInt(Number.MAX_SAFE_INTEGER) * 1000n);
  return Object.fromEntries(
    [...ep.byTopic]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([topic, list]) => [topic, list.map((m) => ({ dt: m.logTime - first, message: strip(m.message) }))]),
  );
}

test('a queued sweep with --record writes one episode file per rollout, message for message the one a sweep on this machine writes, and leaves no recording in Redis', async (t) => {
  const { dir, file, data, redis, procs, client } = await queueSweep(t, [1, 2]);
  // A policy that moves the arms, so the joint states say something.
  const sweepArgs = [
    'sim',
    'sweep',
    '--layouts',
    file,
    '--policy',
    'code:bottles-in-the-bin',
    '--seconds',
    '2',
    '--json',
  ];
  const local = await runTandem([
    ...sweepArgs,
    '--workers',
    '1',
    '--data',
    join(dir, 'local'),
    '--record',
    join(dir, 'local-episodes'),
  ]);
  assert.equal(local.code, 0, local.stderr);
  const worker = startInProcess(['sim', 'worker', '--queue', redis.url]);
  procs.push(worker);
  const queued = await runTandem([
    ...sweepArgs,
    '--queue',
    redis.url,
    '--data',
    data,
    '--record',
    join(dir, 'episodes'),
  ]);
  assert.equal(queued.code, 0, queued.stderr);
  const out = JSON.parse(queued.stdout);
  assert.equal(out.rollouts, 2);
  assert.equal(out.episodeFiles, 2);
  assert.equal(out.withoutEpisodeFile, 0);
  assert.equal(readdirSync(join(dir, 'episodes')).length, 2, 'one file per rollout');
  const mine = storedEpisodes(data);
  const theirs = storedEpisodes(join(dir, 'local'));
  assert.deepEqual([...mine.keys()].sort(), ['0/0', '1/0']);
  for (const [key, ep] of mine) {
    assert.equal(ep.state, 'finished', key);
    assert.equal(ep.linked, true, `${key}: the recording is linked to its rollout`);
    const a = await readIndexed(ep.file!);
    const b = await readIndexed(theirs.get(key)!.file!);
    const count = (e: IndexedEpisode) =>
      Object.fromEntries([...e.byTopic].map(([topic, list]) => [topic, list.length]).sort());
    assert.deepEqual(count(a), count(b), `${key}: messages per topic`);
    assert.equal(a.byTopic.get(TOPICS.jointCommands)!.length, 100, '2 s at 50 Hz');
    const last = (e: IndexedEpisode) => e.byTopic.get(TOPICS.jointStates)!.at(-1)!.message;
    assert.deepEqual(comparable(a), comparable(b), `${key}: every message, and when it came in the episode`);
    assert.deepEqual(last(a).position, last(b).position, `${key}: the final joint state`);
    assert.notDeepEqual(last(a).position, a.byTopic.get(TOPICS.jointStates)![0].message.position, 'the arms moved');
    // Everything but when the file was opened.
    const meta = (e: IndexedEpisode) =>
      new Map([...e.metadata.get('tandem.episode')!].filter(([k]) => k !== 'unix_offset_s'));
    assert.deepEqual(meta(a), meta(b), `${key}: what ran, on what`);
  }
  assert.deepEqual(await client.keys('tandem:recording:*'), [], 'each recording left Redis once its file was written');
});

test('a resumed recording sweep writes the files of what it collects; a recording changed, gone or refused as too big leaves its rollout stored without a file, and one sentence says why', async (t) => {
  const { dir, file, data, redis, procs, client, queue } = await queueSweep(t, [1, 2, 3]);
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
    '0.5',
    '--queue',
    redis.url,
    '--data',
    data,
    '--record',
    join(dir, 'episodes'),
    '--json',
  ];
  const first = start(sweepArgs);
  procs.push(first);
  await until(async () => (await queue.getJobCounts('waiting')).waiting === 6, 30_000);
  first.child.kill('SIGKILL');
  await first.exited;
  assert.ok(
    (await queue.getJobs(['waiting'], 0, -1, true)).every((j) => (j.data as { record?: boolean }).record === true),
    'each job asks its worker to record',
  );
  procs.push(startInProcess(['sim', 'worker', '--queue', redis.url]));
  await until(async () => (await queue.getJobCounts('completed')).completed === 6, 60_000);
  const shaOf = new Map<string, string>();
  const jobOf = new Map<string, string>();
  for (const job of await queue.getJobs(['completed'], 0, -1, true)) {
    const result = job.returnvalue as SimJobResult;
    assert.equal(result.kind, 'rollout');
    assert.ok(
      result.kind === 'rollout' &&
        result.rollout.recorded === undefined &&
        result.recording &&
        'sha256' in result.recording,
      'the result names the recording; the calls are not in it',
    );
    assert.ok(JSON.stringify(result).length < 8000, `a small result (${JSON.stringify(result).length} characters)`);
    const { sha256, bytes } = result.recording as { sha256: string; bytes: number };
    assert.equal((await client.getBuffer(recordingKey(sha256)))?.length, bytes);
    const ttl = await client.ttl(recordingKey(sha256));
    assert.ok(
      ttl > BLOB_TTL_S - 600 && ttl <= BLOB_TTL_S,
      `the recording expires as an uncollected job does (in ${ttl} s)`,
    );
    const { layoutIndex, repeat } = job.data as { layoutIndex: number; repeat: number };
    shaOf.set(`${layoutIndex}/${repeat}`, sha256);
    jobOf.set(`${layoutIndex}/${repeat}`, String(job.id));
  }
  assert.equal(new Set(shaOf.values()).size, 6, 'each rollout its own blob, though code:hold moves no arm');
  await client.set(recordingKey(shaOf.get('0/0')!), Buffer.from('changed in Redis'));
  await client.del(recordingKey(shaOf.get('1/0')!));
  // What a worker returns for a recording over the limit: no blob, the sentence.
  const tooBig =
    'its recording packs to 300.0 MiB, over the 256 MiB a queued rollout may carry; run it in a sweep on one machine (--workers) to record it, or shorten --seconds.';
  const jobKey = `bull:${SIM_QUEUE_NAME}:${jobOf.get('2/0')!}`;
  const result = JSON.parse((await client.hget(jobKey, 'returnvalue'))!) as Record<string, unknown>;
  await client.hset(jobKey, 'returnvalue', JSON.stringify({ ...result, recording: { refused: tooBig } }));
  await client.del(recordingKey(shaOf.get('2/0')!));
  const second = await runTandem(sweepArgs);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, /Resuming sweep \S+ \(session 1\): 0 of 6 rollouts already stored/);
  assert.match(
    second.stderr,
    /\njob \S+-0-0 \(layout 0 repeat 0, code:hold\): stored without its episode file: its recording in the queue's store under [0-9a-f]{12}… hashes to [0-9a-f]{12}…: its bytes were changed or damaged\.\n/,
  );
  assert.match(
    second.stderr,
    /\njob \S+-1-0 \(layout 1 repeat 0, code:hold\): stored without its episode file: its recording [0-9a-f]{12}… is not in the queue's store \(expired, or removed\)\.\n/,
  );
  assert.ok(
    second.stderr.includes(
      `\njob ${jobOf.get('2/0')!} (layout 2 repeat 0, code:hold): stored without its episode file: ${tooBig}\n`,
    ),
    second.stderr,
  );
  const out = JSON.parse(second.stdout);
  assert.equal(out.rollouts, 6);
  assert.equal(out.episodeFiles, 3);
  assert.equal(out.withoutEpisodeFile, 3);
  const episodes = storedEpisodes(data);
  assert.equal(episodes.size, 6, 'every rollout stored');
  for (const key of ['0/0', '1/0', '2/0']) assert.equal(episodes.get(key)!.file, null, key);
  const files: string[] = [];
  for (const key of ['0/1', '1/1', '2/1']) {
    const written = episodes.get(key)!;
    assert.equal(written.state, 'finished', key);
    assert.equal(written.linked, true, key);
    assert.equal((await readIndexed(written.file!)).byTopic.get(TOPICS.jointCommands)!.length, 25, '0.5 s at 50 Hz');
    files.push(written.file!.split('/').at(-1)!);
  }
  assert.deepEqual(readdirSync(join(dir, 'episodes')).sort(), files.sort(), 'no file for the three it could not write');
  assert.deepEqual(await client.keys('tandem:recording:*'), [], 'no recording left behind');
  const left = await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
  assert.deepEqual(Object.values(left), [0, 0, 0, 0, 0]);
});
