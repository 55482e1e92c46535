import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wasmTierFromEnv } from '../../src/sim/wasm-tier.js';

test("TANDEM_WASM_TIER: unset is V8's default, baseline keeps to Liftoff, anything else is one sentence naming both", () => {
  assert.equal(wasmTierFromEnv({}), 'optimizing');
  assert.equal(wasmTierFromEnv({ TANDEM_WASM_TIER: 'optimizing' }), 'optimizing');
  assert.equal(wasmTierFromEnv({ TANDEM_WASM_TIER: 'baseline' }), 'baseline');
  assert.throws(
    () => wasmTierFromEnv({ TANDEM_WASM_TIER: 'fast' }),
    /^Error: TANDEM_WASM_TIER must be 'baseline' or 'optimizing' \(V8's default\), not 'fast'\.$/,
  );
});
