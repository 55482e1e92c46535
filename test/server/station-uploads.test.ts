/**
 * Uploads to a real `tandem station`: layout sets (their own hash checked), sim calibrations (the
 * calibration file parser) and policies (onnxruntime loads the model) are stored only when valid;
 * anything else is one sentence and nothing is stored; a file over its kind's limit is refused
 * with the limit said. Then the same from the Rollouts page in Debian's headless chromium, where
 * the refusal shows in the upload panel. Screenshot: test-output/station-ui/uploads-refused.png.
 */
import { pageProblems } from '../helpers/page-problems.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startStation } from '../helpers/station-process.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM_PATH } from '../../src/sim/render/chromium-renderer.js';
import { TOKEN_HEADER, type ApiError, type LayoutSetSummary, type UploadResult } from '../../src/server/api-types.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationJson } from '../../src/sim/calibration.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';

const SHOTS = join(PROJECT_ROOT, 'test-output', 'station-ui');
/** One line that ends as a sentence ends (the station's refusals; file names may start them in lower case). */
const oneSentence = (s: string): boolean => /\.$/.test(s) && !s.includes('\n');

/**
 * Sends `bytes` zero bytes in 256 KiB pieces, a few milliseconds apart, as a browser on a slower
 * link does, and resolves with the answer; a broken pipe or reset before the answer rejects.
 */
function sendSlowly(
  url: string,
  headers: Record<string, string>,
  bytes: number,
  declare: boolean,
): Promise<{ status: number; error: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, ...(declare ? { 'Content-Length': String(bytes) } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, error: (JSON.parse(text) as ApiError).error }));
      },
    );
    req.on('error', reject);
    const piece = Buffer.alloc(256 * 1024);
    let sent = 0;
    const next = (): void => {
      if (sent >= bytes) {
        req.end();
        return;
      }
      const n = Math.min(piece.length, bytes - sent);
      sent += n;
      req.write(n === piece.length ? piece : piece.subarray(0, n));
      setTimeout(next, 3);
    };
    next();
  });
}

test('uploads: valid layout sets, sim calibrations and ONNX policies are stored; hash mismatches, bad files and oversize bodies are refused in one sentence, storing nothing', async (t) => {
  // Uploads touch the store, never the arms: the mirror rig (no emulated cell, whose physics would run
  // on the wall clock the whole test) is all the station needs here.
  const station = await startStation({ rigConfig: { type: 'mirror' } });
  t.after(() => station.dispose());
  const post = async (
    kind: string,
    name: string,
    body: Uint8Array | string,
  ): Promise<{ status: number; data: UploadResult & ApiError }> => {
    const res = await fetch(`${station.base}/api/uploads/${kind}?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { [TOKEN_HEADER]: station.token, Origin: station.base, 'Content-Type': 'application/octet-stream' },
      body: typeof body === 'string' ? body : new Blob([new Uint8Array(body)]),
    });
    return { status: res.status, data: (await res.json()) as UploadResult & ApiError };
  };
  const sets = async (): Promise<LayoutSetSummary[]> =>
    (await (
      await fetch(`${station.base}/api/layout-sets`, { headers: { [TOKEN_HEADER]: station.token } })
    ).json()) as LayoutSetSummary[];

  // A layout set: stored once, listed; the same again is no second copy.
  const set = sampleLayoutSet({ task: 'mug-flipping', tiers: [1, 2], perTier: 2, seed: 9 });
  const text = serializeLayoutSet(set);
  const ok = await post('layout-set', 'mugs.json', text);
  assert.equal(ok.status, 201, JSON.stringify(ok.data));
  assert.equal(ok.data.sha256, set.sha256);
  assert.match(ok.data.summary, /mug-flipping v\d+, 4 layouts/);
  assert.equal((await post('layout-set', 'mugs.json', text)).data.inserted, false);
  assert.deepEqual(
    (await sets()).map((s) => s.sha256),
    [set.sha256],
  );

  // Edited after it was pinned: its hash no longer matches, refused, not stored.
  const edited = JSON.parse(text) as { layouts: { objects: { pose: { x: number } }[] }[] };
  edited.layouts[0].objects[0].pose.x += 0.05;
  const tampered = await post('layout-set', 'mugs-edited.json', JSON.stringify(edited));
  assert.equal(tampered.status, 400);
  assert.ok(oneSentence(tampered.data.error), tampered.data.error);
  assert.match(tampered.data.error, /mugs-edited\.json.*hash/i);
  assert.equal((await sets()).length, 1, 'nothing stored for the edited set');

  // Over the limit: refused before it is read, the limit said.
  const big = await post('layout-set', 'huge.json', new Uint8Array(8 * 1024 * 1024 + 1));
  assert.equal(big.status, 413);
  assert.equal(big.data.error, 'A layout set upload is at most 8 MiB; this file is 8.0 MiB.');
  // Still sending when the limit is passed, declared or not: the client reads the refusal, not a broken pipe.
  const headers = { [TOKEN_HEADER]: station.token, Origin: station.base, 'Content-Type': 'application/octet-stream' };
  const slowDeclared = await sendSlowly(
    `${station.base}/api/uploads/layout-set?name=huge.json`,
    headers,
    10 * 1024 * 1024,
    true,
  );
  assert.deepEqual(slowDeclared, { status: 413, error: 'A layout set upload is at most 8 MiB; this file is 10 MiB.' });
  const slowChunked = await sendSlowly(
    `${station.base}/api/uploads/layout-set?name=huge.json`,
    headers,
    10 * 1024 * 1024,
    false,
  );
  assert.equal(slowChunked.status, 413);
  assert.match(slowChunked.error, /^A layout set upload is at most 8 MiB; this file is 8\.\d MiB\.$/);
  assert.equal((await sets()).length, 1, 'nothing stored for the refused uploads');

  // A sim calibration: the parser's sentence for a bad one, stored when good.
  const cal = await post('sim-calibration', 'sim.json', simCalibrationJson(DEFAULT_SIM_CALIBRATION));
  assert.equal(cal.status, 201, JSON.stringify(cal.data));
  assert.match(cal.data.summary, /^sim calibration '.+' v\d+$/);
  const badCal = await post('sim-calibration', 'sim-bad.json', '{"name": 3}');
  assert.equal(badCal.status, 400);
  assert.ok(oneSentence(badCal.data.error), badCal.data.error);
  assert.match(badCal.data.error, /^The sim calibration file sim-bad\.json: /);

  // A policy: onnxruntime loads it before it is kept; garbage is refused and leaves no file.
  const model = buildLinearPolicyModel({ horizon: 4, seed: 3 }).bytes;
  const pol = await post('policy', 'act-small.onnx', model);
  assert.equal(pol.status, 201, JSON.stringify(pol.data));
  assert.match(pol.data.spec ?? '', /^onnx:\/.*\/policies\/[0-9a-f]{12}-act-small\.onnx$/);
  assert.ok(existsSync(pol.data.spec!.slice('onnx:'.length)));
  const junk = await post('policy', 'junk.onnx', new TextEncoder().encode('not a model at all'));
  assert.equal(junk.status, 400);
  assert.match(junk.data.error, /junk\.onnx is not an ONNX model onnxruntime can load/);
  assert.ok(!junk.data.error.includes('.upload-'), "the refusal names the uploaded file, not the station's temp file");
  assert.deepEqual(
    readdirSync(join(station.dataDir, 'policies')).filter((f) => f.startsWith('.upload-')),
    [],
    'no temp file left behind',
  );
  const noName = await post('policy', 'model.bin', model);
  assert.equal(noName.status, 400);
  assert.match(noName.data.error, /ending in \.onnx/);
  assert.equal((await post('firmware', 'x.bin', 'x')).status, 404);

  // The same from the Rollouts page in chromium: the refusal in the panel, then a good file stored.
  mkdirSync(SHOTS, { recursive: true });
  const files = mkdtempSync(join(tmpdir(), 'tandem-uploads-'));
  const profile = mkdtempSync(join(tmpdir(), 'tandem-uploads-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: DEFAULT_CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 800 },
  });
  t.after(async () => {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const problems = pageProblems(page);
  writeFileSync(join(files, 'bottles-edited.json'), JSON.stringify(edited));
  const bottles = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 3, seed: 4 });
  writeFileSync(join(files, 'bottles.json'), serializeLayoutSet(bottles));
  await page.goto(station.url);
  await page.waitForSelector('#connection.live');
  await page.keyboard.press('2');
  await page.setInputFiles('#upload-layout-set', join(files, 'bottles-edited.json'));
  await page.click('#upload-layout-set-send');
  await page.waitForFunction(() => document.getElementById('upload-result')?.classList.contains('bad') ?? false);
  assert.match((await page.textContent('#upload-result')) ?? '', /bottles-edited\.json.*hash/i);
  await page.locator('#uploads').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'uploads-refused.png') });
  await page.setInputFiles('#upload-layout-set', join(files, 'bottles.json'));
  await page.click('#upload-layout-set-send');
  await page.waitForFunction(() =>
    /^Stored: bottles-in-the-bin/.test(document.getElementById('upload-result')?.textContent ?? ''),
  );
  // The new set is offered in the rollout form at once.
  await page.waitForFunction(
    (sha) =>
      Array.from((document.getElementById('run-layout-set') as HTMLSelectElement).options).some((o) => o.value === sha),
    bottles.sha256,
  );
  assert.deepEqual(
    problems,
    ['Failed to load resource: the server responded with a status of 400 (Bad Request)'],
    'no errors in the page but the refused upload',
  );
});
