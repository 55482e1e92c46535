/**
 * The render page's script: page-main.ts with three.js bundled into one browser script by esbuild,
 * in memory, once per process. Bundling at start-up (≈0.3 s) keeps the project free of a build
 * step; the script is injected with page.addScriptTag, so the page never fetches anything.
 */
import { fileURLToPath } from 'node:url';

let bundle: Promise<string> | undefined;

export function renderPageScript(): Promise<string> {
  // esbuild is imported here, not at the top, so importing the renderer costs nothing until a camera is used.
  bundle ??= import('esbuild')
    .then(({ build }) =>
      build({
        entryPoints: [fileURLToPath(new URL('./page-main.ts', import.meta.url))],
        bundle: true,
        write: false,
        format: 'iife',
        platform: 'browser',
        target: 'chrome110',
        minify: true,
        legalComments: 'inline',
        logLevel: 'silent',
      }),
    )
    .then((r) => r.outputFiles[0].text);
  bundle.catch(() => {
    bundle = undefined; // let a later start retry (and report) instead of caching the failure
  });
  return bundle;
}
