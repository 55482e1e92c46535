/**
 * What the Node side sends to the render page and gets back: plain JSON, no three.js types, so the
 * page stays a dumb drawer and every pose/projection number is computed (and testable) in Node.
 */
import type { Pose3 } from '../../tasks/geometry.js';
import type { SceneBody, Visual } from '../../scene3d/visual.js';
import type { TableLight } from '../../scene3d/table-scene.js';

/** One camera to draw, already in three.js terms. */
export interface PageCamera {
  readonly name: string;
  readonly widthPx: number;
  readonly heightPx: number;
  /** Projection matrix, column-major (three.js Matrix4.fromArray order). */
  readonly projection: readonly number[];
  /** The GL camera frame (x right, y up, looking down −z) in the table frame. */
  readonly pose: Pose3;
}

export interface PageFrame {
  /** Present when the visuals changed since the last frame (new task catalogue): replaces them all. */
  readonly visuals?: Readonly<Record<string, Visual>>;
  readonly bodies: readonly SceneBody[];
  readonly cameras: readonly PageCamera[];
  /** The light of this frame (a randomized look); absent: the default light. */
  readonly light?: TableLight;
}

/**
 * What the page returns for one frame.
 * - `deflate` (default): one base64 string of the raw-deflated (RFC 1951) RGB bytes of every
 *   camera, in the frame's camera order, each row-major from its top-left pixel.
 * - `raw` (the transfer before 2026-12): per camera, its raw RGB bytes in base64.
 */
export type PageResult = string | Record<string, string>;

/**
 * How the pixels travel back. Moving 450 kB of base64 (three 224 px images) through the DevTools
 * protocol costs ≈13 CPU-ms in chromium and node; the images deflate ≈15× (flat table, floor and
 * sky), so compressing first costs less than it saves. Lossless either way.
 */
export type PageTransfer = 'deflate' | 'raw';

/**
 * The page's entry point, installed on `window` by page-main.ts: takes the frame as JSON text
 * (frameToJson) — one string crosses the protocol instead of hundreds of numbers that playwright
 * would wrap, validate and unwrap one by one.
 */
export const PAGE_RENDER_FUNCTION = '__tandemRenderFrame';

/** Set on `window` before the page script runs; fixed for the page's life (WebGL context options). */
export interface PageOptions {
  readonly antialias: boolean;
  /** Put the drawing canvas in the page (composited every frame, as before 2026-12); default off. */
  readonly attachCanvas: boolean;
  readonly transfer: PageTransfer;
  /** Draw the floor's underside even when no camera can see it (as before 2026-12); default off. */
  readonly floorUnderside: boolean;
}
export const PAGE_OPTIONS_GLOBAL = '__tandemRenderOptions';

// JSON has no −0; a pose or matrix entry of −0 is sent as this string and restored in the page, so
// the page computes with exactly the numbers Node sent (the same pixels as passing the object).
const MINUS_ZERO = '\u0000-0';

export function frameToJson(frame: PageFrame): string {
  return JSON.stringify(frame, (_key, v: unknown) => (Object.is(v, -0) ? MINUS_ZERO : v));
}

export function frameFromJson(json: string): PageFrame {
  return JSON.parse(json, (_key, v: unknown) => (v === MINUS_ZERO ? -0 : v)) as PageFrame;
}
