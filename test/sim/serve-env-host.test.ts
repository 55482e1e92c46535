/**
 * `tandem sim serve-env` lets other machines run sims only behind an API key: off loopback without
 * one it is refused in one sentence (before any worker starts); with one, a trainer without the key
 * is refused at the handshake and the Python client with it gets the server's hello.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { BIN, PROJECT_ROOT, runTandem } from '../helpers/cli.js';

const PYTHON = process.env.TANDEM_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const KEY = '0123456789abcdef0123456789abcdef';

test('serve-env off loopback without --api-key is refused in one sentence and a non-zero exit, nothing served', async () => {
  // Killed after 20 s: a server that started instead would serve until then.
  const r = await runTandem(
    ['sim', 'serve-env', '--task', 'sort-from-tote', '--envs', '1', '--port', '0', '--host', '0.0.0.0'],
    { timeoutMs: 20_000, env: { TANDEM_ENV_API_KEY: '' } },
  );
  assert.notEqual(r.code, 0);
  assert.equal(
    r.stderr,
    'Serving on 0.0.0.0 lets other machines run sims here, so it needs --api-key KEY (or $TANDEM_ENV_API_KEY); without one, serve on 127.0.0.1 (a trainer elsewhere can reach it over an SSH tunnel).\n',
  );
  assert.equal(r.stdout, '');
  const short = await runTandem(
    ['sim', 'serve-env', '--task', 'sort-from-tote', '--envs', '1', '--port', '0', '--api-key', 'secret'],
    { timeoutMs: 20_000 },
  );
  assert.notEqual(short.code, 0);
  assert.match(short.stderr, /^--api-key must be at least 16 characters/);
});

test('serve-env with --api-key: a trainer without the key is refused (401), the Python client with it is served', async () => {
  const server = spawn(
    process.execPath,
    [
      BIN,
      'sim',
      'serve-env',
      '--task',
      'sort-from-tote',
      '--envs',
      '1',
      '--workers',
      '1',
      '--port',
      '0',
      '--api-key',
      KEY,
    ],
    { cwd: PROJECT_ROOT },
  );
  let err = '';
  server.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => server.on('close', resolve));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      server.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const m = /on (ws:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      void exited.then((code) => reject(new Error(`serve-env exited (${code}) before serving: ${err}`)));
    });
    for (const headers of [{}, { Authorization: 'Api-Key wrong-key-wrong-key-wrong-key!' }]) {
      const status = await new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(url, { headers });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => reject(new Error('a trainer without the key was let in')));
        ws.on('error', () => undefined);
      });
      assert.equal(status, 401);
    }
    const py = spawn(
      PYTHON,
      [
        '-c',
        `import sys, tandem_env\nenv = tandem_env.VectorEnv(sys.argv[1], api_key=sys.argv[2])\nprint(env.num_envs, env.action_dim)\nenv.close()`,
        url,
        KEY,
      ],
      { env: { ...process.env, PYTHONPATH: join(PROJECT_ROOT, 'clients', 'python') } },
    );
    let pyOut = '';
    let pyErr = '';
    py.stdout.setEncoding('utf8').on('data', (d: string) => (pyOut += d));
    py.stderr.setEncoding('utf8').on('data', (d: string) => (pyErr += d));
    const code = await new Promise<number | null>((resolve) => py.on('close', resolve));
    assert.equal(code, 0, pyErr);
    assert.equal(pyOut, '1 14\n');
    assert.match(err, /refused a connection from .*: no valid API key/);
  } finally {
    server.kill('SIGINT');
    await exited;
  }
});
