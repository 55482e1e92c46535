/**
 * MuJoCo 3 as WebAssembly (`mujoco-js`, the official build): one module per thread, loaded on
 * first use. The WebAssembly is inside the package's JavaScript (base64), so loading reads nothing
 * from disk or network beyond the package itself.
 */
import load, { type MainModule, type MjData, type MjModel } from 'mujoco-js';

export type Mujoco = MainModule;
export type { MjData, MjModel };

let module: Promise<Mujoco> | undefined;

export function loadMujoco(): Promise<Mujoco> {
  // MuJoCo prints its warnings (a NaN, an unstable step) itself; the scene reports a blow-up as
  // the rollout's one-sentence reason instead, so a CLI run is not interleaved with MuJoCo's text.
  module ??= load({ print: () => {}, printErr: () => {} });
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
