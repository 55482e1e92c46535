/**
 * Whether and where the station serves its Foxglove live view: `tandem station --foxglove-port N
 * [--foxglove-host ADDR --foxglove-allow-remote]`, or the same in the environment
 * (TANDEM_FOXGLOVE_PORT, TANDEM_FOXGLOVE_HOST, TANDEM_FOXGLOVE_ALLOW_REMOTE=1; and
 * TANDEM_FOXGLOVE_ORIGINS, comma-separated browser origins let in besides the Foxglove and
 * Lichtblick apps', e.g. a self-hosted Lichtblick) — the way
 * `npm start` and the Electron shell's main process get it. Nothing set: no port is opened.
 */
import { UserError } from './command.js';
import { DEFAULT_FOXGLOVE_ORIGINS, isLoopbackHost } from '../server/foxglove-live.js';

export interface FoxgloveListen {
  readonly port: number;
  readonly host: string;
  readonly allowRemote: boolean;
  /** Browser origins let in (requests without one always are). */
  readonly allowedOrigins: readonly string[];
}

export interface FoxgloveFlags {
  readonly port?: string;
  readonly host?: string;
  readonly allowRemote?: boolean;
}

const ENV = {
  port: 'TANDEM_FOXGLOVE_PORT',
  host: 'TANDEM_FOXGLOVE_HOST',
  allowRemote: 'TANDEM_FOXGLOVE_ALLOW_REMOTE',
  origins: 'TANDEM_FOXGLOVE_ORIGINS',
} as const;

function extraOrigins(env: NodeJS.ProcessEnv): string[] {
  const text = env[ENV.origins] ?? '';
  const origins = text
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const o of origins) {
    if (o !== 'file://' && !/^https?:\/\/[^/\s]+$/.test(o))
      throw new UserError(
        `${ENV.origins} lists '${o}', which is not an origin; give scheme://host[:port] with no path, e.g. https://lichtblick.example.org.`,
      );
  }
  return origins;
}

/** The live view's address from the flags, else the environment; undefined when neither asks for one. */
export function foxgloveListenOf(flags: FoxgloveFlags, env: NodeJS.ProcessEnv): FoxgloveListen | undefined {
  const portText = flags.port ?? env[ENV.port];
  const host = flags.host ?? env[ENV.host];
  const allowRemote = flags.allowRemote === true || env[ENV.allowRemote] === '1';
  if (portText === undefined || portText === '') {
    if (host !== undefined || flags.allowRemote)
      throw new UserError(
        '--foxglove-host and --foxglove-allow-remote only apply with --foxglove-port N (the live view is off without it).',
      );
    return undefined;
  }
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535)
    throw new UserError(
      `--foxglove-port (${ENV.port}) must be a port number from 0 to 65535 (0: any free port; Foxglove's usual is 8765), not '${portText}'.`,
    );
  // Said before anything starts (the rig, the store): the server refuses it again itself.
  if (host !== undefined && !isLoopbackHost(host) && !allowRemote)
    throw new UserError(
      `The Foxglove live view binds loopback only; ${host} is not loopback. Use 127.0.0.1, or add --foxglove-allow-remote (${ENV.allowRemote}=1) knowing anyone on that network can then read the arm state.`,
    );
  return {
    port,
    host: host ?? '127.0.0.1',
    allowRemote,
    allowedOrigins: [...DEFAULT_FOXGLOVE_ORIGINS, ...extraOrigins(env)],
  };
}

/** The same choice as environment variables, for a child process (the Electron shell). */
export function foxgloveEnv(listen: FoxgloveListen | undefined): Record<string, string> {
  if (!listen) return {};
  const extra = listen.allowedOrigins.filter((o) => !DEFAULT_FOXGLOVE_ORIGINS.includes(o));
  return {
    [ENV.port]: String(listen.port),
    [ENV.host]: listen.host,
    ...(listen.allowRemote ? { [ENV.allowRemote]: '1' } : {}),
    ...(extra.length ? { [ENV.origins]: extra.join(',') } : {}),
  };
}
