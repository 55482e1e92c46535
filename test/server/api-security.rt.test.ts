/**
 * The station API's door, tested against a real `tandem station` process on the emulated cell:
 * the token (none, wrong, a cookie refused, an old `?token=` link moved to the fragment, a
 * WebSocket subprotocol), the Host header, the Origin of
 * WebSocket upgrades and of state changes, and every body checked — a clear sentence each time,
 * nothing changed. Then SIGTERM mid-rollout: the rollout stops and is stored before the store closes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { startStation, type StationProcess } from '../helpers/station-process.js';
import { checkRequest, ApiRefusal } from '../../src/server/request-checks.js';
import { openStore } from '../../src/store/store.js';
import type { IncomingMessage } from 'node:http';

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function call(
  base: string,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: o.method ?? 'GET', headers: o.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    // A big body is read and dropped before the 413, so the client sees the answer, never a broken pipe.
    req.on('error', reject);
    req.end(o.body);
  });
}

let runPhase: string | undefined;

/** Polls an async probe until cond holds. */
async function until(
  cond: () => boolean,
  timeoutMs: number,
  pollMs: number,
  probe: () => Promise<void>,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await probe();
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

const errorOf = (r: Reply): string => (JSON.parse(r.body) as { error: string }).error;

/** Opens the event stream; resolves with the first event, or the HTTP status the upgrade was refused with. */
function openStream(
  url: string,
  headers: Record<string, string>,
  protocols: string[] = [],
): Promise<{ status: number; first?: { type: string }; protocol?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('message', (data) => {
      resolve({ status: 101, first: JSON.parse(String(data)) as { type: string }, protocol: ws.protocol });
      ws.close();
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', (e) => reject(e));
  });
}

test('the station API refuses requests without its token, from the wrong origin, and bodies it cannot take; SIGTERM shuts it down cleanly', async (t) => {
  // A short request timeout (the default is 30 s) so the slow-body check below takes two seconds.
  const station: StationProcess = await startStation({ env: { TANDEM_REQUEST_TIMEOUT_MS: '2000' } });
  t.after(() => station.dispose());
  const { base, token } = station;
  const auth = { 'x-tandem-token': token };

  assert.equal(station.stdout().trim().split('\n').length, 1, `one line at start-up: ${station.stdout()}`);
  // The token rides in the fragment, which a browser never sends to a server.
  assert.match(station.url, /^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{43}$/);

  await t.test(
    'no token, or a wrong one: 401 with a sentence from the API; the UI files hold no secret and load without it',
    async () => {
      for (const path of ['/api/rig', '/api/rollouts', '/api/events']) {
        const r = await call(base, path);
        assert.equal(r.status, 401, path);
        assert.match(errorOf(r), /needs its token: open the address the station printed/);
      }
      for (const path of ['/', '/app.js']) {
        const r = await call(base, path);
        assert.equal(r.status, 200, path);
        assert.doesNotMatch(r.body, new RegExp(token), 'the page does not carry the token');
      }
      const page = await call(base, '/');
      assert.match(page.body, /<title>tandem station<\/title>/);
      assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
      const wrong = await call(base, '/api/rig', { headers: { 'x-tandem-token': `${token.slice(0, -1)}x` } });
      assert.equal(wrong.status, 401);
      assert.match(errorOf(wrong), /Wrong station token/);
      const wrongQuery = await call(base, '/?token=guess');
      assert.equal(wrongQuery.status, 401);
      assert.equal(wrongQuery.headers['set-cookie'], undefined, 'no cookie for a wrong token');
    },
  );

  await t.test(
    'the token in a cookie or the query is not accepted by the API: any other server on 127.0.0.1 would see a cookie',
    async () => {
      const byCookie = await call(base, '/api/rig', { headers: { cookie: `tandem_token=${token}` } });
      assert.equal(byCookie.status, 401, 'a cookie carrying the token is not a credential');
      const byQuery = await call(base, `/api/rig?token=${token}`);
      assert.equal(byQuery.status, 401, 'nor is the query');
      const rig = await call(base, '/api/rig', { headers: auth });
      assert.equal(rig.status, 200);
      assert.equal(JSON.parse(rig.body).type, 'yam-cell');
    },
  );

  await t.test('an old ?token= link still opens the page: redirected to the fragment form, no cookie set', async () => {
    const r = await call(base, `/?token=${token}`);
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, `/#token=${token}`);
    assert.equal(r.headers['set-cookie'], undefined);
  });

  await t.test('a Host that is not this station (DNS rebinding) is refused even with the token', async () => {
    const r = await call(base, '/api/rig', { headers: { ...auth, host: `evil.example:${new URL(base).port}` } });
    assert.equal(r.status, 403);
    assert.match(errorOf(r), /does not answer for the host 'evil\.example/);
  });

  await t.test('WebSocket upgrades: wrong Origin refused, no token refused, the station page accepted', async () => {
    const ws = `ws://127.0.0.1:${new URL(base).port}/api/events`;
    const evil = await openStream(ws, { ...auth, origin: 'http://evil.example' });
    assert.equal(evil.status, 403, 'a page from another origin cannot open the stream, token or not');
    const anon = await openStream(ws, { origin: base });
    assert.equal(anon.status, 401);
    const own = await openStream(ws, { ...auth, origin: base });
    assert.equal(own.status, 101);
    assert.equal(own.first?.type, 'hello');
    // As the page does it: the token offered as a subprotocol; the answer names only the stream's own.
    const page = await openStream(ws, { origin: base }, ['tandem-events', `tandem-token.${token}`]);
    assert.equal(page.status, 101);
    assert.equal(page.protocol, 'tandem-events');
    assert.equal(page.first?.type, 'hello');
    const guessed = await openStream(ws, { origin: base }, ['tandem-events', 'tandem-token.guess']);
    assert.equal(guessed.status, 401);
    const cookie = await openStream(ws, { origin: base, cookie: `tandem_token=${token}` });
    assert.equal(cookie.status, 401, 'the stream takes no cookie either');
  });

  await t.test(
    'a path that is there for another method is 405, a path with nothing there 404, each in a sentence',
    async () => {
      const wrongMethod: [string, string][] = [
        ['GET', '/api/rig/command'],
        ['DELETE', '/api/rig'],
        ['GET', '/api/rollouts/run'],
        ['GET', '/api/rollouts/stop'],
        ['PUT', '/api/rollouts/7'],
        ['GET', '/api/rollouts/7/score'],
        ['GET', '/api/layout-sets/sample'],
        ['DELETE', '/api/sessions'],
        ['GET', '/api/sessions/3/resume'],
        ['GET', '/api/session/answer'],
        ['GET', '/api/teleop/start'],
        ['PUT', '/api/projector'],
      ];
      for (const [method, path] of wrongMethod) {
        const r = await call(base, path, { method, headers: auth });
        assert.equal(r.status, 405, `${method} ${path}: ${r.body}`);
        assert.equal(errorOf(r), `${method} is not allowed on ${path}.`);
      }
      const upload = await call(base, '/api/uploads/policy?name=p.onnx', { headers: auth });
      assert.equal(upload.status, 405);
      assert.equal(errorOf(upload), 'GET is not allowed on /api/uploads/policy; POST the file as the body.');
      const firmware = await call(base, '/api/uploads/firmware', { headers: auth });
      assert.equal(
        firmware.status,
        404,
        'an upload kind the station does not take is nothing there, whatever the method',
      );
      assert.match(errorOf(firmware), /^The station takes uploads of layout-set, .*not 'firmware'\.$/);
      for (const path of ['/api/nothing', '/api/rollouts/7/replay', '/api/sessions/3', '/no-such-page']) {
        const r = await call(base, path, { headers: auth });
        assert.equal(r.status, 404, path);
        assert.equal(errorOf(r), `There is nothing at ${path}.`);
      }
    },
  );

  await t.test(
    'bodies: oversized, not JSON, wrong type, unknown or bad fields, cross-origin — each a sentence, nothing done',
    async () => {
      const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
        call(base, '/api/rig/command', {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', ...headers },
          body,
        });
      const big = await post(Buffer.alloc(64 * 1024, 0x20));
      assert.equal(big.status, 413);
      assert.match(errorOf(big), /at most 16384/);
      const notJson = await post('{"command": hold}');
      assert.equal(notJson.status, 400);
      assert.equal(errorOf(notJson), 'The request body is not valid JSON.');
      const form = await post('command=hold', { 'content-type': 'application/x-www-form-urlencoded' });
      assert.equal(form.status, 415);
      const unknown = await post('{"command": "hold", "force": true}');
      assert.equal(unknown.status, 400);
      assert.match(errorOf(unknown), /unknown field 'force'/);
      const bad = await post('{"command": "launch"}');
      assert.equal(bad.status, 400);
      assert.match(errorOf(bad), /must be one of hold, damp, estop, not "launch"/);
      const cross = await post('{"command": "hold"}', { origin: 'http://evil.example' });
      assert.equal(cross.status, 403);
      const run = await call(base, '/api/rollouts/run', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ policy: 'code:hold', layoutSet: 'abc', layout: 0 }),
      });
      assert.equal(run.status, 400);
      assert.match(errorOf(run), /'layoutSet' must be a layout set's SHA-256/);
      const missing = await call(base, '/api/rollouts/run', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ policy: 'code:hold', layoutSet: 'a'.repeat(64), layout: 0 }),
      });
      assert.equal(missing.status, 400);
      assert.match(errorOf(missing), /no layout set aaaaaaaaaaaa… in the store/);
      // None of it moved the rig.
      const rig = JSON.parse((await call(base, '/api/rig', { headers: auth })).body);
      assert.equal(rig.mode, 'configured');
      assert.equal(rig.use, 'idle');
    },
  );

  await t.test(
    'a request body that stops arriving is answered 408 and the connection closed, not held for minutes',
    async () => {
      const port = Number(new URL(base).port);
      const socket = connect(port, '127.0.0.1');
      t.after(() => socket.destroy());
      let answer = '';
      socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(
        `POST /api/rig/command HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-tandem-token: ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"comm`,
      );
      // Bounded wait only so a broken server fails the test instead of hanging it.
      const cut = await Promise.race([
        closed.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 20_000)),
      ]);
      assert.ok(cut, 'the station still holds the half-sent request');
      assert.match(answer, /^HTTP\/1\.1 408 /);
      const rig = JSON.parse((await call(base, '/api/rig', { headers: auth })).body);
      assert.equal(rig.mode, 'configured', 'nothing was done');
    },
  );

  await t.test('SIGTERM mid-rollout: the rollout stops, is stored as stopped, and the station exits 0', async () => {
    const json = { ...auth, 'content-type': 'application/json' };
    const set = await call(base, '/api/layout-sets/sample', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 5 }),
    });
    assert.equal(set.status, 201, set.body);
    const sha = JSON.parse(set.body).sha256 as string;
    const started = await call(base, '/api/rollouts/run', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ policy: 'code:hold', layoutSet: sha, layout: 0, seconds: 60 }),
    });
    assert.equal(started.status, 202, started.body);
    await until(
      () => runPhase === 'running',
      60_000,
      100,
      async () => {
        runPhase = JSON.parse((await call(base, '/api/run', { headers: auth })).body)?.phase;
      },
    );
    const again = await call(base, '/api/rig/command', { method: 'POST', headers: json, body: '{"command":"hold"}' });
    assert.equal(again.status, 409, 'the operator cannot take the rig from a running rollout');
    assert.match(errorOf(again), /a rollout has the rig/);
    const code = await station.stop();
    assert.equal(code, 0, station.stderr());
    const store = openStore(join(station.dataDir, 'tandem.sqlite'));
    try {
      const rows = store.listRollouts();
      assert.equal(rows.length, 1, 'the rollout in flight was stored before the store closed');
      assert.equal(rows[0].status, 'aborted');
      assert.equal(rows[0].statusReason, 'stopped by the operator');
    } finally {
      store.close();
    }
  });
});

test('a peer that is not on this machine is refused before the token is looked at', () => {
  const req = {
    socket: { remoteAddress: '10.0.0.5' },
    headers: { host: '127.0.0.1:8420', 'x-tandem-token': 't' },
  } as unknown as IncomingMessage;
  assert.throws(
    () => checkRequest(req, new URL('http://127.0.0.1:8420/api/rig'), { port: 8420, token: 't' }),
    (e: unknown) => e instanceof ApiRefusal && e.status === 403 && /only on this machine/.test(e.message),
  );
  const local = {
    socket: { remoteAddress: '::ffff:127.0.0.1' },
    headers: { host: '127.0.0.1:8420', 'x-tandem-token': 't' },
  } as unknown as IncomingMessage;
  assert.equal(checkRequest(local, new URL('http://127.0.0.1:8420/api/rig'), { port: 8420, token: 't' }), 'header');
});
