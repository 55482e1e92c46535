/**
 * Which display the projector window goes on, and what it may show. Pure, so the choice and the
 * checks are unit-tested without Electron.
 *
 * The choice comes from the shell config (`electron-shell.json` in the data directory,
 * `{"projectorDisplay": ID | "none"}`, ID as Electron's screen API numbers displays): with none
 * configured, the first display that is not the primary one — a projector is the second screen.
 * With one display and nothing configured there is no projector window; a configured display that
 * is not connected is said in one sentence and also leaves the projector off (never drawn over
 * the operator's console).
 */
import type { DisplayBounds } from './window-security.js';

export interface DisplayInfo {
  readonly id: number;
  readonly bounds: DisplayBounds;
  readonly primary: boolean;
  readonly label?: string;
}

export interface ShellConfig {
  /** Electron display id, "none" for no projector window, or absent: the first secondary display. */
  readonly projectorDisplay?: number | 'none';
}

export type ProjectorChoice = { readonly display: DisplayInfo } | { readonly display: null; readonly reason: string };

export function chooseProjectorDisplay(displays: readonly DisplayInfo[], config: ShellConfig): ProjectorChoice {
  const wanted = config.projectorDisplay;
  if (wanted === 'none')
    return { display: null, reason: 'The projector window is off (projectorDisplay "none" in the shell config).' };
  const list = displays.map((d) => `${d.id}${d.primary ? ' (primary)' : ''}${d.label ? ` ${d.label}` : ''}`).join(', ');
  if (wanted !== undefined) {
    const d = displays.find((x) => x.id === wanted);
    if (!d)
      return {
        display: null,
        reason: `The projector display ${wanted} in the shell config is not connected (displays now: ${list || 'none'}); the projector window stays off until it is.`,
      };
    return { display: d };
  }
  const secondary = displays.find((d) => !d.primary);
  if (!secondary)
    return {
      display: null,
      reason: `Only one display is connected (${list || 'none'}); the projector window stays off rather than cover the operator's console.`,
    };
  return { display: secondary };
}

/** Reads the shell config's JSON text; a bad file is one sentence naming what to fix. */
export function parseShellConfig(text: string, file: string): ShellConfig {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw new Error(`The shell config ${file} is not valid JSON.`);
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    throw new Error(`The shell config ${file} must be a JSON object such as {"projectorDisplay": 2}.`);
  const extra = Object.keys(o).filter((k) => k !== 'projectorDisplay');
  if (extra.length)
    throw new Error(
      `The shell config ${file} has unknown field ${extra.map((k) => `'${k}'`).join(', ')}; it takes projectorDisplay.`,
    );
  const p = (o as { projectorDisplay?: unknown }).projectorDisplay;
  if (p === undefined) return {};
  if (p === 'none' || (typeof p === 'number' && Number.isInteger(p) && p >= 0)) return { projectorDisplay: p };
  throw new Error(
    `The shell config ${file}: 'projectorDisplay' must be a display id (a whole number, as the shell lists them at start) or "none", not ${JSON.stringify(p)}.`,
  );
}

/** Largest image the projector takes: a 4K RGBA PNG stays well under this. */
export const MAX_PROJECTOR_IMAGE_BYTES = 32 * 1024 * 1024;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * An image for the projector: PNG bytes within the size limit, else a sentence (and the projector
 * goes black — never a half-understood picture on the table).
 */
export function checkProjectorImage(bytes: unknown): { ok: true; png: Uint8Array } | { ok: false; reason: string } {
  if (!(bytes instanceof Uint8Array))
    return { ok: false, reason: 'The projector takes PNG bytes; it was sent something else, so it shows black.' };
  if (bytes.length > MAX_PROJECTOR_IMAGE_BYTES)
    return {
      ok: false,
      reason: `The projector image is ${bytes.length} bytes, over the ${MAX_PROJECTOR_IMAGE_BYTES}-byte limit; it shows black.`,
    };
  if (bytes.length < 8 || PNG_SIGNATURE.some((b, i) => bytes[i] !== b))
    return { ok: false, reason: 'The projector image is not a PNG; it shows black.' };
  return { ok: true, png: bytes };
}
