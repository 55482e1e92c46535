/**
 * Rapier, loaded once per thread. The deterministic-compat build inlines its WebAssembly and
 * uses software float paths so a given scene steps bit-identically on every machine — what
 * cross-process and cross-machine reproducibility of sim rollouts rests on.
 */
import RAPIER from '@dimforge/rapier3d-deterministic-compat';
import { applyWasmTier } from './wasm-tier.js';

export type Rapier = typeof RAPIER;

let ready: Promise<Rapier> | undefined;

/** Resolves once the WebAssembly module is instantiated in this thread (first call only does work). */
export function loadRapier(): Promise<Rapier> {
  if (!ready) {
    applyWasmTier();
    ready = RAPIER.init().then(() => RAPIER);
  }
  return ready;
}
