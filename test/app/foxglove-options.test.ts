/** `tandem station`'s Foxglove options: off unless asked, loopback unless allowed, bad input said in one sentence. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foxgloveEnv, foxgloveListenOf } from '../../src/app/foxglove-options.js';
import { UserError } from '../../src/app/command.js';

test('the live view is off unless a port is asked for, by flag or environment; the flag wins', () => {
  assert.equal(foxgloveListenOf({}, {}), undefined);
  assert.equal(foxgloveListenOf({}, { TANDEM_FOXGLOVE_PORT: '' }), undefined);
  assert.deepEqual(foxgloveListenOf({ port: '8765' }, {}), { port: 8765, host: '127.0.0.1', allowRemote: false });
  assert.deepEqual(foxgloveListenOf({}, { TANDEM_FOXGLOVE_PORT: '0' }), { port: 0, host: '127.0.0.1', allowRemote: false });
  assert.equal(foxgloveListenOf({ port: '9000' }, { TANDEM_FOXGLOVE_PORT: '8765' })!.port, 9000);
});

test('a non-loopback address needs --foxglove-allow-remote; a bad port or a host without a port is refused', () => {
  const refused = (flags: Parameters<typeof foxgloveListenOf>[0], env: NodeJS.ProcessEnv, re: RegExp): void => {
    assert.throws(() => foxgloveListenOf(flags, env), (e: unknown) => e instanceof UserError && re.test(e.message), JSON.stringify({ flags, env }));
  };
  refused({ port: '8765', host: '0.0.0.0' }, {}, /binds loopback only; 0\.0\.0\.0 is not loopback.*--foxglove-allow-remote/);
  refused({}, { TANDEM_FOXGLOVE_PORT: '8765', TANDEM_FOXGLOVE_HOST: '10.0.0.5' }, /10\.0\.0\.5 is not loopback/);
  assert.deepEqual(foxgloveListenOf({ port: '8765', host: '0.0.0.0', allowRemote: true }, {}), { port: 8765, host: '0.0.0.0', allowRemote: true });
  assert.deepEqual(foxgloveListenOf({ port: '8765', host: '::1' }, {}), { port: 8765, host: '::1', allowRemote: false });
  refused({ port: 'eighty' }, {}, /--foxglove-port .* must be a port number from 0 to 65535.*not 'eighty'/);
  refused({ port: '70000' }, {}, /not '70000'/);
  refused({ host: '127.0.0.1' }, {}, /only apply with --foxglove-port/);
});

test('the choice travels to the Electron shell as environment and comes back the same', () => {
  for (const listen of [{ port: 8765, host: '127.0.0.1', allowRemote: false }, { port: 0, host: '0.0.0.0', allowRemote: true }]) {
    assert.deepEqual(foxgloveListenOf({}, foxgloveEnv(listen)), listen);
  }
  assert.deepEqual(foxgloveEnv(undefined), {});
});
