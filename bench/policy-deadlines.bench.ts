/**
 * Policy deadlines benchmark (npm run bench -- deadlines): how long the runtime takes to give up
 * on a policy, against the deadline it was given and a same-run baseline. These were duration
 * asserts in unit tests (a timed unit test fails when the machine is busy, and proves little when
 * it is idle); the tests keep the behaviour (which error, at which step), this keeps the timing.
 *  1. Chunk executor: a policy whose inference takes 10 s, deadline 150 ms, prefetch 2. The
 *     takeover step should reject after about the deadline's remainder, not the inference's 10 s.
 *     Baseline: the same takeover step with a policy that answers at once.
 *  2. openpi client: connecting to a closed port with connectTimeoutMs 400. Refused connections
 *     are retried until the deadline (a server still starting is reached), so this should take
 *     ≈ 400 ms, not fail at the first refusal. Baseline: connecting to a live (fake) server.
 */
import type { EpisodeContext, Observation, Policy } from '../src/policy/contract.js';
import { createChunkExecutor } from '../src/policy/chunk-executor.js';
import { OpenpiClientPolicy } from '../src/policy/openpi/client.js';
import { yamRigModel } from '../src/rig/yam.js';
import { startFakeOpenpiServer } from '../test/policy/openpi-fakes.js';

const HZ = 50;
const ctx: EpisodeContext = { seed: 1, prompt: 'bench', rigModel: yamRigModel(), controlHz: HZ };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const observeAt = (step: number) => async (): Promise<Observation> => ({
  timeS: step / HZ,
  state: new Float32Array(14),
  images: {},
  prompt: 'bench',
});

function policyTaking(slowMs: (call: number) => number): Policy {
  let calls = 0;
  return {
    info: {
      name: 'bench:slow',
      checkpointSha256: '0'.repeat(64),
      actionHorizon: 10,
      cameras: [],
      needsPrivilegedState: false,
    },
    async reset() {
      calls = 0;
    },
    async infer() {
      const wait = slowMs(calls++);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait).unref());
      return { horizon: 10, actions: new Float32Array(10 * 14) };
    },
  };
}

/** Time of the takeover step (5), ms, for a policy whose second inference takes `secondMs`. */
async function takeoverMs(secondMs: number, deadlineMs: number): Promise<number> {
  const exec = createChunkExecutor(
    policyTaking((call) => (call === 1 ? secondMs : 0)),
    { prefetchSteps: 2, replanEverySteps: 5, deadlineMs },
  );
  await exec.reset(ctx);
  for (let s = 0; s < 5; s++) await exec.step(s, s / HZ, observeAt(s));
  const t0 = performance.now();
  try {
    await exec.step(5, 5 / HZ, observeAt(5));
  } catch {
    // the timeout is the point
  }
  return performance.now() - t0;
}

async function executorDeadline(): Promise<void> {
  console.log('\n-- 1. chunk executor: takeover step with a 10 s inference, deadline 150 ms (median of 7) --');
  const baseline: number[] = [];
  const late: number[] = [];
  for (let i = 0; i < 7; i++) {
    baseline.push(await takeoverMs(0, 150));
    late.push(await takeoverMs(10_000, 150));
  }
  const b = median(baseline);
  const l = median(late);
  console.log(`policy answers at once (baseline)   ${b.toFixed(2)} ms`);
  console.log(
    `policy takes 10 s → timeout after   ${l.toFixed(1)} ms  (${(l / 150).toFixed(2)}× the deadline, ${(l / 10_000).toFixed(3)}× the inference)`,
  );
}

async function connectDeadline(): Promise<void> {
  console.log('\n-- 2. openpi client: connect timeout 400 ms to a closed port (median of 5) --');
  const live = await startFakeOpenpiServer('hang');
  const dead = await startFakeOpenpiServer('hang');
  const deadUrl = dead.url;
  await dead.close();
  const up: number[] = [];
  const refused: number[] = [];
  try {
    for (let i = 0; i < 5; i++) {
      let t0 = performance.now();
      const c = await OpenpiClientPolicy.connect({ url: live.url, connectTimeoutMs: 400 });
      up.push(performance.now() - t0);
      await c.close();
      t0 = performance.now();
      await OpenpiClientPolicy.connect({ url: deadUrl, connectTimeoutMs: 400 }).catch(() => undefined);
      refused.push(performance.now() - t0);
    }
  } finally {
    await live.close();
  }
  console.log(`connect to a live server (baseline) ${median(up).toFixed(2)} ms`);
  console.log(
    `refused until the deadline          ${median(refused).toFixed(1)} ms  (${(median(refused) / 400).toFixed(2)}× the 400 ms deadline, ${(median(refused) / median(up)).toFixed(0)}× the baseline)`,
  );
}

await executorDeadline();
await connectDeadline();
