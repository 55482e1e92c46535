/**
 * `tandem sim env-worker`: env threads on this machine for `tandem sim serve-env --queue`
 * servers elsewhere (src/sim/env/env-worker-host.ts, docs/env-server.md).
 */
import { cpus } from 'node:os';
import { intOption, requireString, UserError, type CliCommand } from '../command.js';
import { parseQueueUrl, QueueError } from '../../sim/queue/connection.js';

const envWorker: CliCommand = {
  path: ['sim', 'env-worker'],
  summary: 'run environment threads for serve-env --queue servers, on any machine',
  help: `Usage: tandem sim env-worker --queue redis://HOST:PORT[/DB] [--threads T]

Offers T env slots through the queue's Redis. A 'tandem sim serve-env --queue' server claims
them: each claimed slot runs one env worker thread here (that server's task, rate, cameras and
randomization), stepping its share of every connection's environments, until the server closes
or goes quiet for 5 s; then the slot is offered again. Runs until SIGTERM or Ctrl-C. Only
workers of the server's tandem version are claimed. See docs/env-server.md.

  --queue URL     the Redis the servers use (a password as redis://:PASSWORD@HOST:PORT)
  --threads T     slots offered (default: this machine's cores, ${cpus().length})`,
  options: { queue: { type: 'string' }, threads: { type: 'string' } },
  async run(args, io) {
    let address;
    try {
      address = parseQueueUrl(requireString(args, 'queue'));
    } catch (e) {
      if (e instanceof QueueError) throw new UserError(e.message);
      throw e;
    }
    const slots = intOption(args, 'threads', cpus().length, 1, 256);
    const { runEnvWorkerHost } = await import('../../sim/env/env-worker-host.js');
    let summary;
    try {
      summary = await runEnvWorkerHost({ address, slots, signal: io.signal, log: (line) => io.err(`${line}\n`) });
    } catch (e) {
      if (e instanceof QueueError) throw new UserError(e.message);
      throw e;
    }
    io.err(`Env worker stopped: ${summary.sessions} server session${summary.sessions === 1 ? '' : 's'} served.\n`);
    return 0;
  },
};

export const commands: CliCommand[] = [envWorker];
