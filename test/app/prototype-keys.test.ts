/**
 * Lookups keyed by text from outside (a randomization spec, the PLC emulator's console, a
 * projector's reply) use own properties only: `constructor`, `__proto__`, `toString` are unknown
 * words with a one-sentence refusal, never an inherited function taken for a value.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRandomizationSpec, RandomizationSpecError } from '../../src/sim/randomization.js';
import { plcCommand } from '../../src/app/commands/cell-io.js';
import type { PlcEmulator } from '../../drivers/cell-io/plc-emulator.js';

const PROTO = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'];

test('a randomization spec naming a prototype property is refused as an unknown field', () => {
  for (const k of PROTO) {
    for (const section of ['physics', 'visual', 'placement']) {
      const text = `{"format": "tandem.randomization/1", "seed": 1, "${section}": {"${k}": [0, 1]}}`;
      assert.throws(
        () => parseRandomizationSpec(text, 'spec.json'),
        (e: unknown) =>
          e instanceof RandomizationSpecError &&
          new RegExp(`"${k}" is (not a field|unknown)`).test(e.message) &&
          !e.message.includes('\n'),
        `${section}.${k}`,
      );
    }
    assert.throws(
      () => parseRandomizationSpec(`{"format": "tandem.randomization/1", "seed": 1, "${k}": 1}`, 'spec.json'),
      (e: unknown) => e instanceof RandomizationSpecError && new RegExp(`unknown field "${k}"`).test(e.message),
      k,
    );
  }
});

test("the PLC emulator's console takes no prototype property for an input or a state", async () => {
  // Nothing may reach the emulator for these lines: any call on it fails the test.
  const plc = new Proxy(
    {},
    { get: (_t, p) => () => assert.fail(`the emulator was called: ${String(p)}`) },
  ) as unknown as PlcEmulator;
  for (const k of PROTO) {
    await assert.rejects(plcCommand(plc, `${k} open`), /^Error: Unknown command/, k);
    await assert.rejects(plcCommand(plc, `door ${k}`), /door needs open\|closed/, k);
  }
});
