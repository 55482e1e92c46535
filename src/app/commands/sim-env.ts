/**
 * `tandem sim serve-env`: the sim as N parallel RL environments for an external trainer
 * (src/sim/env, docs/env-server.md). This file reads the options and turns bad input into one sentence.
 */
import { EPISODE_CONTROL_HZ } from '../../rollout/run-episode.js';
import { intOption, numberOption, requireString, UserError, type CliCommand } from '../command.js';
import { isTaskId, getTask } from '../../tasks/registry.js';
import { TASK_IDS } from '../../tasks/types.js';
import { randomizeArg } from './sim.js';
import { isLoopbackHost } from '../../server/foxglove-live.js';
import { CAMERA_NAMES, type CameraName } from '../../policy/contract.js';
import { parseQueueUrl, QueueError, type QueueAddress } from '../../sim/queue/connection.js';

const serveEnv: CliCommand = {
  path: ['sim', 'serve-env'],
  summary: 'serve N sim environments of a task to an RL trainer (WebSocket + msgpack)',
  help: `Usage: tandem sim serve-env --task T --envs N [--port P] [--host H] [--api-key KEY] [--workers W] [--control-hz HZ] [--randomize FILE] [--cameras LIST] [--idle-seconds S] [--queue URL]

Serves N environments of task T on worker threads over a WebSocket (msgpack, arrays in openpi's
msgpack_numpy encoding; the protocol is docs/env-server.md). Each connection gets its own N
environments: 'reset {seed, tier?, layout?, options?}' → '{obs, info}', 'step {actions:
float32[N,14]}' → '{obs, reward[N], terminated[N], truncated[N], info}' with autoreset and the
task's events in info. Deterministic per seed. A Python client: clients/python/tandem_env.

  --task T            ${TASK_IDS.join(', ')}
  --envs N            environments per connection (1–1024)
  --port P            port (default 8765; 0 picks a free one and prints it)
  --host H            address to bind (default 127.0.0.1); another (e.g. 0.0.0.0) needs --api-key
  --api-key KEY       require 'Authorization: Api-Key KEY' of every trainer (default: $TANDEM_ENV_API_KEY, else none on loopback)
  --workers W         worker threads the environments are spread over (default min(N, 2))
  --control-hz HZ     steps per simulated second (default ${EPISODE_CONTROL_HZ}, the policy rate)
  --randomize FILE    domain randomization spec (docs/sim.md): each episode draws its world from its seed
  --cameras LIST      comma-separated sim cameras (${CAMERA_NAMES.join(', ')}) drawn into every
                      observation as obs.images[camera], uint8 [N, H, W, 3] (headless chromium, one per
                      worker); without it observations are the rig's 14-d state only
  --idle-seconds S    close a connection that sends nothing for S seconds (default 300)
  --queue URL         run the W workers on other machines instead of on threads here: claim W
                      slots of 'tandem sim env-worker --queue URL' hosts through this Redis
                      (redis://[:PASSWORD@]HOST:PORT[/DB]), waiting until W are there`,
  options: {
    task: { type: 'string' },
    envs: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string' },
    workers: { type: 'string' },
    'control-hz': { type: 'string' },
    randomize: { type: 'string' },
    'idle-seconds': { type: 'string' },
    cameras: { type: 'string' },
    queue: { type: 'string' },
  },
  async run(args, io) {
    const taskId = requireString(args, 'task');
    if (!isTaskId(taskId)) throw new UserError(`Unknown task '${taskId}'. Known tasks: ${TASK_IDS.join(', ')}.`);
    const task = getTask(taskId);
    const cameras = camerasArg(args.values.cameras);
    const envs = intOption(args, 'envs', undefined, 1, 1024);
    const port = intOption(args, 'port', 8765, 0, 65535);
    const workers = intOption(args, 'workers', Math.min(envs, 2), 1, 64);
    const controlHz = numberOption(args, 'control-hz', EPISODE_CONTROL_HZ, 1, 1000);
    const idleSeconds = numberOption(args, 'idle-seconds', 300, 0.1, 86_400);
    const host = typeof args.values.host === 'string' ? args.values.host : '127.0.0.1';
    const apiKey =
      typeof args.values['api-key'] === 'string' ? args.values['api-key'] : io.env.TANDEM_ENV_API_KEY || undefined;
    if (apiKey !== undefined && apiKey.length < 16)
      throw new UserError(
        '--api-key must be at least 16 characters (a guessable key is no lock): generate one, e.g. with openssl rand -hex 16.',
      );
    if (!isLoopbackHost(host) && apiKey === undefined) {
      throw new UserError(
        `Serving on ${host.slice(0, 100)} lets other machines run sims here, so it needs --api-key KEY (or $TANDEM_ENV_API_KEY); without one, serve on 127.0.0.1 (a trainer elsewhere can reach it over an SSH tunnel).`,
      );
    }
    const randomization = randomizeArg(args, io);
    const queue = typeof args.values.queue === 'string' ? queueArg(args.values.queue) : undefined;
    const { startEnvServer } = await import('../../sim/env/env-server.js');
    let server;
    try {
      server = await startEnvServer({
        task,
        envs,
        port,
        host,
        ...(apiKey !== undefined ? { apiKey } : {}),
        workers,
        controlHz,
        idleSeconds,
        cameras,
        ...(randomization
          ? { randomizationJson: randomization.canonicalJson, randomizationSha256: randomization.sha256 }
          : {}),
        ...(queue ? { queue, signal: io.signal } : {}),
        log: (line) => io.err(`${line}\n`),
      });
    } catch (e) {
      if (e instanceof QueueError) throw new UserError(e.message);
      if (io.signal.aborted) {
        io.out('Stopped.\n');
        return 130;
      }
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new UserError(`Port ${port} on ${host} is already in use; pick another with --port.`);
      if (code === 'EACCES')
        throw new UserError(`Not allowed to listen on port ${port}; pick a port above 1023 with --port.`);
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
        throw new UserError(`Cannot listen on host '${host}'; it is not an address of this machine.`);
      throw e;
    }
    io.out(
      `Serving ${envs} ${task.id} environment${envs === 1 ? '' : 's'} per connection on ${server.url} (${server.workers} worker thread${server.workers === 1 ? '' : 's'}${queue ? ` on env workers of ${queue.shown}` : ''}, ${controlHz} Hz${cameras.length > 0 ? `, cameras ${cameras.join(', ')}` : ''}${randomization ? `, randomized by ${randomization.sha256.slice(0, 12)}` : ''}) — stop with Ctrl-C.\n`,
    );
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.close();
    io.out('Stopped.\n');
  },
};

function queueArg(text: string): QueueAddress {
  try {
    return parseQueueUrl(text);
  } catch (e) {
    if (e instanceof QueueError) throw new UserError(e.message);
    throw e;
  }
}

/** --cameras a,b: known camera names, each once. */
function camerasArg(value: unknown): CameraName[] {
  if (value === undefined) return [];
  const names = String(value)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (names.length === 0) throw new UserError(`--cameras needs camera names: ${CAMERA_NAMES.join(', ')}.`);
  const out: CameraName[] = [];
  for (const n of names) {
    const cam = CAMERA_NAMES.find((c) => c === n);
    if (!cam)
      throw new UserError(
        `Unknown camera '${n.slice(0, 40)}' in --cameras; the sim's cameras are ${CAMERA_NAMES.join(', ')}.`,
      );
    if (!out.includes(cam)) out.push(cam);
  }
  return out;
}

export const commands: CliCommand[] = [serveEnv];
