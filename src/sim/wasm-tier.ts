/**
 * Which of V8's WebAssembly compilers runs the physics engines (Rapier, MuJoCo) in this process:
 * `TANDEM_WASM_TIER=baseline` keeps to Liftoff, V8's one-pass compiler; unset or `optimizing`,
 * V8's default, which also compiles the hot functions again with TurboFan in background threads.
 *
 * Why a choice: TurboFan's compile of Rapier's hot code costs more CPU than short runs win back.
 * Measured on this project's 2-core machine (one process, nothing else running): a station's start
 * 4.5 → 2.5 CPU-s with baseline, a 4 s cell rollout test 8.4 → 6.7, a sim rollout of 8 s 9.8 → 9.3;
 * but over 70 s of stepping TurboFan's code is 8–13 % faster (the sim bench's default row 8.4–9.2×
 * real time per core against 7.7–8.0×). So the product keeps V8's default — a station runs for
 * hours and a sweep worker steps for as long — and the test runner, whose processes live seconds,
 * asks for baseline (scripts/run-tests.mjs). Both run the same code: WebAssembly's arithmetic is
 * specified to the bit, so the tier changes speed, never a result (the sim's final-state hashes
 * are the same either way).
 */
import { setFlagsFromString } from 'node:v8';

export type WasmTier = 'baseline' | 'optimizing';

let applied = false;

/** Reads TANDEM_WASM_TIER; throws a sentence naming the two values for anything else. */
export function wasmTierFromEnv(env: NodeJS.ProcessEnv = process.env): WasmTier {
  const v = env.TANDEM_WASM_TIER;
  if (v === undefined || v === '' || v === 'optimizing') return 'optimizing';
  if (v === 'baseline') return 'baseline';
  throw new Error(`TANDEM_WASM_TIER must be 'baseline' or 'optimizing' (V8's default), not '${v}'.`);
}

/**
 * Sets the tier before this process compiles its first engine module (V8's flags are per process:
 * every thread's later compiles follow it). Call before instantiating WebAssembly.
 */
export function applyWasmTier(env: NodeJS.ProcessEnv = process.env): void {
  if (applied) return;
  applied = true;
  if (wasmTierFromEnv(env) === 'baseline') setFlagsFromString('--liftoff-only');
}
