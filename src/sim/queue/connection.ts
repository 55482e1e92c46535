/**
 * The Redis behind a sweep queue: its address from `--queue redis://HOST:PORT[/DB]`, and
 * connections that say in one sentence why they cannot be made (nothing listening, a refused
 * password) instead of retrying for ever, as a Redis client does by default.
 */
import { Redis } from 'ioredis';

/** A queue that cannot be used: one sentence an operator can act on. */
export class QueueError extends Error {
  constructor(
    message: string,
    /** Set when nothing answered at the address (as opposed to a refused password): trying again later may work. */
    readonly unreachable?: string,
  ) {
    super(message);
    this.name = 'QueueError';
  }
}

/** How often a connection that was up tries again once Redis is gone, ms. */
export const REDIS_RETRY_MS = 1000;

/** Why a socket could not reach Redis, in a few words ("connection refused"); undefined when the error is not about reaching it. */
export function unreachableReason(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  const words: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found',
    ETIMEDOUT: 'timed out',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    EPIPE: 'connection closed',
  };
  if (typeof code === 'string' && code in words) return words[code];
  for (const [c, w] of Object.entries(words)) if (message.includes(c)) return w;
  if (/Connection is closed|Stream isn't writeable|connect timed out|Socket closed unexpectedly/i.test(message))
    return 'connection closed';
  return undefined;
}

export interface QueueAddress {
  /** The URL as given (it may hold a password: never print it). */
  readonly url: string;
  /** redis://HOST:PORT/DB without user or password: for messages and the store. */
  readonly shown: string;
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username?: string;
  readonly password?: string;
}

/** Parses redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]; throws QueueError with one sentence. */
export function parseQueueUrl(text: string): QueueAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new QueueError(`--queue '${text}' is not an address; write redis://HOST:PORT or redis://HOST:PORT/DB.`);
  }
  if (url.protocol !== 'redis:')
    throw new QueueError(`--queue '${url.protocol}//…' is not a Redis address; write redis://HOST:PORT[/DB].`);
  if (url.hostname === '') throw new QueueError('--queue names no host; write redis://HOST:PORT[/DB].');
  const port = url.port === '' ? 6379 : Number(url.port);
  const path = url.pathname.replace(/^\//, '');
  const db = path === '' ? 0 : /^\d+$/.test(path) ? Number(path) : NaN;
  if (!Number.isSafeInteger(db) || db > 15)
    throw new QueueError(`--queue database '${path}' is not a Redis database number (0 to 15).`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    url: text,
    shown: `redis://${url.host}/${db}`,
    host,
    port,
    db,
    username: url.username === '' ? undefined : decodeURIComponent(url.username),
    password: url.password === '' ? undefined : decodeURIComponent(url.password),
  };
}

/** Why a connection attempt failed, in words. */
function describe(e: unknown, address: QueueAddress): string {
  const message = e instanceof Error ? e.message : String(e);
  if (/WRONGPASS|invalid password|invalid username-password/i.test(message)) {
    return `Redis at ${address.shown} refused the password in --queue; give the right one as redis://:PASSWORD@HOST:PORT.`;
  }
  if (/NOAUTH|Authentication required/i.test(message))
    return `Redis at ${address.shown} needs a password; give it as redis://:PASSWORD@HOST:PORT.`;
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|timed out|Connection is closed|EAI_AGAIN/i.test(message)) {
    return `Cannot reach Redis at ${address.shown} (${message.split('\n')[0]}); start redis-server there or check --queue.`;
  }
  return `Redis at ${address.shown} cannot be used: ${message.split('\n')[0]}.`;
}

/**
 * Opens one connection and checks it answers (PING, after AUTH and SELECT); throws QueueError.
 * Once up, the connection reconnects on its own (BullMQ needs that: a blip must not end a sweep).
 */
export async function connectRedis(address: QueueAddress, opts: { connectTimeoutMs?: number } = {}): Promise<Redis> {
  let connected = false;
  const client = new Redis({
    host: address.host,
    port: address.port,
    db: address.db,
    username: address.username,
    password: address.password,
    lazyConnect: true,
    // BullMQ's blocking commands wait as long as they must; it requires this.
    maxRetriesPerRequest: null,
    connectTimeout: opts.connectTimeoutMs ?? 5000,
    // A socket to a Redis that is gone never closes cleanly: its end is not waited for (ioredis holds the process 2 s by default).
    disconnectTimeout: 200,
    // Before the first answer: fail at once, with the sentence below. After: keep reconnecting at
    // a steady pace (redis-link.ts says once that Redis is gone, and once that it is back).
    retryStrategy: () => (connected ? REDIS_RETRY_MS : null),
  });
  // The socket's own error (ECONNREFUSED, WRONGPASS) arrives here; connect() then only says
  // "Connection is closed". Later reconnect errors surface as the callers' own failures.
  let lastError: unknown;
  client.on('error', (e) => {
    if (!connected) lastError = e;
  });
  try {
    await client.connect();
    await client.ping();
    connected = true;
    return client;
  } catch (e) {
    client.disconnect();
    throw new QueueError(
      describe(lastError ?? e, address),
      /WRONGPASS|NOAUTH|invalid password|Authentication required/i.test(String(lastError ?? e))
        ? undefined
        : unreachableReason(lastError ?? e),
    );
  }
}
