/**
 * The launch token, read once from this page's fragment (`#token=…`) and kept in memory: sent as
 * a header on every API request and as a subprotocol on the event stream, never in a cookie (any
 * server on 127.0.0.1 would receive one) and never in a query (logs, history). The fragment keeps
 * it so a reload still works; the browser never sends a fragment to a server.
 */
import { EVENTS_PROTOCOL, TOKEN_HEADER, TOKEN_PROTOCOL_PREFIX, tokenInFragment } from '../src/server/api-types.js';

const token = tokenInFragment(location.hash) ?? '';

// A new address pasted into this tab (a restarted station's: another key) changes only the
// fragment, which a browser does not load: the page starts again with the new key.
window.addEventListener('hashchange', () => {
  const now = tokenInFragment(location.hash);
  if (now && now !== token) location.reload();
});

/** Whether this page was opened with a key (the address the station printed carries one). */
export function hasToken(): boolean {
  return token !== '';
}

/** The headers that carry the token. */
export function tokenHeaders(): Record<string, string> {
  return token ? { [TOKEN_HEADER]: token } : {};
}

/** The event stream's subprotocols: the stream's own, and the token. */
export function eventProtocols(): string[] {
  return token ? [EVENTS_PROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${token}`] : [EVENTS_PROTOCOL];
}

/** This page's fragment for `view`, the token kept beside it so a reload still has it. */
export function fragmentFor(view: string): string {
  return token ? `#${view}&token=${token}` : `#${view}`;
}

/** A link to another page of this station, the token in its fragment. */
export function stationLink(path: string): string {
  return token ? `${path}#token=${token}` : path;
}

/** Blob URLs of images that never change for their path (a layout's top view is content-addressed). */
const fixedImages = new Map<string, Promise<string>>();

async function fetchImage(path: string): Promise<string> {
  const res = await fetch(path, { headers: tokenHeaders(), credentials: 'omit' });
  if (!res.ok) throw new Error(`The station answered ${res.status} for ${path}.`);
  return URL.createObjectURL(await res.blob());
}

/**
 * Shows an image the API serves (a top view, the projector's frame) in `img`: fetched with the
 * token and shown from a blob: URL. `fixed` images are fetched once per page; the others' previous
 * blob is released once the new one shows.
 */
export async function loadApiImage(img: HTMLImageElement, path: string, fixed = false): Promise<void> {
  let url: string;
  if (fixed) {
    if (!fixedImages.has(path)) fixedImages.set(path, fetchImage(path));
    url = await fixedImages.get(path)!;
  } else url = await fetchImage(path);
  const old = img.src;
  await new Promise<void>((resolve, reject) => {
    img.onload = () => resolve();
    img.onerror = () => reject(new Error(`The image at ${path} did not load.`));
    img.src = url;
  });
  if (!fixed && old.startsWith('blob:') && old !== url) URL.revokeObjectURL(old);
}
