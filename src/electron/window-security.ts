/**
 * The Electron shell's windows and their security, as plain data and pure decisions, so they are
 * unit-tested without the Electron binary (not downloadable on build machines): the operator
 * window (the station UI from the station's own loopback origin), the projector window (full
 * screen on the chosen display, an image or black, nothing else), and what every web contents may
 * do — navigate only within the station's origin, open no windows, get no permissions.
 *
 * Types come from electron's own declarations; nothing here imports electron at run time.
 */
import type { BrowserWindowConstructorOptions, WebPreferences } from 'electron';

/**
 * The renderer cannot reach Node: isolated, sandboxed, no Node integration, no webviews. DevTools
 * only in a development run (`packaged` false): in an installed shell they would hand anyone at the
 * console the page's token and a script prompt on the station's origin.
 */
export function lockedWebPreferences(preloadPath: string, packaged = true): WebPreferences {
  return {
    preload: preloadPath,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webviewTag: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    // The station page does its own navigation (views are hash routes); the back/forward
    // gestures and spellchecker only get in the way of an operator.
    spellcheck: false,
    navigateOnDragDrop: false,
    autoplayPolicy: 'user-gesture-required',
    devTools: !packaged,
  };
}

/** The operator console: a normal window, big enough for the UI's 1280×800 layout. */
export function operatorWindowOptions(preloadPath: string, packaged = true): BrowserWindowConstructorOptions {
  return {
    width: 1280,
    height: 800,
    minWidth: 1024,
    minHeight: 700,
    title: 'tandem station',
    backgroundColor: '#f4f5f7',
    show: false,
    autoHideMenuBar: true,
    webPreferences: lockedWebPreferences(preloadPath, packaged),
  };
}

export interface DisplayBounds {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/**
 * The projector window: borderless, full screen on its display, black until told otherwise, never
 * taking focus from the operator window (a stray key press must land in the console), no
 * devtools — it only shows pixels.
 */
export function projectorWindowOptions(preloadPath: string, bounds: DisplayBounds): BrowserWindowConstructorOptions {
  return {
    x: bounds.x,
    y: bounds.y,
    width: bounds.width,
    height: bounds.height,
    fullscreen: true,
    frame: false,
    kiosk: false,
    resizable: false,
    movable: false,
    focusable: false,
    skipTaskbar: true,
    alwaysOnTop: false,
    backgroundColor: '#000000',
    show: false,
    title: 'tandem projector',
    webPreferences: { ...lockedWebPreferences(preloadPath), devTools: false },
  };
}

/**
 * CSP of the projector page (a local file): nothing loads but the page's own style and the image
 * it is handed as a data: URL; no script at all — the preload puts the image in the page.
 */
export const PROJECTOR_PAGE_CSP =
  "default-src 'none'; img-src data:; style-src 'self'; base-uri 'none'; form-action 'none'";

/** Origin of the station's URL (http://127.0.0.1:PORT). */
export function stationOrigin(stationUrl: string): string {
  return new URL(stationUrl).origin;
}

/**
 * Whether a web contents — or any frame in it (will-frame-navigate) — may navigate to `url`: only
 * within the station's own origin (the old-link redirect and the views), or the projector page's own file. Everything else — a link in a
 * rollout's text, a dragged-in file, an attacker's page — is refused.
 */
export function mayNavigate(
  url: string,
  allowed: { readonly stationOrigin: string; readonly projectorPage: string },
): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol === 'file:') return u.href.split('#')[0] === new URL(allowed.projectorPage).href;
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === allowed.stationOrigin;
}

/** window.open, target=_blank links: always refused (the shell has exactly its two windows). */
export function windowOpenDecision(): { action: 'deny' } {
  return { action: 'deny' };
}

/**
 * Permission requests (camera, microphone, notifications, geolocation, HID, serial, …): all
 * refused. The station's hardware is the main process's, through the API, never the renderer's.
 */
export function permissionDecision(_permission: string): boolean {
  return false;
}

/** Whether an IPC message comes from the station's own page (not a navigated-away or injected frame). */
export function isStationSender(senderUrl: string | undefined, origin: string): boolean {
  if (!senderUrl) return false;
  try {
    return new URL(senderUrl).origin === origin;
  } catch {
    return false;
  }
}
