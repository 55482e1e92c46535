/**
 * The render page's script (bundled by page-bundle.ts, run inside headless chromium). Installs one
 * function that draws a batch of cameras from one frame and returns their RGB pixels (deflated,
 * lossless), so a whole observation costs one page round trip.
 */
import * as THREE from 'three';
import { TableScene } from '../../scene3d/table-scene.js';
import { FLOOR_BODY_KEY } from '../../scene3d/cell-visuals.js';
import { floorUndersideHidden } from './floor-underside.js';
import {
  frameFromJson,
  PAGE_OPTIONS_GLOBAL,
  PAGE_RENDER_FUNCTION,
  type PageCamera,
  type PageOptions,
  type PageResult,
} from './page-protocol.js';

// Set by the host before this script runs. MSAA smooths edges but costs ≈3× on SwiftShader, so it
// is opt-in; either way SwiftShader is deterministic (same input, same bytes).
const options = (window as unknown as Record<string, PageOptions | undefined>)[PAGE_OPTIONS_GLOBAL] ?? {
  antialias: false,
  attachCanvas: false,
  transfer: 'deflate',
  floorUnderside: false,
};
const canvas = document.createElement('canvas');
// A canvas outside the document is never composited into the page: the GPU process (SwiftShader)
// then only draws the cameras, ≈9% less CPU per observation, the same pixels read back
// (bench/sim-cameras.bench.ts, test/sim/render/canvas-in-page.test.ts).
if (options.attachCanvas) document.body.appendChild(canvas);
const renderer = new THREE.WebGLRenderer({
  canvas,
  antialias: options.antialias,
  alpha: false,
  preserveDrawingBuffer: false,
  powerPreference: 'high-performance',
});
renderer.setPixelRatio(1);
renderer.outputColorSpace = THREE.SRGBColorSpace;
renderer.toneMapping = THREE.NoToneMapping;
const table = new TableScene();
const camera = new THREE.Camera();
let rgba = new Uint8Array(0);

function toBase64(bytes: Uint8Array): string {
  // Native encoder where the browser has it (Chromium ≥ 140): ~50× faster than the string loop.
  const native = (bytes as Uint8Array & { toBase64?: () => string }).toBase64;
  if (native) return native.call(bytes);
  let s = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) s += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(s);
}

/**
 * Raw deflate (RFC 1951) with the browser's native zlib. Written straight into the stream: a Blob
 * would first copy the bytes to the browser process and back.
 */
async function deflateRaw(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const deflate = new CompressionStream('deflate-raw');
  const writer = deflate.writable.getWriter();
  // A failed write or close also fails the readable side, which is what this awaits.
  writer.write(bytes).catch(() => undefined);
  writer.close().catch(() => undefined);
  return new Uint8Array(await new Response(deflate.readable).arrayBuffer());
}

// A box's index runs face by face: +x, −x, +y, −y, +z, −z (three.js BoxGeometry), 6 per face.
const BOX_INDICES = 36;
const BOX_INDICES_WITHOUT_BOTTOM = 30;
const floorBox = new THREE.Box3();

/** Leaves out the floor's underside when no camera of the frame can see it (floor-underside.ts says why that changes no pixel). */
function drawFloorUnderside(cameras: readonly PageCamera[]): void {
  const floor = table.object(FLOOR_BODY_KEY)?.children[0];
  if (!(floor instanceof THREE.Mesh) || floor.geometry.index?.count !== BOX_INDICES) return;
  floor.updateWorldMatrix(true, false); // its group's pose too: render() has not updated them yet
  const hidden = !options.floorUnderside && floorUndersideHidden(floorBox.setFromObject(floor), cameras);
  // The faces before the underside are drawn as before, in the same order.
  floor.geometry.setDrawRange(0, hidden ? BOX_INDICES_WITHOUT_BOTTOM : BOX_INDICES);
}

function renderFrame(frameJson: string): PageResult | Promise<PageResult> {
  const frame = frameFromJson(frameJson);
  if (frame.visuals) table.setVisuals(frame.visuals);
  table.update(frame.bodies);
  table.setLight(frame.light);
  drawFloorUnderside(frame.cameras);
  const gl = renderer.getContext();
  // Every camera's RGB in one buffer, in the frame's camera order: one transfer per observation.
  const rgb = new Uint8Array(frame.cameras.reduce((n, c) => n + c.widthPx * c.heightPx * 3, 0));
  let offset = 0;
  for (const cam of frame.cameras) {
    const w = cam.widthPx;
    const h = cam.heightPx;
    if (canvas.width !== w || canvas.height !== h) renderer.setSize(w, h, false);
    camera.projectionMatrix.fromArray(cam.projection);
    camera.projectionMatrixInverse.copy(camera.projectionMatrix).invert();
    camera.position.set(...cam.pose.position);
    camera.quaternion.set(...cam.pose.quaternion).normalize();
    camera.updateMatrixWorld(true);
    renderer.render(table.scene, camera);
    // Read back in the same task as the draw: the drawing buffer is still valid without preserveDrawingBuffer.
    if (rgba.length !== w * h * 4) rgba = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, rgba);
    // GL rows run bottom-up; images run top-down. Drop alpha.
    for (let y = 0; y < h; y++) {
      const src = (h - 1 - y) * w * 4;
      const dst = offset + y * w * 3;
      for (let x = 0; x < w; x++) {
        rgb[dst + x * 3] = rgba[src + x * 4];
        rgb[dst + x * 3 + 1] = rgba[src + x * 4 + 1];
        rgb[dst + x * 3 + 2] = rgba[src + x * 4 + 2];
      }
    }
    offset += w * h * 3;
  }
  if (options.transfer === 'raw') {
    const out: Record<string, string> = {};
    let at = 0;
    for (const cam of frame.cameras) {
      const n = cam.widthPx * cam.heightPx * 3;
      out[cam.name] = toBase64(rgb.subarray(at, at + n));
      at += n;
    }
    return out;
  }
  return deflateRaw(rgb).then(toBase64);
}

(window as unknown as Record<string, unknown>)[PAGE_RENDER_FUNCTION] = renderFrame;
