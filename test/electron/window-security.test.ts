/**
 * The Electron shell's windows and security decisions, without the Electron binary (not
 * downloadable here): the options each window is created with, where a renderer may navigate,
 * what the shell refuses, which display gets the projector, what the projector accepts, and how
 * `npm start` decides between the shell and a browser.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  isStationSender,
  lockedWebPreferences,
  mayNavigate,
  operatorWindowOptions,
  permissionDecision,
  PROJECTOR_PAGE_CSP,
  projectorWindowOptions,
  stationOrigin,
  windowOpenDecision,
} from '../../src/electron/window-security.js';
import {
  checkProjectorImage,
  chooseProjectorDisplay,
  MAX_PROJECTOR_IMAGE_BYTES,
  parseShellConfig,
  type DisplayInfo,
} from '../../src/electron/projector-display.js';
import { writePreloads } from '../../src/electron/preload-bundle.js';
import { SHELL_CHANNELS } from '../../src/electron/shell-api.js';
import { findElectron, noShellLine } from '../../src/app/electron-shell.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

test('every window is isolated, sandboxed and without Node integration, with the preload it was given', () => {
  for (const o of [
    operatorWindowOptions('/p/preload.cjs'),
    projectorWindowOptions('/p/projector.cjs', { x: 1920, y: 0, width: 1920, height: 1080 }),
  ]) {
    const w = o.webPreferences!;
    assert.equal(w.contextIsolation, true);
    assert.equal(w.sandbox, true);
    assert.equal(w.nodeIntegration, false);
    assert.equal(w.nodeIntegrationInWorker, false);
    assert.equal(w.nodeIntegrationInSubFrames, false);
    assert.equal(w.webviewTag, false);
    assert.equal(w.webSecurity, true);
    assert.equal(w.allowRunningInsecureContent, false);
  }
  assert.equal(operatorWindowOptions('/p/preload.cjs').webPreferences!.preload, '/p/preload.cjs');
  assert.equal(lockedWebPreferences('/x.cjs').preload, '/x.cjs');
});

test('devTools are off in a packaged shell (the default) and on only in a development run', () => {
  assert.equal(operatorWindowOptions('/p/preload.cjs').webPreferences!.devTools, false);
  assert.equal(operatorWindowOptions('/p/preload.cjs', true).webPreferences!.devTools, false);
  assert.equal(operatorWindowOptions('/p/preload.cjs', false).webPreferences!.devTools, true);
});

test('the packaged binary has its fuses set: no RunAsNode, encrypted cookies, app only from its asar', () => {
  const yml = readFileSync(join(PROJECT_ROOT, 'electron-builder.yml'), 'utf8');
  const block = /^electronFuses:\n((?:[ ]+.*\n)+)/m.exec(yml)?.[1] ?? '';
  const fuses = new Map(
    block
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => l.trim().split(/:\s*/) as [string, string]),
  );
  assert.equal(fuses.get('runAsNode'), 'false');
  assert.equal(fuses.get('enableCookieEncryption'), 'true');
  assert.equal(fuses.get('onlyLoadAppFromAsar'), 'true');
  assert.equal(fuses.get('enableNodeOptionsEnvironmentVariable'), 'false');
  assert.equal(fuses.get('enableNodeCliInspectArguments'), 'false');
  assert.equal(fuses.get('enableEmbeddedAsarIntegrityValidation'), 'true');
});

test('every frame navigation is guarded, not only the main frame', () => {
  const main = readFileSync(join(PROJECT_ROOT, 'src/electron/main.ts'), 'utf8');
  for (const event of ['will-navigate', 'will-redirect', 'will-frame-navigate'])
    assert.match(main, new RegExp(`contents\\.on\\('${event}'`), event);
  assert.match(main, /operatorWindowOptions\(preloads\.operator, app\.isPackaged\)/);
});

test('the projector window covers its display exactly, full screen, black, and never takes focus', () => {
  const o = projectorWindowOptions('/p/projector.cjs', { x: 1920, y: 0, width: 3840, height: 2160 });
  assert.deepEqual([o.x, o.y, o.width, o.height], [1920, 0, 3840, 2160]);
  assert.equal(o.fullscreen, true);
  assert.equal(o.frame, false);
  assert.equal(o.focusable, false, 'a key press must land in the operator console, never on the projector');
  assert.equal(o.backgroundColor, '#000000');
  assert.equal(o.webPreferences!.devTools, false);
});

test('renderers navigate only within the station origin or to the projector page; windows and permissions are refused', () => {
  const allowed = {
    stationOrigin: stationOrigin('http://127.0.0.1:8420/#token=abc'),
    projectorPage: 'file:///opt/tandem/src/electron/projector.html',
  };
  assert.equal(allowed.stationOrigin, 'http://127.0.0.1:8420');
  assert.equal(mayNavigate('http://127.0.0.1:8420/#rollouts', allowed), true);
  assert.equal(mayNavigate('http://127.0.0.1:8420/', allowed), true);
  assert.equal(mayNavigate('file:///opt/tandem/src/electron/projector.html', allowed), true);
  for (const bad of [
    'http://127.0.0.1:8421/',
    'http://localhost.evil.example:8420/',
    'https://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/html,<b>x</b>',
    'not a url',
    'ws://127.0.0.1:8420/api/events',
  ]) {
    assert.equal(mayNavigate(bad, allowed), false, bad);
  }
  assert.deepEqual(windowOpenDecision(), { action: 'deny' });
  for (const p of [
    'media',
    'geolocation',
    'notifications',
    'hid',
    'serial',
    'usb',
    'clipboard-read',
    'fullscreen',
    'openExternal',
  ])
    assert.equal(permissionDecision(p), false, p);
  assert.equal(isStationSender('http://127.0.0.1:8420/#rig', 'http://127.0.0.1:8420'), true);
  assert.equal(isStationSender('http://127.0.0.1:9999/', 'http://127.0.0.1:8420'), false);
  assert.equal(
    isStationSender('file:///opt/tandem/src/electron/projector.html', 'http://127.0.0.1:8420'),
    false,
    'the projector page may not drive the projector',
  );
  assert.equal(isStationSender(undefined, 'http://127.0.0.1:8420'), false);
});

test("the projector page's own CSP allows no script and nothing but data: images and its stylesheet", () => {
  const html = readFileSync(join(PROJECT_ROOT, 'src/electron/projector.html'), 'utf8');
  const meta = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1];
  assert.equal(meta, PROJECTOR_PAGE_CSP);
  assert.match(PROJECTOR_PAGE_CSP, /default-src 'none'/);
  assert.doesNotMatch(PROJECTOR_PAGE_CSP, /script-src/);
  assert.doesNotMatch(html, /<script/);
});

const displays: DisplayInfo[] = [
  { id: 1, bounds: { x: 0, y: 0, width: 1920, height: 1080 }, primary: true, label: 'console' },
  { id: 7, bounds: { x: 1920, y: 0, width: 1280, height: 800 }, primary: false, label: 'projector' },
];

test('the projector goes on the configured display, else the first secondary one, and never over the console', () => {
  assert.equal(chooseProjectorDisplay(displays, { projectorDisplay: 7 }).display?.id, 7);
  assert.equal(chooseProjectorDisplay(displays, {}).display?.id, 7);
  const gone = chooseProjectorDisplay(displays, { projectorDisplay: 3 });
  assert.equal(gone.display, null);
  assert.match(
    (gone as { reason: string }).reason,
    /projector display 3 .* not connected \(displays now: 1 \(primary\) console, 7 projector\)/,
  );
  const single = chooseProjectorDisplay([displays[0]], {});
  assert.equal(single.display, null);
  assert.match((single as { reason: string }).reason, /Only one display/);
  assert.equal(chooseProjectorDisplay(displays, { projectorDisplay: 'none' }).display, null);
});

test('the shell config takes a display id or "none" and refuses anything else in one sentence', () => {
  assert.deepEqual(parseShellConfig('{"projectorDisplay": 7}', 'f.json'), { projectorDisplay: 7 });
  assert.deepEqual(parseShellConfig('{"projectorDisplay": "none"}', 'f.json'), { projectorDisplay: 'none' });
  assert.deepEqual(parseShellConfig('{}', 'f.json'), {});
  assert.throws(
    () => parseShellConfig('{"projectorDisplay": "HDMI-1"}', 'f.json'),
    /'projectorDisplay' must be a display id .* not "HDMI-1"/,
  );
  assert.throws(() => parseShellConfig('{"projector": 2}', 'f.json'), /unknown field 'projector'/);
  assert.throws(() => parseShellConfig('{', 'f.json'), /f.json is not valid JSON/);
});

test('the projector shows PNG bytes within the limit; anything else is refused with a sentence', () => {
  const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
  assert.equal(checkProjectorImage(png).ok, true);
  assert.match(
    (checkProjectorImage(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0])) as { reason: string }).reason,
    /not a PNG/,
  );
  assert.match((checkProjectorImage('data:image/png;base64,AAAA') as { reason: string }).reason, /takes PNG bytes/);
  const big = new Uint8Array(MAX_PROJECTOR_IMAGE_BYTES + 1);
  big.set(png);
  assert.match((checkProjectorImage(big) as { reason: string }).reason, /over the .*-byte limit/);
});

test('the preloads bundle to CommonJS that requires nothing but electron (a sandboxed preload can load nothing else)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-preload-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { operator, projector } = await writePreloads(dir);
  for (const file of [operator, projector]) {
    const code = readFileSync(file, 'utf8');
    const required = [...code.matchAll(/require\(["']([^"']+)["']\)/g)].map((m) => m[1]);
    assert.deepEqual([...new Set(required)], ['electron'], file);
    assert.doesNotMatch(code, /^\s*(import|export)\s/m, 'CommonJS, not ES modules');
  }
  const op = readFileSync(operator, 'utf8');
  assert.match(op, /exposeInMainWorld\("tandemShell"/);
  // Only the declared channels cross, and the page never gets ipcRenderer itself.
  const channels = [...op.matchAll(/"(tandem:[a-z-]+)"/g)].map((m) => m[1]);
  assert.ok(
    channels.length >= 3 && channels.every((c) => Object.values(SHELL_CHANNELS).includes(c as never)),
    channels.join(', '),
  );
  assert.doesNotMatch(op, /exposeInMainWorld\([^)]*ipcRenderer/);
});

test('npm start finds no Electron binary here and says so in one line; TANDEM_SHELL=browser skips the shell', () => {
  const here = findElectron({});
  assert.ok('missing' in here, 'the Electron binary is not downloaded on this machine');
  assert.match(
    noShellLine(here),
    /^Electron is not installed here \(its binary was not downloaded.*\); serving the same operator UI on loopback/,
  );
  assert.doesNotMatch(noShellLine(here), /\n/);
  assert.deepEqual(
    findElectron({ TANDEM_SHELL: 'browser' }, () => process.execPath),
    { missing: 'TANDEM_SHELL=browser' },
  );
  // Where the package names a binary that exists, the shell is used.
  assert.deepEqual(
    findElectron({}, () => process.execPath),
    { path: process.execPath },
  );
  assert.match((findElectron({}, () => '/nonexistent/electron') as { missing: string }).missing, /is not there/);
});
