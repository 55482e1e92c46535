/**
 * The one bridge between the station page and the shell: what the preload exposes on
 * `window.tandemShell` (contextBridge) and the IPC channels behind it. Nothing else crosses; the
 * main process checks every message's sender and payload (window-security.ts, projector-display.ts).
 */

/** IPC channels, all of them. The preload refuses to send on any other. */
export const SHELL_CHANNELS = {
  /** Renderer → main (invoke): put a PNG on the projector. */
  projectorShow: 'tandem:projector-show',
  /** Renderer → main (invoke): projector to black. */
  projectorBlack: 'tandem:projector-black',
  /** Renderer → main (invoke): what the shell is and where the projector is. */
  shellInfo: 'tandem:shell-info',
  /** Main → projector page: the image to show (data: URL) or null for black. */
  projectorImage: 'tandem:projector-image',
} as const;

export interface ShellInfo {
  readonly shell: 'electron';
  readonly electronVersion: string;
  /** Where the projector window is, or why there is none. */
  readonly projector:
    | { readonly displayId: number; readonly widthPx: number; readonly heightPx: number }
    | { readonly off: string };
}

/** What the station page sees as `window.tandemShell` inside Electron (absent in a browser). */
export interface TandemShellApi {
  info(): Promise<ShellInfo>;
  showOnProjector(png: Uint8Array): Promise<{ shown: boolean; reason?: string }>;
  projectorBlack(): Promise<void>;
}
