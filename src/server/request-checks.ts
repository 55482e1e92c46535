/**
 * What every request to the station API must pass before it is looked at: a loopback peer, a Host
 * that names this station (DNS rebinding), the launch token (a header, or a WebSocket subprotocol),
 * for state changes a same-origin JSON body within the size limit, and for the event stream an
 * Origin of this station. Each refusal is one sentence with its HTTP status.
 */
import type { ReportChoices } from '../analysis/paired-report.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_BODY_BYTES, TOKEN_HEADER, TOKEN_PROTOCOL_PREFIX } from './api-types.js';

export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** What the client may pick from to make the request answerable (ApiError.choices). */
    readonly choices?: ReportChoices,
  ) {
    super(message);
    this.name = 'ApiRefusal';
  }
}

/** A fresh token per launch: 32 random bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && LOOPBACK.has(address);
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface StationOrigin {
  readonly port: number;
  readonly token: string;
}

/** The hosts this station answers as (the browser may say either). */
function hostsOf(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

export function allowedOrigins(port: number): string[] {
  return hostsOf(port).map((h) => `http://${h}`);
}

/** A loopback peer and a Host that names this station (DNS rebinding): asked of every request, the UI's files too. */
export function checkPeerAndHost(req: IncomingMessage, port: number): void {
  if (!isLoopback(req.socket.remoteAddress))
    throw new ApiRefusal(403, 'The station API answers only on this machine (loopback).');
  const host = req.headers.host ?? '';
  if (!hostsOf(port).includes(host))
    throw new ApiRefusal(
      403,
      `The station API does not answer for the host '${host}'; open the address the station printed.`,
    );
}

/** The token a WebSocket upgrade offers as a subprotocol (browsers cannot set its headers). */
function protocolToken(req: IncomingMessage): string | undefined {
  const offered = req.headers['sec-websocket-protocol'];
  if (typeof offered !== 'string') return undefined;
  for (const p of offered.split(',')) {
    const name = p.trim();
    if (name.startsWith(TOKEN_PROTOCOL_PREFIX)) return name.slice(TOKEN_PROTOCOL_PREFIX.length);
  }
  return undefined;
}

/**
 * Loopback peer, Host header, and the token — in the header, or for a WebSocket upgrade as a
 * subprotocol. Never a cookie (one set by anything on 127.0.0.1 reaches every port) and never the
 * query (it would land in logs and history).
 */
export function checkRequest(req: IncomingMessage, _url: URL, o: StationOrigin): 'header' | 'protocol' {
  checkPeerAndHost(req, o.port);
  const fromHeader = req.headers[TOKEN_HEADER];
  if (typeof fromHeader === 'string' && sameToken(fromHeader, o.token)) return 'header';
  const fromProtocol = protocolToken(req);
  if (fromProtocol !== undefined && sameToken(fromProtocol, o.token)) return 'protocol';
  const given = fromHeader !== undefined || fromProtocol !== undefined;
  throw new ApiRefusal(
    401,
    given
      ? 'Wrong station token: open the address the station printed at start-up (each launch has a new token).'
      : 'This station needs its token: open the address the station printed at start-up, which carries it.',
  );
}

/**
 * An old-style link (`/?token=…`) to one of the UI's pages: the address to send the browser to,
 * the token moved into the fragment (which the browser never sends). No cookie is set.
 */
export function fragmentRedirect(url: URL, token: string): string | undefined {
  const given = url.searchParams.get('token');
  if (given === null) return undefined;
  if (!sameToken(given, token))
    throw new ApiRefusal(
      401,
      'Wrong station token: open the address the station printed at start-up (each launch has a new token).',
    );
  return `${url.pathname}#token=${token}`;
}

/** A WebSocket upgrade must also come from a page of this station. */
export function checkUpgradeOrigin(req: IncomingMessage, port: number): void {
  const origin = req.headers.origin;
  if (origin === undefined) return; // not a browser (scripts, tests): the token is the check
  if (!allowedOrigins(port).includes(origin))
    throw new ApiRefusal(
      403,
      `The event stream refuses pages from ${origin}; only the station's own page may connect.`,
    );
}

/** State-changing requests from a browser must come from the station's own page. */
export function checkPostOrigin(req: IncomingMessage, port: number): void {
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedOrigins(port).includes(origin))
    throw new ApiRefusal(
      403,
      `Requests from ${origin} are refused; only the station's own page may change the station.`,
    );
}

/** How much of a refused body the station reads and drops, and for how long, before it cuts the client off. */
const DRAIN_LIMIT = { bytes: 64 * 1024 * 1024, ms: 10_000 };

/**
 * Reads the rest of a refused body and drops it, so the client — still sending — reads the
 * refusal: answered and closed mid-upload, a browser or fetch sees a broken pipe ("fetch failed")
 * instead of the sentence that says why. A client still sending after DRAIN_LIMIT is cut off.
 */
export async function dropRestOfBody(req: IncomingMessage): Promise<void> {
  if (req.complete || req.destroyed) return;
  await new Promise<void>((resolve) => {
    let seen = 0;
    const done = (): void => {
      clearTimeout(timer);
      req.off('data', onData).off('end', done).off('error', done).off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > DRAIN_LIMIT.bytes) done();
    };
    const timer = setTimeout(done, DRAIN_LIMIT.ms);
    req.on('data', onData).once('end', done).once('error', done).once('close', done);
    req.resume();
  });
}

/**
 * Reads a body of at most `limit` bytes. Over it (declared or as it arrives) the rest is read and
 * dropped, never kept, and the refusal is a 413 with `tooBig(bytes)`'s sentence.
 */
export async function readLimitedBody(
  req: IncomingMessage,
  limit: number,
  tooBig: (bytes: number, declared: boolean) => string,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) {
    await dropRestOfBody(req);
    throw new ApiRefusal(413, tooBig(declared, true));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const over = await new Promise<boolean>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData).off('end', onEnd);
      resolve(true);
    };
    const onEnd = (): void => resolve(false);
    // Cut off (the request timeout, a client gone): nothing more will come. Settled already, a no-op.
    const onClose = (): void => reject(new ApiRefusal(400, 'The request ended before its body arrived.'));
    req.on('data', onData).once('end', onEnd).once('error', reject).once('close', onClose);
  });
  if (over) {
    await dropRestOfBody(req);
    throw new ApiRefusal(413, tooBig(size, false));
  }
  return Buffer.concat(chunks);
}

/** Reads a JSON body of at most MAX_BODY_BYTES; refuses other content types, bigger bodies and bad JSON. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json')
    throw new ApiRefusal(415, 'The station API takes JSON bodies: send Content-Type: application/json.');
  const body = await readLimitedBody(req, MAX_BODY_BYTES, (bytes, declared) =>
    declared
      ? `The request body is ${bytes} bytes; the station API takes at most ${MAX_BODY_BYTES}.`
      : `The request body is over ${MAX_BODY_BYTES} bytes, the most the station API takes.`,
  );
  const text = body.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiRefusal(400, 'The request body is not valid JSON.');
  }
}
