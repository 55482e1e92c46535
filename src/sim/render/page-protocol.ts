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

/** Per camera: raw RGB bytes, row-major from the top-left pixel, base64. */
export type PageImages = Record<string, string>;

/** The page's entry point, installed on `window` by page-main.ts. */
export const PAGE_RENDER_FUNCTION = '__tandemRenderFrame';

/** Set on `window` before the page script runs; fixed for the page's life (WebGL context options). */
export interface PageOptions {
  readonly antialias: boolean;
  /** Put the drawing canvas in the page (composited every frame, as before 2026-12); default off. */
  readonly attachCanvas: boolean;
}
export const PAGE_OPTIONS_GLOBAL = '__tandemRenderOptions';
