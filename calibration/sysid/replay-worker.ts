/**
 * One sysid replay worker: reads the episodes it is given once, then replays one (episode,
 * calibration) job at a time and posts the residuals back (transferred, not copied).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { yamRigModel } from '../../src/rig/yam.js';
import { readEpisodeTrajectory, type EpisodeTrajectory } from './episode-trajectory.js';
import { replayEpisode } from './replay.js';
import type { ReplayJob, ReplayReply, ReplayWorkerInit } from './replay-pool.js';

const init = workerData as ReplayWorkerInit;
const port = parentPort!;
const model = yamRigModel();
const episodes: EpisodeTrajectory[] = [];
for (const f of init.files) episodes.push(await readEpisodeTrajectory(f, model, { layoutSets: init.layoutSets }));
port.on('message', (job: ReplayJob) => {
  void (async () => {
    let reply: ReplayReply;
    try {
      const r = await replayEpisode(episodes[job.episode], model, job.calibration, { seconds: job.seconds });
      reply = {
        id: job.id,
        residuals: r.residuals,
        holdingResiduals: r.holdingResiduals,
        lostObject: r.lostObject,
        rmsRad: r.rmsRad,
        byPhase: r.byPhase,
        problem: r.problem,
      };
    } catch (e) {
      reply = { id: job.id, residuals: new Float64Array(0), rmsRad: [], problem: (e as Error).message };
    }
    port.postMessage(reply, [
      reply.residuals.buffer as ArrayBuffer,
      ...(reply.holdingResiduals ? [reply.holdingResiduals.buffer as ArrayBuffer] : []),
    ]);
  })();
});
port.postMessage({ ready: true });
