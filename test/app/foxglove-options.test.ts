/** `tandem station`'s Foxglove options: off unless asked, loopback unless allowed, bad input said in one sentence. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foxgloveEnv, foxgloveListenOf } from '../../src/app/foxglove-options.js';
import { UserError } from '../../src/app/command.js';
import { DEFAULT_FOXGLOVE_ORIGINS } from '../../src/server/foxglove-live.js';

const apps = DEFAULT_FOXGLOVE_ORIGINS;

test('the live view is off unless a port is asked for, by flag or environment; the flag wins', () => {
  assert.equal(foxgloveListenOf({}, {}), undefined);
  assert.equal(foxgloveListenOf({}, { TANDEM_FOXGLOVE_PORT: '' }), undefined);
  assert.deepEqual(foxgloveListenOf({ port: '8765' }, {}), {
    port: 8765,
    host: '127.0.0.1',
    allowRemote: false,
    allowedOrigins: apps,
  });
  assert.deepEqual(foxgloveListenOf({}, { TANDEM_FOXGLOVE_PORT: '0' }), {
    port: 0,
    host: '127.0.0.1',
    allowRemote: false,
    allowedOrigins: apps,
  });
  assert.equal(foxgloveListenOf({ port: '9000' }, { TANDEM_FOXGLOVE_PORT: '8765' })!.port, 9000);
});

test('a non-loopback address needs --foxglove-allow-remote; a bad port or a host without a port is refused', () => {
  const refused = (flags: Parameters<typeof foxgloveListenOf>[0], env: NodeJS.ProcessEnv, re: RegExp): void => {
    assert.throws(
      () => foxgloveListenOf(flags, env),
      (e: unknown) => e instanceof UserError && re.test(e.message),
      JSON.stringify({ flags, env }),
    );
  };
  refused(
    { port: '8765', host: '0.0.0.0' },
    {},
    /binds loopback only; 0\.0\.0\.0 is not loopback.*--foxglove-allow-remote/,
  );
  refused({}, { TANDEM_FOXGLOVE_PORT: '8765', TANDEM_FOXGLOVE_HOST: '10.0.0.5' }, /10\.0\.0\.5 is not loopback/);
  assert.deepEqual(foxgloveListenOf({ port: '8765', host: '0.0.0.0', allowRemote: true }, {}), {
    port: 8765,
    host: '0.0.0.0',
    allowRemote: true,
    allowedOrigins: apps,
  });
  assert.deepEqual(foxgloveListenOf({ port: '8765', host: '::1' }, {}), {
    port: 8765,
    host: '::1',
    allowRemote: false,
    allowedOrigins: apps,
  });
  refused({ port: 'eighty' }, {}, /--foxglove-port .* must be a port number from 0 to 65535.*not 'eighty'/);
  refused({ port: '70000' }, {}, /not '70000'/);
  refused({ host: '127.0.0.1' }, {}, /only apply with --foxglove-port/);
});

test('the choice travels to the Electron shell as environment and comes back the same', () => {
  for (const listen of [
    { port: 8765, host: '127.0.0.1', allowRemote: false, allowedOrigins: apps },
    { port: 0, host: '0.0.0.0', allowRemote: true, allowedOrigins: [...apps, 'https://lichtblick.example.org'] },
  ]) {
    assert.deepEqual(foxgloveListenOf({}, foxgloveEnv(listen)), listen);
  }
  assert.deepEqual(foxgloveEnv(undefined), {});
});

test('browser origins beyond the Foxglove and Lichtblick apps are added by TANDEM_FOXGLOVE_ORIGINS; a non-origin is refused in one sentence', () => {
  assert.deepEqual(
    foxgloveListenOf(
      { port: '0' },
      { TANDEM_FOXGLOVE_ORIGINS: 'https://lichtblick.example.org, http://localhost:8080' },
    )!.allowedOrigins,
    [...apps, 'https://lichtblick.example.org', 'http://localhost:8080'],
  );
  assert.throws(
    () => foxgloveListenOf({ port: '0' }, { TANDEM_FOXGLOVE_ORIGINS: 'https://x.example/path' }),
    (e: unknown) =>
      e instanceof UserError && /lists 'https:\/\/x\.example\/path', which is not an origin/.test(e.message),
  );
});
