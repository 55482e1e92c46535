/**
 * Whether and where the station serves its Foxglove live view: `tandem station --foxglove-port N
 * [--foxglove-host ADDR --foxglove-allow-remote]`, or the same in the environment
 * (TANDEM_FOXGLOVE_PORT, TANDEM_FOXGLOVE_HOST, TANDEM_FOXGLOVE_ALLOW_REMOTE=1) — the way
 * `npm start` and the Electron shell's main process get it. Nothing set: no port is opened.
 */
import { UserError } from './command.js';
import { isLoopbackHost } from '../server/foxglove-live.js';

export interface FoxgloveListen {
  readonly port: number;
  readonly host: string;
  readonly allowRemote: boolean;
}

export interface FoxgloveFlags {
  readonly port?: string;
  readonly host?: string;
  readonly allowRemote?: boolean;
}

const ENV = { port: 'TANDEM_FOXGLOVE_PORT', host: 'TANDEM_FOXGLOVE_HOST', allowRemote: 'TANDEM_FOXGLOVE_ALLOW_REMOTE' } as const;

/** The live view's address from the flags, else the environment; undefined when neither asks for one. */
export function foxgloveListenOf(flags: FoxgloveFlags, env: NodeJS.ProcessEnv): FoxgloveListen | undefined {
  const portText = flags.port ?? env[ENV.port];
  const host = flags.host ?? env[ENV.host];
  const allowRemote = flags.allowRemote === true || env[ENV.allowRemote] === '1';
  if (portText === undefined || portText === '') {
    if (host !== undefined || flags.allowRemote) throw new UserError('--foxglove-host and --foxglove-allow-remote only apply with --foxglove-port N (the live view is off without it).');
    return undefined;
  }
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new UserError(`--foxglove-port (${ENV.port}) must be a port number from 0 to 65535 (0: any free port; Foxglove's usual is 8765), not '${portText}'.`);
  // Said before anything starts (the rig, the store): the server refuses it again itself.
  if (host !== undefined && !isLoopbackHost(host) && !allowRemote) throw new UserError(`The Foxglove live view binds loopback only; ${host} is not loopback. Use 127.0.0.1, or add --foxglove-allow-remote (${ENV.allowRemote}=1) knowing anyone on that network can then read the arm state.`);
  return { port, host: host ?? '127.0.0.1', allowRemote };
}

/** The same choice as environment variables, for a child process (the Electron shell). */
export function foxgloveEnv(listen: FoxgloveListen | undefined): Record<string, string> {
  if (!listen) return {};
  return { [ENV.port]: String(listen.port), [ENV.host]: listen.host, ...(listen.allowRemote ? { [ENV.allowRemote]: '1' } : {}) };
}
