/**
 * The projector page's preload (sandboxed; bundled to CommonJS at start). The page has no script of
 * its own (its CSP allows none): this preload, in its isolated world, sets the one <img> from the
 * main process's messages — a data: URL, or null for black. The page exposes nothing.
 */
import { ipcRenderer } from 'electron';
import { SHELL_CHANNELS } from './shell-api.js';

ipcRenderer.on(SHELL_CHANNELS.projectorImage, (_event, dataUrl: unknown) => {
  const img = document.getElementById('projected') as HTMLImageElement | null;
  if (!img) return;
  if (typeof dataUrl === 'string' && dataUrl.startsWith('data:image/png;base64,')) {
    img.src = dataUrl;
    img.hidden = false;
  } else {
    img.removeAttribute('src');
    img.hidden = true;
  }
});
