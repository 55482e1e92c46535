/**
 * The sim cameras, drawn by three.js in Debian's headless chromium with SwiftShader WebGL (CPU),
 * driven through playwright-core. Never a downloaded browser: the executable is the system's.
 *
 * Lazy: constructing costs nothing; the browser starts on the first image request, so policies
 * without cameras never pay for it. `close()` ends the browser and removes its profile directory.
 * All cameras of one request are drawn in one page round trip and read back as raw RGB, deflated
 * for the trip (lossless: no image codec on the way).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { CameraName, RgbImage } from '../../policy/contract.js';
import {
  DEFAULT_CAMERA_CALIBRATION,
  hashCameraCalibration,
  type CameraCalibration,
  type HashedCameraCalibration,
} from './camera-calibration.js';
import { renderPageScript } from './page-bundle.js';
import { lookedCameraCalibration, lookedVisuals, pageLight, type SceneLook } from './scene-look.js';
import {
  frameToJson,
  PAGE_OPTIONS_GLOBAL,
  PAGE_RENDER_FUNCTION,
  type PageCamera,
  type PageFrame,
  type PageOptions,
  type PageResult,
  type PageTransfer,
} from './page-protocol.js';
import type { Visual } from '../../scene3d/visual.js';
import type { Renderer } from './renderer.js';
import { RendererUnavailableError } from './renderer.js';
import { sceneVisuals, snapshotBodies, snapshotCameras } from './scene-frame.js';
import type { SceneSnapshot, SceneTask } from './scene-snapshot.js';

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/** The house's chromium flags (team brief) plus SwiftShader WebGL, since there is no GPU. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  // No crash dumps: a killed browser's crash handler would otherwise write into the profile
  // directory after we removed it.
  '--disable-breakpad',
  '--disable-crash-reporter',
];

export interface ChromiumRendererOptions {
  readonly calibration?: CameraCalibration;
  /** Default /usr/bin/chromium, or $TANDEM_CHROMIUM. */
  readonly executablePath?: string;
  /** Browser start-up budget. Default 60 s (two busy cores can make chromium slow to start). */
  readonly startTimeoutMs?: number;
  /** 4× MSAA: smoother edges for ≈3× the draw time on SwiftShader. Default off. */
  readonly antialias?: boolean;
  /**
   * Draw into a canvas attached to the page, as the renderer did before 2026-12: the browser then
   * composites it into the page after every request, for the same pixels. Default off (≈9% less
   * CPU); kept so tests and the benchmark can compare the two in one run.
   */
  readonly attachCanvas?: boolean;
  /**
   * How the pixels come back from the page: `deflate` (default) — all cameras in one deflated
   * buffer, ≈15× fewer bytes through the DevTools protocol, which was ≈13 CPU-ms of a 224 px
   * observation; `raw` — base64 of the raw RGB per camera, as before 2026-12. The same pixels
   * either way; `raw` is kept so tests and the benchmark can compare the two in one run.
   */
  readonly transfer?: PageTransfer;
  /**
   * Draw the floor's underside in every frame, as before 2026-12. By default it is left out when
   * no camera can see it (≈15% of SwiftShader's work; the same pixels, see page-main.ts); kept so
   * tests and the benchmark can compare the two in one run.
   */
  readonly floorUnderside?: boolean;
}

interface Session {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly userDataDir: string;
  /** Key of the visuals the page holds now. */
  visualsKey: string | undefined;
  closed: boolean;
  pageError: string | undefined;
}

export class ChromiumRenderer implements Renderer {
  readonly calibration: HashedCameraCalibration;
  private readonly executablePath: string;
  private readonly startTimeoutMs: number;
  private readonly antialias: boolean;
  private readonly attachCanvas: boolean;
  private readonly transfer: PageTransfer;
  private readonly floorUnderside: boolean;
  private session: Promise<Session> | undefined;
  /** Requests run one after another: the page holds one scene. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly visualsByTask = new WeakMap<SceneTask, { visuals: Record<string, Visual>; key: string }>();
  private readonly lookedVisuals = new WeakMap<
    SceneLook,
    WeakMap<SceneTask, { visuals: Record<string, Visual>; key: string }>
  >();
  private readonly lookedCalibrations = new WeakMap<SceneLook, CameraCalibration>();
  private starts = 0;

  constructor(options: ChromiumRendererOptions = {}) {
    this.calibration = hashCameraCalibration(options.calibration ?? DEFAULT_CAMERA_CALIBRATION);
    this.executablePath = options.executablePath ?? process.env.TANDEM_CHROMIUM ?? DEFAULT_CHROMIUM_PATH;
    this.startTimeoutMs = options.startTimeoutMs ?? 60_000;
    this.antialias = options.antialias ?? false;
    this.attachCanvas = options.attachCanvas ?? false;
    this.transfer = options.transfer ?? 'deflate';
    this.floorUnderside = options.floorUnderside ?? false;
  }

  /** How many times a browser was started (0 until the first image is asked for). */
  get browserStarts(): number {
    return this.starts;
  }

  /** The running browser's profile directory (unique per start), or undefined when none runs. */
  async runningProfileDir(): Promise<string | undefined> {
    if (!this.session) return undefined;
    const s = await this.session.catch(() => undefined);
    return s && !s.closed ? s.userDataDir : undefined;
  }

  render(
    snapshot: SceneSnapshot,
    cameras: readonly CameraName[],
    look?: SceneLook,
  ): Promise<Partial<Record<CameraName, RgbImage>>> {
    if (cameras.length === 0) return Promise.resolve({});
    const run = this.queue.then(() => this.renderNow(snapshot, cameras, look));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Ends the browser after the requests already queued; requests made later start a new one. */
  close(): Promise<void> {
    const done = this.queue.then(async () => {
      const pending = this.session;
      this.session = undefined;
      const s = pending ? await pending.catch(() => undefined) : undefined;
      if (s) await endSession(s);
    });
    this.queue = done.catch(() => undefined);
    return done;
  }

  private async renderNow(
    snapshot: SceneSnapshot,
    cameras: readonly CameraName[],
    look: SceneLook | undefined,
  ): Promise<Partial<Record<CameraName, RgbImage>>> {
    // Geometry first: a bad snapshot is refused before any browser work.
    const bodies = snapshotBodies(snapshot);
    const pageCameras = snapshotCameras(snapshot, this.lookedCalibration(look), cameras);
    const { visuals, key } = this.visualsFor(snapshot.task, look);
    const session = await this.ensureSession();
    const light = pageLight(look);
    const frame: PageFrame = {
      bodies,
      cameras: pageCameras,
      ...(session.visualsKey === key ? {} : { visuals }),
      ...(light ? { light } : {}),
    };
    let result: PageResult;
    try {
      result = await session.page.evaluate(
        ([fn, f]) => (window as unknown as Record<string, (json: string) => PageResult | Promise<PageResult>>)[fn](f),
        [PAGE_RENDER_FUNCTION, frameToJson(frame)] as const,
      );
    } catch (err) {
      session.visualsKey = undefined;
      if (session.closed) {
        this.session = undefined;
        await endSession(session);
        throw new RendererUnavailableError(
          `The sim camera browser (chromium) stopped while drawing ${cameras.join(', ')}${session.pageError ? ` (${session.pageError})` : ''}; the next image request starts a new one.`,
        );
      }
      throw new Error(`The sim cameras could not draw ${cameras.join(', ')}: ${(err as Error).message.split('\n')[0]}`);
    }
    session.visualsKey = key;
    return typeof result === 'string' ? splitImages(result, pageCameras) : rawImages(result, pageCameras);
  }

  private visualsFor(task: SceneTask, look: SceneLook | undefined): { visuals: Record<string, Visual>; key: string } {
    let v = this.visualsByTask.get(task);
    if (!v) {
      const visuals = sceneVisuals(task);
      v = { visuals, key: JSON.stringify(visuals) };
      this.visualsByTask.set(task, v);
    }
    if (!look?.objectColorScale && !look?.tableColorScale) return v;
    // A rollout's colours: computed once per look (a rollout renders many frames with one look).
    let byLook = this.lookedVisuals.get(look);
    if (!byLook) this.lookedVisuals.set(look, (byLook = new WeakMap()));
    let lv = byLook.get(task);
    if (!lv) {
      const visuals = lookedVisuals(v.visuals, look);
      byLook.set(task, (lv = { visuals, key: JSON.stringify(visuals) }));
    }
    return lv;
  }

  private lookedCalibration(look: SceneLook | undefined): CameraCalibration {
    if (!look?.cameras) return this.calibration.calibration;
    let c = this.lookedCalibrations.get(look);
    if (!c) this.lookedCalibrations.set(look, (c = lookedCameraCalibration(this.calibration.calibration, look)));
    return c;
  }

  private async ensureSession(): Promise<Session> {
    if (this.session) {
      const s = await this.session.catch(() => undefined);
      if (s && !s.closed) return s;
      this.session = undefined;
      if (s) await endSession(s); // the browser died: still remove its profile directory
    }
    const starting = this.start();
    this.session = starting;
    starting.catch(() => {
      if (this.session === starting) this.session = undefined;
    });
    return starting;
  }

  private async start(): Promise<Session> {
    if (!existsSync(this.executablePath)) {
      throw new RendererUnavailableError(
        `The sim cameras need Debian's chromium at ${this.executablePath}, which is not there: install it with "apt-get install chromium" (tandem never downloads a browser), or point TANDEM_CHROMIUM at it.`,
      );
    }
    const script = await renderPageScript();
    this.starts += 1;
    const userDataDir = mkdtempSync(join(tmpdir(), 'tandem-render-'));
    let context: BrowserContext;
    try {
      // Loaded on first use: a process that never asks for an image never loads playwright.
      const { chromium } = await import('playwright-core');
      context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: this.executablePath,
        headless: true,
        args: [...CHROMIUM_ARGS],
        timeout: this.startTimeoutMs,
        viewport: { width: 256, height: 256 },
      });
    } catch (err) {
      removeProfile(userDataDir);
      throw new RendererUnavailableError(
        `The sim cameras could not start chromium (${this.executablePath}): ${(err as Error).message.split('\n')[0]}`,
      );
    }
    const page = context.pages()[0] ?? (await context.newPage());
    const session: Session = { context, page, userDataDir, visualsKey: undefined, closed: false, pageError: undefined };
    context.on('close', () => {
      session.closed = true;
    });
    page.on('crash', () => {
      session.closed = true;
      session.pageError = 'the page crashed';
    });
    page.on('pageerror', (e) => {
      session.pageError = e.message;
    });
    try {
      // Nothing in the page may reach the network; the script arrives inline.
      await context.route('**/*', (route) => route.abort());
      await page.setContent(
        '<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0"></body></html>',
      );
      const webgl2 = await page.evaluate(() => document.createElement('canvas').getContext('webgl2') !== null);
      if (!webgl2) {
        throw new RendererUnavailableError(
          "Chromium started, but without WebGL 2 (SwiftShader): check that this chromium build ships SwiftShader (Debian's does).",
        );
      }
      const pageOptions: PageOptions = {
        antialias: this.antialias,
        attachCanvas: this.attachCanvas,
        transfer: this.transfer,
        floorUnderside: this.floorUnderside,
      };
      await page.evaluate(
        ([name, o]) => {
          (window as unknown as Record<string, unknown>)[name] = o;
        },
        [PAGE_OPTIONS_GLOBAL, pageOptions] as const,
      );
      await page.addScriptTag({ content: script });
      const ready = await page.evaluate(
        (fn) => typeof (window as unknown as Record<string, unknown>)[fn] === 'function',
        PAGE_RENDER_FUNCTION,
      );
      if (!ready)
        throw new RendererUnavailableError(
          `The sim camera page did not load${session.pageError ? `: ${session.pageError}` : ''}.`,
        );
    } catch (err) {
      await endSession(session);
      if (err instanceof RendererUnavailableError) throw err;
      throw new RendererUnavailableError(
        `The sim camera page could not be set up: ${(err as Error).message.split('\n')[0]}`,
      );
    }
    return session;
  }
}

/** The images from one deflated buffer holding every camera's RGB in request order. */
function splitImages(deflatedBase64: string, cameras: readonly PageCamera[]): Partial<Record<CameraName, RgbImage>> {
  const expected = cameras.reduce((n, c) => n + c.widthPx * c.heightPx * 3, 0);
  let all: Buffer;
  try {
    all = inflateRawSync(Buffer.from(deflatedBase64, 'base64'));
  } catch (err) {
    throw new Error(
      `The sim cameras ${cameras.map((c) => c.name).join(', ')} returned pixels that do not inflate: ${(err as Error).message}`,
    );
  }
  if (all.length !== expected) {
    throw new Error(
      `The sim cameras ${cameras.map((c) => c.name).join(', ')} returned ${all.length} bytes, not ${cameras.map((c) => `${c.widthPx}×${c.heightPx}×3`).join(' + ')}.`,
    );
  }
  const out: Partial<Record<CameraName, RgbImage>> = {};
  let at = 0;
  for (const cam of cameras) {
    const n = cam.widthPx * cam.heightPx * 3;
    // A copy per image: each owns its buffer (a recorder may transfer data.buffer to a worker).
    out[cam.name as CameraName] = {
      width: cam.widthPx,
      height: cam.heightPx,
      data: new Uint8Array(all.subarray(at, at + n)),
    };
    at += n;
  }
  return out;
}

/** The images from per-camera base64 (the `raw` transfer). */
function rawImages(
  images: Record<string, string>,
  cameras: readonly PageCamera[],
): Partial<Record<CameraName, RgbImage>> {
  const out: Partial<Record<CameraName, RgbImage>> = {};
  for (const cam of cameras) {
    const data = new Uint8Array(Buffer.from(images[cam.name] ?? '', 'base64'));
    if (data.length !== cam.widthPx * cam.heightPx * 3) {
      throw new Error(
        `The sim camera ${cam.name} returned ${data.length} bytes, not ${cam.widthPx}×${cam.heightPx}×3.`,
      );
    }
    out[cam.name as CameraName] = { width: cam.widthPx, height: cam.heightPx, data };
  }
  return out;
}

async function endSession(s: Session): Promise<void> {
  s.closed = true;
  try {
    await s.context.close();
  } catch {
    // Already gone (crashed or killed): nothing left to close.
  }
  removeProfile(s.userDataDir);
  // A killed browser's helper processes can outlive it by a moment and write into the profile
  // again; a second pass shortly after catches what they left. Unref'd: never keeps the process up.
  setTimeout(() => removeProfile(s.userDataDir), 1000).unref();
}

/** Removes a profile directory; a killed browser's helpers may still write for a moment, so retry. */
function removeProfile(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  } catch {
    // A temp directory left behind is not worth failing a render over; the OS cleans /tmp.
  }
}
