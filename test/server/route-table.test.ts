/**
 * The station's route table decides 404 and 405 itself: nothing at a path is 404, something there
 * for another method is 405 (with the route's hint), an exact path wins over a pattern, a path that
 * names nothing is 404 whatever the method, and a bad path parameter is refused before the body is read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { ApiRefusal } from '../../src/server/request-checks.js';
import { parseId } from '../../src/server/request-bodies.js';
import { route, RouteTable } from '../../src/server/routes/route-table.js';

/** A request whose body is `text`, sent as JSON. */
function request(text = '{}'): IncomingMessage {
  return Object.assign(Readable.from([Buffer.from(text)]), {
    headers: { 'content-type': 'application/json' },
  }) as unknown as IncomingMessage;
}

const table = new RouteTable([
  route({ method: 'GET', path: '/api/things', handle: () => ({ body: 'list' }) }),
  route({
    method: 'POST',
    path: '/api/things/run',
    body: (json) => json as { n: number },
    handle: ({ body }) => ({ status: 202, body: body.n }),
  }),
  route({
    method: 'GET',
    path: /^\/api\/things\/([^/]+)$/,
    params: ([id]) => parseId(id, 'thing'),
    handle: ({ params }) => ({ body: params }),
  }),
  route({
    method: 'POST',
    path: /^\/api\/things\/([^/]+)\/poke$/,
    params: ([id]) => parseId(id, 'thing'),
    body: (json) => json,
    handle: ({ params, body }) => ({ body: [params, body] }),
  }),
  route({
    method: 'POST',
    path: /^\/api\/files\/([^/]+)$/,
    names: ([kind]) => {
      if (kind !== 'a') throw new ApiRefusal(404, `Files are of kind a, not '${kind}'.`);
    },
    howToUse: 'POST the file as the body',
    handle: () => ({ body: 'stored' }),
  }),
]);

async function refusal(method: string, path: string, req = request()): Promise<{ status: number; message: string }> {
  try {
    await table.dispatch(method, new URL(path, 'http://127.0.0.1'), req);
  } catch (e) {
    assert.ok(e instanceof ApiRefusal, String(e));
    return { status: e.status, message: e.message };
  }
  assert.fail(`${method} ${path} was answered`);
}

test('answers each route on its method, with its parameters and body', async () => {
  const at = (method: string, path: string, body?: string) =>
    table.dispatch(method, new URL(path, 'http://127.0.0.1'), request(body));
  assert.deepEqual(await at('GET', '/api/things'), { body: 'list' });
  assert.deepEqual(await at('GET', '/api/things/7'), { body: 7 });
  assert.deepEqual(await at('POST', '/api/things/run', '{"n": 3}'), { status: 202, body: 3 });
  assert.deepEqual(await at('POST', '/api/things/7/poke', '{"x": 1}'), { body: [7, { x: 1 }] });
});

test('nothing at a path is 404; something there for another method is 405 in one sentence', async () => {
  assert.deepEqual(await refusal('GET', '/api/nothing'), { status: 404, message: 'There is nothing at /api/nothing.' });
  assert.deepEqual(await refusal('GET', '/api/things/7/other'), {
    status: 404,
    message: 'There is nothing at /api/things/7/other.',
  });
  assert.deepEqual(await refusal('POST', '/api/things'), {
    status: 405,
    message: 'POST is not allowed on /api/things.',
  });
  assert.deepEqual(await refusal('PUT', '/api/things/7'), {
    status: 405,
    message: 'PUT is not allowed on /api/things/7.',
  });
  assert.deepEqual(await refusal('GET', '/api/things/7/poke'), {
    status: 405,
    message: 'GET is not allowed on /api/things/7/poke.',
  });
  assert.deepEqual(await refusal('GET', '/api/files/a'), {
    status: 405,
    message: 'GET is not allowed on /api/files/a; POST the file as the body.',
  });
});

test('an exact path wins over a pattern that also matches it: GET on a POST-only action is 405, not a lookup of "run"', async () => {
  assert.deepEqual(await refusal('GET', '/api/things/run'), {
    status: 405,
    message: 'GET is not allowed on /api/things/run.',
  });
});

test('a path that names nothing is 404 whatever the method; a bad parameter is 400 before the body is read', async () => {
  assert.deepEqual(await refusal('GET', '/api/files/zip'), { status: 404, message: "Files are of kind a, not 'zip'." });
  const req = request('{"x": 1}');
  assert.equal((await refusal('POST', '/api/things/zero/poke', req)).status, 400);
  assert.equal(req.readableDidRead, false, 'the body was not read');
});
