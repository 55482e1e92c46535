/**
 * One sweep worker thread: opens the policy once, then runs the rollouts the sweep hands it,
 * one at a time, and reports each result (see sweep.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getTask } from '../tasks/registry.js';
import { openPolicy } from '../rollout/policy-registry.js';
import type { Policy } from '../policy/contract.js';
import { runSimRollout, simRolloutCounts } from './sim-rollout.js';
import { ChromiumRenderer } from './render/chromium-renderer.js';
import type { Renderer } from './render/renderer.js';
import type { FromWorker, SweepJob, ToWorker, WorkerInit } from './sweep.js';
import { RecordingRelay } from './recording-relay.js';

const init = workerData as WorkerInit;
const port = parentPort!;
const post = (m: FromWorker): void => port.postMessage(m);
let running: AbortController | undefined;
let queue: Promise<void> = Promise.resolve();
let policy: Policy | undefined;
/** One renderer per worker, for policies that take images (chromium starts on the first image). */
let renderer: Renderer | undefined;

async function run(job: SweepJob): Promise<void> {
  const task = getTask(init.layoutSet.task);
  const layout = init.layoutSet.layouts[job.layoutIndex];
  running = new AbortController();
  const relay = init.record ? new RecordingRelay() : undefined;
  const r = await runSimRollout({
    task,
    layout,
    policy: policy!,
    seed: job.seed,
    episodeSeconds: init.seconds,
    controlHz: init.controlHz,
    calibration: job.world?.calibration ?? init.calibration,
    placementSigma: job.world?.placement,
    look: job.world?.look,
    renderer,
    signal: running.signal,
    recording: relay,
  });
  const stopped = running.signal.aborted;
  running = undefined;
  if (stopped) {
    post({ type: 'stopped', job });
    return;
  }
  const e = r.episode;
  post({
    type: 'result',
    rollout: {
      job,
      tier: e.tier,
      status: e.status,
      outcome: e.outcome,
      reason: e.reason,
      error: e.error,
      progress: e.progress?.progress,
      counts: simRolloutCounts(e, task, layout),
      finalStateHash: e.finalStateHash,
      episodeSeconds: e.episodeSeconds,
      controlHz: e.controlHz,
      policyName: e.policyName,
      policyCheckpointSha256: e.policyCheckpointSha256,
      calibrationSha256: r.calibrationSha256,
      physicsSteps: r.physicsSteps,
      wallMs: r.wallMs,
      observations: e.observations,
      cameraFrames: r.cameraFrames,
      taskEvents: e.taskEvents,
      ...(relay ? { recorded: relay.calls } : {}),
    },
  });
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'job') {
    queue = queue
      .then(() => run(m.job))
      .catch((e: unknown) => post({ type: 'fatal', message: e instanceof Error ? e.message : String(e) }));
  } else if (m.type === 'stop') {
    running?.abort();
  } else {
    void queue.then(async () => {
      await policy?.close?.();
      await renderer?.close();
      port.close();
    });
  }
});

try {
  policy = await openPolicy(init.policySpec, { cwd: init.cwd });
  if (policy.info.cameras.length > 0) renderer = new ChromiumRenderer();
  post({ type: 'ready' });
} catch (e) {
  post({ type: 'fatal', message: e instanceof Error ? e.message : String(e) });
  port.close();
}
