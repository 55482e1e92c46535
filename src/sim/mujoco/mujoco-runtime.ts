/**
 * MuJoCo 3 as WebAssembly (`mujoco-js`, the official build): one module per thread, imported and
 * loaded on first use. The WebAssembly is inside the package's JavaScript (base64), so loading
 * reads nothing from disk or network beyond the package itself.
 */
import type { MainModule, MjData, MjModel } from 'mujoco-js';
import { applyWasmTier } from '../wasm-tier.js';

export type Mujoco = MainModule;
export type { MjData, MjModel };

let module: Promise<Mujoco> | undefined;

export function loadMujoco(): Promise<Mujoco> {
  // MuJoCo prints its warnings (a NaN, an unstable step) itself; the scene reports a blow-up as
  // the rollout's one-sentence reason instead, so a CLI run is not interleaved with MuJoCo's text.
  // Imported here, not at the top: the package's JavaScript carries the whole WebAssembly as text,
  // ≈ 0.5 CPU-s to parse, and every process that can run a sim (each rig rollout, policy server and
  // sweep worker) would pay it though most never pick the MuJoCo engine.
  if (!module) {
    applyWasmTier();
    module = import('mujoco-js').then(({ default: load }) => load({ print: () => {}, printErr: () => {} }));
  }
  return module;
}

let files = 0;

/**
 * Compiles an MJCF text into a model. MuJoCo reads from its in-memory file system, so the text is
 * written there and removed again; a compile error comes back as MuJoCo's own message.
 */
export function compileMjcf(mj: Mujoco, xml: string): MjModel {
  const path = `/tandem-scene-${process.pid}-${files++}.xml`;
  mj.FS.writeFile(path, xml);
  try {
    return mj.MjModel.loadFromXML(path);
  } finally {
    mj.FS.unlink(path);
  }
}
