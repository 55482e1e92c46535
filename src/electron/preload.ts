/**
 * The operator window's preload (sandboxed; bundled to CommonJS by preload-bundle.ts at start).
 * Exposes exactly TandemShellApi on `window.tandemShell` — three calls on fixed channels, no
 * ipcRenderer, no Node — through contextBridge, so the page's own JavaScript never holds an
 * Electron object.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { SHELL_CHANNELS, type ShellInfo, type TandemShellApi } from './shell-api.js';

const api: TandemShellApi = {
  info: () => ipcRenderer.invoke(SHELL_CHANNELS.shellInfo) as Promise<ShellInfo>,
  showOnProjector: (png: Uint8Array) => {
    // Copied into a fresh Uint8Array: only bytes cross, never an object of the page's.
    if (!(png instanceof Uint8Array))
      return Promise.resolve({ shown: false, reason: 'The projector takes PNG bytes.' });
    return ipcRenderer.invoke(SHELL_CHANNELS.projectorShow, new Uint8Array(png)) as Promise<{
      shown: boolean;
      reason?: string;
    }>;
  },
  projectorBlack: () => ipcRenderer.invoke(SHELL_CHANNELS.projectorBlack) as Promise<void>,
};

contextBridge.exposeInMainWorld('tandemShell', api);
