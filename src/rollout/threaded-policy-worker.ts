/** The worker side of ThreadedPolicy: opens the policy a spec names (in this thread) and answers reset/infer/close. */
import { parentPort, workerData } from 'node:worker_threads';
import type { Policy } from '../policy/contract.js';
import { openPolicyHere } from './policy-registry.js';
import type { FromPolicyWorker, PolicyWarmUpModule, ToPolicyWorker } from './threaded-policy.js';

const port = parentPort!;
const { spec, cwd, warmUp } = workerData as { spec: string; cwd: string; warmUp?: string };
const send = (m: FromPolicyWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);
const failure = (e: unknown): string => (e instanceof Error ? e.message : String(e));

let policy: Policy;
if (warmUp) {
  // Throwaway instances only; a warm-up that fails costs latency, never the policy (its real run says what is wrong).
  try {
    await ((await import(warmUp)) as PolicyWarmUpModule).warmUpPolicy(spec, () => openPolicyHere(spec, { cwd }));
  } catch {
    // nothing: the policy opens below as it would have without one
  }
  // The engine queues work of its own behind a warm-up (≈0.5 s after a sim episode, seen as the
  // first reset taking that long): let it run now, while no one waits for an answer.
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (performance.now() - t < 5) break;
  }
}
try {
  policy = await openPolicyHere(spec, { cwd });
  send({ type: 'ready', info: policy.info });
} catch (e) {
  send({ type: 'open-failed', message: failure(e) });
  process.exit(0);
}

port.on('message', (m: ToPolicyWorker) => {
  const reply = (p: Promise<FromPolicyWorker>): void => {
    p.then(
      (r) => send(r, r.type === 'chunk' ? [r.chunk.actions.buffer as ArrayBuffer] : []),
      (e) => send({ type: 'error', id: m.id, message: failure(e), name: e instanceof Error ? e.name : 'Error' }),
    );
  };
  if (m.type === 'reset') reply(policy.reset(m.ctx).then(() => ({ type: 'done', id: m.id })));
  else if (m.type === 'infer') reply(policy.infer(m.obs).then((chunk) => ({ type: 'chunk', id: m.id, chunk })));
  else if (m.type === 'close') reply((policy.close?.() ?? Promise.resolve()).then(() => ({ type: 'done', id: m.id })));
});
