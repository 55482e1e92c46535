/**
 * The emulated cell's cameras: `cam_high` and both wrist cameras drawn from the cell's own world
 * through the sim's renderer, mounted where the cell truth says they really are — the station's
 * camera calibration (the default) moved by the truth's mounting errors. The station sees only the
 * images; the offsets stay hidden like the rest of the truth.
 *
 * They stream like hardware cameras: each is a `Camera` (src/rig/camera.ts) delivering JPEG frames
 * at a fixed rate, stamped when they are ready, so the recorder and the rollout's stream-backed
 * CameraSource treat them exactly as they treat a V4L2 camera. One ticker serves all of them:
 * every tick takes one snapshot of the world and draws every open camera from it in one renderer
 * request, so the three images of a tick show the same instant. A tick the renderer could not make
 * in time (it was still drawing the previous one) is a dropped frame, as a camera's full buffer is.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { quatMul } from '../pose/quaternion.js';
import { ChromiumRenderer } from '../sim/render/chromium-renderer.js';
import {
  DEFAULT_CAMERA_CALIBRATION,
  type CameraCalibration,
  type CameraModel,
} from '../sim/render/camera-calibration.js';
import type { Renderer } from '../sim/render/renderer.js';
import { CAMERA_NAMES, type CameraName, type RgbImage } from '../policy/contract.js';
import { imageCodec } from '../policy/image.js';
import type { Camera } from '../rig/camera.js';
import type { Clock } from '../rig/contract.js';
import { StreamingCamera } from '../rig/streaming-camera.js';
import type { CameraPoseOffset, HashedCellTruth } from './cell-truth.js';
import type { CellWorldView } from './cell-world.js';

/** A small rotation about the mount frame's x, y, z (radians) as a quaternion (xyzw), composed z·y·x. */
function smallRotation(r: readonly [number, number, number]): [number, number, number, number] {
  const axis = (i: number, a: number): [number, number, number, number] => {
    const q: [number, number, number, number] = [0, 0, 0, Math.cos(a / 2)];
    q[i] = Math.sin(a / 2);
    return q;
  };
  return quatMul(axis(2, r[2]), quatMul(axis(1, r[1]), axis(0, r[0])));
}

function mounted(model: CameraModel, o: CameraPoseOffset): CameraModel {
  const p = model.pose.position;
  return {
    ...model,
    pose: {
      position: [p[0] + o.positionM[0], p[1] + o.positionM[1], p[2] + o.positionM[2]],
      quaternion: quatMul(smallRotation(o.rotationRad), model.pose.quaternion),
    },
  };
}

/** Where the cell's cameras really are: `calibrated` moved by the truth's mounting errors (none at gap 'none'). */
export function cellCameraMounting(
  truth: HashedCellTruth,
  calibrated: CameraCalibration = DEFAULT_CAMERA_CALIBRATION,
): CameraCalibration {
  const cameras = Object.fromEntries(
    CAMERA_NAMES.map((n) => [n, mounted(calibrated.cameras[n], truth.truth.cameraOffsets[n])]),
  ) as Record<CameraName, CameraModel>;
  return { name: `emulated-cell ${truth.sha256.slice(0, 12)}`, version: 1, cameras };
}

/** What this machine sustains for three 224×224 cameras beside the world (bench/cell-cameras.bench.ts, docs/cameras.md). */
export const DEFAULT_CELL_CAMERA_FPS = 10;
/** JPEG quality of the cell's frames: high enough that a policy sees what the renderer drew, small enough to record. */
export const DEFAULT_CELL_JPEG_QUALITY = 90;

export interface CellCameraOptions {
  /** Frames per second of every camera. Default DEFAULT_CELL_CAMERA_FPS. */
  readonly fps?: number;
  /** JPEG quality (1–100). Default DEFAULT_CELL_JPEG_QUALITY. */
  readonly jpegQuality?: number;
  /** The station clock frames are stamped on (the rig's); default performance.now() in seconds. */
  readonly nowS?: () => number;
  /**
   * A clock whose time can stand still (virtual time): each frame is drawn at its tick's time on it,
   * with time standing still while it is drawn and encoded, so a take records every frame of its
   * length however slowly this machine draws (none dropped, the same frames every run). Without
   * one, ticks follow `nowS` on wall-clock timers and frames that drawing overran are dropped.
   */
  readonly clock?: Pick<Clock, 'waitUntil' | 'standStill'>;
  /** No frame for this long → lost. Default 5 s: a busy 2-core machine can stall a render for a second. */
  readonly stallTimeoutS?: number;
  /** Chromium to draw with (default the sim's: /usr/bin/chromium or $TANDEM_CHROMIUM). */
  readonly executablePath?: string;
  /** Draw with this renderer instead of a Chromium of their own (it is still closed with the cameras). */
  readonly renderer?: Renderer;
  /**
   * Scheduling niceness of the cell's own chromium (0 normal … 19 lowest). Default 19: hardware
   * cameras cost the station no CPU, so their stand-in yields to the world and the control loop —
   * on a busy machine the cameras drop frames (counted) instead of the world falling behind.
   */
  readonly rendererNiceness?: number;
}

/** Where a tick's time went, for the benchmark. */
export interface CellCameraTiming {
  /** Ticks drawn (each: one snapshot, one renderer request for every open camera, JPEG encoding). */
  readonly ticks: number;
  /** Mean wall time of the renderer request per tick, ms. */
  readonly renderMsMean: number;
  /** Mean wall time of encoding a tick's images to JPEG (in parallel, off the main thread), ms. */
  readonly encodeMsMean: number;
}

export interface CellCameras {
  /** One streaming Camera per camera name; open the ones you need (the ticker draws only open cameras). */
  readonly cameras: Readonly<Record<CameraName, Camera>>;
  /** The renderer (its calibration hash is the cell's camera model, hidden like the truth). */
  readonly renderer: Renderer;
  timing(): CellCameraTiming;
  /** Closes every camera and the renderer. */
  close(): Promise<void>;
}

class RenderedCamera extends StreamingCamera {
  constructor(
    name: CameraName,
    model: CameraModel,
    fps: number,
    private readonly ticker: CellCameraTicker,
    options: CellCameraOptions,
  ) {
    super(
      {
        name,
        source: 'emulated cell renderer',
        width: model.intrinsics.widthPx,
        height: model.intrinsics.heightPx,
        fps,
        format: 'jpeg',
      },
      // The first frame waits for chromium to start (≈10 s on a busy machine; the renderer allows 60).
      { nowS: options.nowS, stallTimeoutS: options.stallTimeoutS ?? 5, openTimeoutS: 90 },
    );
  }

  get cameraName(): CameraName {
    return this.info.name as CameraName;
  }

  protected startSource(): void {
    this.ticker.join(this);
  }

  protected stopSource(): Promise<void> {
    this.ticker.leave(this);
    return Promise.resolve();
  }

  push(jpeg: Uint8Array, capturedS: number, arrivalS: number): void {
    this.deliver('jpeg', this.info.width, this.info.height, jpeg, arrivalS, { capturedS });
  }

  skipped(n: number): void {
    this.addDropped(n);
  }

  fail(reason: string): void {
    this.lose(reason);
  }
}

/** Draws every open camera once per period from one world snapshot, until none is open. */
class CellCameraTicker {
  private readonly members = new Set<RenderedCamera>();
  private running = false;
  private ticks = 0;
  private renderMs = 0;
  private encodeMs = 0;

  constructor(
    private readonly world: CellWorldView,
    private readonly renderer: Renderer,
    private readonly periodS: number,
    private readonly quality: number,
    private readonly nowS: () => number,
    /** Lowers the renderer's priority once it runs (a no-op for renderers that are not our chromium). */
    private readonly yieldRenderer: () => Promise<void>,
    private readonly clock?: Pick<Clock, 'waitUntil' | 'standStill'>,
  ) {}

  join(cam: RenderedCamera): void {
    this.members.add(cam);
    if (!this.running) void this.run();
  }

  leave(cam: RenderedCamera): void {
    this.members.delete(cam);
  }

  timing(): CellCameraTiming {
    const n = Math.max(1, this.ticks);
    return { ticks: this.ticks, renderMsMean: this.renderMs / n, encodeMsMean: this.encodeMs / n };
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      // The tick grid starts once the first tick is drawn: the browser's start-up is not a drop.
      let t0 = NaN;
      let k = 0;
      while (this.members.size > 0) {
        const cams = [...this.members];
        const capturedS = this.nowS();
        const r0 = performance.now();
        let jpegs: Uint8Array[];
        const draw = async (): Promise<Uint8Array[]> => {
          const images = await this.renderer.render(
            this.world.snapshot(),
            cams.map((c) => c.cameraName),
          );
          const e0 = performance.now();
          this.renderMs += e0 - r0;
          const out = await Promise.all(cams.map((c) => encodeJpeg(images[c.cameraName]!, this.quality)));
          this.encodeMs += performance.now() - e0;
          return out;
        };
        try {
          jpegs = await (this.clock?.standStill?.(draw()) ?? draw());
        } catch (e) {
          const why = e instanceof Error ? e.message : String(e);
          for (const c of cams)
            c.fail(`camera ${c.cameraName} (emulated cell renderer) stopped: ${why}; the episode goes on without it`);
          continue;
        }
        this.ticks += 1;
        // Once the browser runs, after each of its first frames (the page starts helper threads
        // lazily, e.g. for the pixels' compression, and a thread started by one not yet reniced
        // runs at full priority), once its render threads have all started, then now and then for
        // any started later. A /proc scan: cheap beside a frame.
        if (this.ticks <= 3 || this.ticks === 20 || this.ticks % 100 === 0) await this.yieldRenderer();
        const arrivalS = this.nowS();
        // Delivered together, so a reader between two deliveries never mixes ticks.
        cams.forEach((c, i) => c.push(jpegs[i], capturedS, arrivalS));
        // The next tick on the grid t0 + j·period; ticks that passed while drawing are dropped —
        // unless the overrun is under half a period, when the next tick just starts late.
        const doneS = this.nowS();
        if (!(t0 === t0)) t0 = doneS;
        let j = k + 1;
        if (doneS > t0 + (k + 1.5) * this.periodS) j = Math.ceil((doneS - t0) / this.periodS);
        if (j - k - 1 > 0) for (const c of cams) c.skipped(j - k - 1);
        k = j;
        if (this.clock?.standStill) await this.clock.waitUntil(t0 + k * this.periodS);
        else {
          const waitMs = (t0 + k * this.periodS - this.nowS()) * 1000;
          if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
        }
      }
    } finally {
      this.running = false;
    }
  }
}

async function encodeJpeg(image: RgbImage, quality: number): Promise<Uint8Array> {
  const sharp = await imageCodec();
  const b = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .jpeg({ quality })
    .toBuffer();
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Sets the niceness of every thread of the processes whose command line holds `marker` (Linux
 * niceness is per thread; threads started later inherit it from the thread that starts them).
 */
function renice(marker: string, niceness: number): void {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
      for (const tid of readdirSync(`/proc/${pid}/task`)) setPriority(Number(tid), niceness);
    } catch {
      // The process or thread ended meanwhile, or this is not Linux: priority is an optimisation.
    }
  }
}

/** The cell's cameras through a Chromium renderer of their own (started when the first camera opens). */
export function cellCameras(world: CellWorldView, options: CellCameraOptions = {}): CellCameras {
  const fps = options.fps ?? DEFAULT_CELL_CAMERA_FPS;
  if (!(fps > 0 && fps <= 60))
    throw new Error(`The cell's camera rate must be from 0 to 60 frames per second, not ${fps}.`);
  const quality = options.jpegQuality ?? DEFAULT_CELL_JPEG_QUALITY;
  const calibration = cellCameraMounting(world.truth);
  const renderer = options.renderer ?? new ChromiumRenderer({ calibration, executablePath: options.executablePath });
  const nowS = options.nowS ?? (() => performance.now() / 1000);
  const niceness = options.rendererNiceness ?? 19;
  const yieldRenderer = async (): Promise<void> => {
    if (!(renderer instanceof ChromiumRenderer) || niceness === 0) return;
    // The profile directory is unique to this renderer's browser: it finds exactly its processes.
    const dir = await renderer.runningProfileDir();
    if (dir) renice(dir, niceness);
  };
  const ticker = new CellCameraTicker(world, renderer, 1 / fps, quality, nowS, yieldRenderer, options.clock);
  const models = renderer.calibration.calibration.cameras;
  const cameras = Object.fromEntries(
    CAMERA_NAMES.map((n) => [n, new RenderedCamera(n, models[n], fps, ticker, { ...options, nowS })]),
  ) as Record<CameraName, RenderedCamera>;
  return {
    cameras,
    renderer,
    timing: () => ticker.timing(),
    close: async () => {
      await Promise.all(Object.values(cameras).map((c) => c.close()));
      await renderer.close();
    },
  };
}
