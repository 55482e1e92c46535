/**
 * The compare view's 3D picture: the rig from its own URDF (urdf-loader) and a layout's objects
 * and fixtures drawn by src/scene3d — the same looks the sim cameras render — on the table. Drawn
 * on demand (a new layout, a new arm pose), never in a free-running loop: the station's work
 * matters more than the browser's on a shared machine.
 */
import * as THREE from 'three';
import URDFLoader from 'urdf-loader';
type URDFRobot = ReturnType<URDFLoader['parse']>;
import { TableScene } from '../../src/scene3d/table-scene.js';
import { catalogueVisuals, cellBodies, cellVisuals, layoutBodies } from '../../src/scene3d/cell-visuals.js';
import { getTask } from '../../src/tasks/registry.js';
import type { LayoutView, RigStatus } from '../../src/server/api-types.js';

const ARMS = ['left', 'right'] as const;
/** Each finger's travel at full opening, metres (src/rig/link-geometry.ts FINGER_TRAVEL_M). */
const FINGER_TRAVEL_M = 0.048;

export class Table3d {
  readonly canvas: HTMLCanvasElement;
  private renderer: THREE.WebGLRenderer | null = null;
  private readonly table = new TableScene([236, 239, 243]);
  private readonly camera = new THREE.PerspectiveCamera(40, 4 / 3, 0.05, 20);
  private robot: URDFRobot | null = null;
  /** The sim twin's arms during a replay: the same URDF, translucent. */
  private ghost: URDFRobot | null = null;
  private replaying = false;
  private pending = false;
  /** Why there is no picture (no WebGL), in words; null when drawing. */
  problem: string | null = null;

  constructor() {
    this.canvas = document.createElement('canvas');
    this.canvas.id = 'compare-3d-canvas';
    this.canvas.setAttribute('aria-label', 'The layout on the table in 3D, the arms at their current pose');
    // Operator's side of the table, above and behind the arms' reach, looking at the table centre.
    this.camera.up.set(0, 0, 1);
    this.camera.position.set(-1.25, -1.05, 1.05);
    this.camera.lookAt(0.05, 0, 0.05);
  }

  /** Starts WebGL; false (and `problem` set) where the browser has none. */
  start(): boolean {
    if (this.renderer) return true;
    try {
      this.renderer = new THREE.WebGLRenderer({ canvas: this.canvas, antialias: true });
      this.renderer.outputColorSpace = THREE.SRGBColorSpace;
      return true;
    } catch (e) {
      this.problem = `No 3D view: this browser has no WebGL (${(e as Error).message}).`;
      return false;
    }
  }

  setRobot(urdf: string): void {
    if (this.robot) this.table.scene.remove(this.robot);
    this.robot = new URDFLoader().parse(urdf);
    this.table.scene.add(this.robot);
    this.ghost = new URDFLoader().parse(urdf);
    this.ghost.traverse((o: THREE.Object3D) => {
      if (o instanceof THREE.Mesh) {
        const m = (o.material as THREE.Material).clone() as THREE.MeshPhongMaterial;
        m.transparent = true;
        m.opacity = 0.35;
        m.color = new THREE.Color('#7a5ab8');
        m.depthWrite = false;
        o.material = m;
      }
    });
    this.ghost.visible = false;
    this.table.scene.add(this.ghost);
    this.draw();
  }

  /** A replay takes the arms (the real solid, the sim twin translucent) until endReplay. */
  startReplay(withSim: boolean): void {
    this.replaying = true;
    if (this.ghost) this.ghost.visible = withSim;
    this.draw();
  }

  endReplay(): void {
    this.replaying = false;
    if (this.ghost) this.ghost.visible = false;
    this.draw();
  }

  /** Poses the real or the sim arms from a recorded joint-state row (the file's joint names). */
  poseReplay(which: 'real' | 'sim', byName: Record<string, number>): void {
    const robot = which === 'real' ? this.robot : this.ghost;
    if (!robot) return;
    const values: Record<string, number> = {};
    for (const [name, q] of Object.entries(byName)) {
      if (!Number.isFinite(q)) continue;
      const g = /^(left|right)_gripper$/.exec(name);
      if (g) values[`${g[1]}_finger1_joint`] = Math.min(1, Math.max(0, q)) * FINGER_TRAVEL_M;
      else values[name] = q;
    }
    robot.setJointValues(values);
    this.draw();
  }

  showLayout(view: LayoutView): void {
    const task = getTask(view.task);
    this.table.setVisuals({ ...cellVisuals(), ...catalogueVisuals(task) });
    this.table.update([...cellBodies().filter((b) => b.key !== 'cell:floor'), ...layoutBodies(task, view.layout)]);
    this.draw();
  }

  /** The arms where the rig reports them (per-motor positions; else the 14-entry state). */
  showArms(rig: RigStatus): void {
    if (!this.robot || this.replaying) return;
    const values: Record<string, number> = {};
    ARMS.forEach((side, a) => {
      for (let j = 0; j < 7; j++) {
        const m = rig.motors.find((x) => x.arm === side && x.index === j);
        const q = m ? m.positionRad : rig.position[a * 7 + j];
        if (q === null || q === undefined || !Number.isFinite(q)) continue;
        if (j < 6) values[`${side}_joint${j + 1}`] = q;
        else values[`${side}_finger1_joint`] = Math.min(1, Math.max(0, q)) * FINGER_TRAVEL_M;
      }
    });
    if (this.robot.setJointValues(values)) this.draw();
  }

  private draw(): void {
    if (!this.renderer || this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      const r = this.renderer;
      if (!r) return;
      const w = this.canvas.clientWidth;
      const h = this.canvas.clientHeight;
      if (w === 0 || h === 0) return; // not on screen
      if (
        this.canvas.width !== Math.round(w * devicePixelRatio) ||
        this.canvas.height !== Math.round(h * devicePixelRatio)
      ) {
        r.setPixelRatio(devicePixelRatio);
        r.setSize(w, h, false);
        this.camera.aspect = w / h;
        this.camera.updateProjectionMatrix();
      }
      r.render(this.table.scene, this.camera);
      this.canvas.dataset.drawn = String(Number(this.canvas.dataset.drawn ?? 0) + 1);
    });
  }

  /** Redraw after the view was shown (its size is known only then). */
  redraw(): void {
    this.draw();
  }
}
