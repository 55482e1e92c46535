/**
 * The Electron shell's main process: it hosts the station core (serveStation, exactly what
 * `tandem station` serves for a browser), opens the operator window on the station's loopback URL
 * and the projector window full screen on the configured display, and locks every renderer down
 * (window-security.ts). No domain logic: the UI talks to the station API as in any browser.
 *
 * Not run on build machines: the Electron binary is not downloaded there (package.json
 * allowScripts). This file is type-checked; its options and decisions are unit-tested in
 * window-security.ts and projector-display.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, ipcMain, screen, session, type IpcMainInvokeEvent } from 'electron';
import { serveStation } from '../app/station-serve.js';
import { readStationConfig } from '../app/station-config.js';
import { resolveDataDir } from '../app/data-dir.js';
import { foxgloveListenOf } from '../app/foxglove-options.js';
import { DEFAULT_STATION_PORT } from '../app/commands/station.js';
import { cellPartsFromEnv } from '../app/electron-shell.js';
import {
  chooseProjectorDisplay,
  checkProjectorImage,
  parseShellConfig,
  type ShellConfig,
} from './projector-display.js';
import { SHELL_CHANNELS, type ShellInfo } from './shell-api.js';
import {
  isStationSender,
  mayNavigate,
  operatorWindowOptions,
  permissionDecision,
  projectorWindowOptions,
  stationOrigin,
  windowOpenDecision,
} from './window-security.js';
import { writePreloads } from './preload-bundle.js';

const PROJECTOR_PAGE = fileURLToPath(new URL('./projector.html', import.meta.url));
const log = (line: string): void => void process.stdout.write(`${line}\n`);

function readShellConfig(dataDir: string): ShellConfig {
  const file = join(dataDir, 'electron-shell.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  return parseShellConfig(text, file);
}

async function main(): Promise<void> {
  // One shell per machine: a second launch would fight over the rig.
  if (!app.requestSingleInstanceLock()) {
    log('Another tandem station shell is already running on this machine; use its window.');
    app.quit();
    return;
  }
  await app.whenReady();
  const dataDir = resolveDataDir(undefined, process.env, process.cwd());
  const port = process.env.PORT ? Number(process.env.PORT) : DEFAULT_STATION_PORT;
  const shellConfig = readShellConfig(dataDir);
  const preloads = await writePreloads(join(app.getPath('userData'), 'preload'));
  const abort = new AbortController();

  // No permission for anything, in every session; the station's hardware is the main process's.
  for (const s of [session.defaultSession]) {
    s.setPermissionRequestHandler((_wc, permission, callback) => callback(permissionDecision(permission)));
    s.setPermissionCheckHandler((_wc, permission) => permissionDecision(permission));
    s.setDevicePermissionHandler(() => false);
  }

  let origin = '';
  const projectorPageUrl = new URL(`file://${PROJECTOR_PAGE}`).href;
  app.on('web-contents-created', (_e, contents) => {
    contents.setWindowOpenHandler(() => windowOpenDecision());
    const guard = (event: { preventDefault(): void }, url: string): void => {
      if (!mayNavigate(url, { stationOrigin: origin, projectorPage: projectorPageUrl })) event.preventDefault();
    };
    contents.on('will-navigate', guard);
    contents.on('will-redirect', guard);
    // Sub-frames too: will-navigate sees only the main frame.
    contents.on('will-frame-navigate', (details) => guard(details, details.url));
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });

  let projector: BrowserWindow | null = null;
  const choice = chooseProjectorDisplay(
    screen
      .getAllDisplays()
      .map((d) => ({ id: d.id, bounds: d.bounds, primary: d.id === screen.getPrimaryDisplay().id, label: d.label })),
    shellConfig,
  );
  if (choice.display) {
    projector = new BrowserWindow(projectorWindowOptions(preloads.projector, choice.display.bounds));
    await projector.loadFile(PROJECTOR_PAGE);
    projector.showInactive();
  } else log(choice.reason);

  const fromStation = (e: IpcMainInvokeEvent): boolean => isStationSender(e.senderFrame?.url, origin);
  ipcMain.handle(SHELL_CHANNELS.shellInfo, (e): ShellInfo | null => {
    if (!fromStation(e)) return null;
    const d = choice.display;
    return {
      shell: 'electron',
      electronVersion: process.versions.electron ?? '',
      projector: d ? { displayId: d.id, widthPx: d.bounds.width, heightPx: d.bounds.height } : { off: choice.reason },
    };
  });
  ipcMain.handle(SHELL_CHANNELS.projectorBlack, (e) => {
    if (fromStation(e)) projector?.webContents.send(SHELL_CHANNELS.projectorImage, null);
  });
  ipcMain.handle(SHELL_CHANNELS.projectorShow, (e, bytes: unknown) => {
    if (!fromStation(e)) return { shown: false, reason: 'Only the station page may drive the projector.' };
    if (!projector)
      return {
        shown: false,
        reason: choice.display ? 'The projector window is closed.' : (choice as { reason: string }).reason,
      };
    const image = checkProjectorImage(bytes);
    if (!image.ok) {
      projector.webContents.send(SHELL_CHANNELS.projectorImage, null);
      return { shown: false, reason: image.reason };
    }
    projector.webContents.send(
      SHELL_CHANNELS.projectorImage,
      `data:image/png;base64,${Buffer.from(image.png).toString('base64')}`,
    );
    return { shown: true };
  });

  let operator: BrowserWindow | null = null;
  const served = serveStation({
    dataDir,
    rigConfigFile: process.env.TANDEM_RIG_CONFIG,
    ...(process.env.TANDEM_STATION_CONFIG ? { station: readStationConfig(process.env.TANDEM_STATION_CONFIG) } : {}),
    ...cellPartsFromEnv(process.env),
    env: process.env,
    // The station's own frames go straight to the projector window: no renderer in between.
    onProjectorFrame: (png) =>
      projector?.webContents.send(
        SHELL_CHANNELS.projectorImage,
        png ? `data:image/png;base64,${png.toString('base64')}` : null,
      ),
    port,
    foxglove: foxgloveListenOf({}, process.env),
    cwd: process.cwd(),
    signal: abort.signal,
    log,
    onListening: (url) => {
      origin = stationOrigin(url);
      operator = new BrowserWindow(operatorWindowOptions(preloads.operator, app.isPackaged));
      operator.once('ready-to-show', () => operator?.show());
      operator.on('closed', () => abort.abort()); // closing the console shuts the station down in order
      // The station's URL carries its token in the fragment: the page keeps it in memory and sends
      // it as a header (never a cookie, which would reach every server on 127.0.0.1).
      void operator.loadURL(url);
    },
  });
  app.on('window-all-closed', () => abort.abort());
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => abort.abort());
  try {
    await served;
  } catch (e) {
    log(`The station stopped: ${(e as Error).message}`);
    process.exitCode = 1;
  } finally {
    projector?.destroy();
    app.quit();
  }
}

void main();
