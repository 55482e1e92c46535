/**
 * Builds and updates a three.js scene from shape data (src/tasks/geometry.ts shapes, catalogue
 * colours, table-frame poses). Runs in the sim's and the cell's render page and in the station
 * UI's 3D view; has no DOM, Node or I/O dependency.
 *
 * Frames: three.js world = the table frame (z up). Cylinders, cups and tubes have their axis on
 * the shape's own z and are centred on their part offset (the catalogue convention).
 */
import * as THREE from 'three';
import { mergeGeometries } from 'three/examples/jsm/utils/BufferGeometryUtils.js';
import type { Shape } from '../tasks/geometry.js';
import type { SceneBody, Visual } from './visual.js';

const RADIAL_SEGMENTS = 32;

/** Geometry of one shape, centred on its bounding-box centre, axis along +z. */
export function shapeGeometry(shape: Shape): THREE.BufferGeometry[] {
  switch (shape.type) {
    case 'box':
      return [new THREE.BoxGeometry(shape.sizeM[0], shape.sizeM[1], shape.sizeM[2])];
    case 'cylinder':
      return [
        new THREE.CylinderGeometry(shape.radiusM, shape.radiusM, shape.heightM, RADIAL_SEGMENTS).rotateX(Math.PI / 2),
      ];
    case 'tube': {
      const h = shape.heightM / 2;
      const ro = shape.outerRadiusM;
      const ri = shape.innerRadiusM;
      return [
        lathe([
          [ri, -h],
          [ro, -h],
          [ro, h],
          [ri, h],
          [ri, -h],
        ]),
      ];
    }
    case 'cup': {
      const h = shape.heightM / 2;
      const ro = shape.radiusM;
      const ri = shape.radiusM - shape.wallM;
      const floor = -h + shape.bottomM;
      return [
        lathe([
          [0, -h],
          [ro, -h],
          [ro, h],
          [ri, h],
          [ri, floor],
          [0, floor],
        ]),
      ];
    }
    case 'tray': {
      const [sx, sy, sz] = shape.sizeM;
      const w = shape.wallM;
      const wallZ = w / 2;
      const parts = [
        new THREE.BoxGeometry(sx, sy, w).translate(0, 0, -sz / 2 + w / 2),
        new THREE.BoxGeometry(w, sy, sz - w).translate(sx / 2 - w / 2, 0, wallZ),
        new THREE.BoxGeometry(w, sy, sz - w).translate(-sx / 2 + w / 2, 0, wallZ),
        new THREE.BoxGeometry(sx - 2 * w, w, sz - w).translate(0, sy / 2 - w / 2, wallZ),
        new THREE.BoxGeometry(sx - 2 * w, w, sz - w).translate(0, -sy / 2 + w / 2, wallZ),
      ];
      return parts;
    }
  }
}

/** A solid of revolution about z from a closed (r, z) profile, drawn from both sides. */
function lathe(profile: readonly (readonly [number, number])[]): THREE.BufferGeometry {
  // LatheGeometry revolves about +y; turning it +90° about x puts that axis on +z.
  return new THREE.LatheGeometry(
    profile.map(([r, z]) => new THREE.Vector2(r, z)),
    RADIAL_SEGMENTS,
  ).rotateX(Math.PI / 2);
}

/**
 * Matt (Lambert) shading: it looks the same as a rough PBR material at 224 px and costs ≈20% less
 * CPU per frame on SwiftShader (bench/sim-cameras.bench.ts, measured both).
 */
function material(visual: Visual): THREE.MeshLambertMaterial {
  const [r, g, b] = visual.color;
  return new THREE.MeshLambertMaterial({
    color: new THREE.Color().setRGB(r / 255, g / 255, b / 255, THREE.SRGBColorSpace),
    // Lathed profiles are open surfaces (a cup's inside); draw both faces so no hole shows.
    side: THREE.DoubleSide,
  });
}

/**
 * One mesh per visual: every part's geometry moved to its offset and merged, so a bottle or a tray
 * is one draw call. Draw calls, not pixels, dominate SwiftShader's cost at 224 px.
 */
export function buildVisual(visual: Visual): THREE.Group {
  const group = new THREE.Group();
  const pieces: THREE.BufferGeometry[] = [];
  const m = new THREE.Matrix4();
  for (const part of visual.parts) {
    m.compose(
      new THREE.Vector3(...part.offset.position),
      new THREE.Quaternion(...part.offset.quaternion).normalize(),
      new THREE.Vector3(1, 1, 1),
    );
    for (const g of shapeGeometry(part.shape)) pieces.push(g.applyMatrix4(m));
  }
  if (pieces.length === 0) return group;
  const merged = pieces.length === 1 ? pieces[0] : mergeGeometries(pieces.map((g) => (g.index ? g.toNonIndexed() : g)));
  if (pieces.length > 1) pieces.forEach((g) => g.dispose());
  if (!merged) throw new Error('the parts of a visual could not be merged into one mesh');
  group.add(new THREE.Mesh(merged, material(visual)));
  return group;
}

function disposeTree(root: THREE.Object3D): void {
  root.traverse((o) => {
    if (o instanceof THREE.Mesh) {
      o.geometry.dispose();
      (Array.isArray(o.material) ? o.material : [o.material]).forEach((m: THREE.Material) => m.dispose());
    }
  });
}

/**
 * The table-side lighting: a soft sky/ground fill plus one sun from above and behind the arms, so
 * tops are brighter than sides (shape reads in the image) without shadows' cost.
 */
const SKY_INTENSITY = 1.6;
const SUN_INTENSITY = 1.8;
const FILL_INTENSITY = 0.5;
const SUN_POSITION: readonly [number, number, number] = [-0.6, 0.4, 1.5];

interface Lights {
  readonly sky: THREE.HemisphereLight;
  readonly sun: THREE.DirectionalLight;
  readonly fill: THREE.DirectionalLight;
}

function addLights(scene: THREE.Scene): Lights {
  const sky = new THREE.HemisphereLight(0xffffff, 0x6b6259, SKY_INTENSITY);
  scene.add(sky);
  const sun = new THREE.DirectionalLight(0xffffff, SUN_INTENSITY);
  sun.position.set(...SUN_POSITION);
  scene.add(sun);
  const fill = new THREE.DirectionalLight(0xffffff, FILL_INTENSITY);
  fill.position.set(1.0, -0.8, 0.8);
  scene.add(fill);
  return { sky, sun, fill };
}

/** Another light for the same scene (domain randomization): every lamp scaled, the sun moved. */
export interface TableLight {
  readonly intensityScale: number;
  readonly sunPosition: readonly [number, number, number];
}

/** The scene: visuals by id, bodies by key, updated in place frame after frame. */
export class TableScene {
  readonly scene = new THREE.Scene();
  private visuals: Readonly<Record<string, Visual>> = {};
  private readonly bodies = new Map<string, { visual: string; object: THREE.Object3D }>();
  private readonly lights: Lights;

  constructor(background: readonly [number, number, number] = [200, 204, 210]) {
    const [r, g, b] = background;
    this.scene.background = new THREE.Color().setRGB(r / 255, g / 255, b / 255, THREE.SRGBColorSpace);
    this.lights = addLights(this.scene);
  }

  /** Sets the light; undefined restores the default one exactly (the same numbers, the same pixels). */
  setLight(light: TableLight | undefined): void {
    const k = light?.intensityScale ?? 1;
    this.lights.sky.intensity = SKY_INTENSITY * k;
    this.lights.sun.intensity = SUN_INTENSITY * k;
    this.lights.fill.intensity = FILL_INTENSITY * k;
    this.lights.sun.position.set(...(light?.sunPosition ?? SUN_POSITION));
  }

  /** The three.js object drawing a body, or undefined: for a renderer's own tuning of what it draws. */
  object(key: string): THREE.Object3D | undefined {
    return this.bodies.get(key)?.object;
  }

  /** Replaces the catalogue of looks; bodies drawn with an old look are rebuilt on the next update. */
  setVisuals(visuals: Readonly<Record<string, Visual>>): void {
    this.visuals = visuals;
    for (const [key, body] of this.bodies) {
      this.scene.remove(body.object);
      disposeTree(body.object);
      this.bodies.delete(key);
    }
  }

  /** Places every listed body; bodies not listed are removed. Throws on a visual it does not know. */
  update(bodies: readonly SceneBody[]): void {
    const seen = new Set<string>();
    for (const b of bodies) {
      seen.add(b.key);
      let entry = this.bodies.get(b.key);
      if (entry && entry.visual !== b.visual) {
        this.scene.remove(entry.object);
        disposeTree(entry.object);
        entry = undefined;
      }
      if (!entry) {
        const visual = this.visuals[b.visual];
        if (!visual) throw new Error(`no visual "${b.visual}" for body "${b.key}"`);
        entry = { visual: b.visual, object: buildVisual(visual) };
        this.scene.add(entry.object);
        this.bodies.set(b.key, entry);
      }
      entry.object.position.set(...b.pose.position);
      entry.object.quaternion.set(...b.pose.quaternion).normalize();
    }
    for (const [key, body] of this.bodies) {
      if (!seen.has(key)) {
        this.scene.remove(body.object);
        disposeTree(body.object);
        this.bodies.delete(key);
      }
    }
  }
}
