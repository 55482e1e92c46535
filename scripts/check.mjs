#!/usr/bin/env node
// `npm run check`: the type check, the lint, the import-circle check and the format check, all at
// once. The first two use one core each for about half a minute, so on CI's two cores running them side by side
// halves the wait; the circle check adds about 3 CPU-seconds beside them. Each one's output is
// printed whole once it ends (never interleaved), and the check fails if any does.
// Hand-written rather than npm-run-all2 or concurrently: their current releases need Node 22, and
// this is four child processes.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));
const steps = [
  { name: 'typecheck', cmd: bin('tsc'), args: ['-p', 'tsconfig.json'] },
  { name: 'lint', cmd: bin('eslint'), args: ['--max-warnings', '0', '.'] },
  // About 3 CPU-seconds beside the two above: TypeScript's parser over the tree, no type check.
  {
    name: 'import cycles',
    cmd: process.execPath,
    args: [fileURLToPath(new URL('./check-import-cycles.mjs', import.meta.url))],
  },
  // Biome's formatter (biome.json): a native binary, ≈ 2–3 CPU-seconds for the tree; `npm run format` rewrites.
  { name: 'format', cmd: bin('biome'), args: ['format', '--max-diagnostics=5', '.'] },
];

function run({ name, cmd, args }) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => resolve({ name, code: 1, out: `${out}${e.message}\n`, seconds: 0 }));
    child.on('close', (code, signal) =>
      resolve({ name, code: code ?? 1, signal, out, seconds: (performance.now() - t0) / 1000 }),
    );
  });
}

const results = await Promise.all(steps.map((s) => run(s)));
for (const r of results) {
  if (r.out.trim()) process.stdout.write(`── ${r.name}\n${r.out}${r.out.endsWith('\n') ? '' : '\n'}`);
  console.log(
    `${r.code === 0 ? '✔' : '✖'} ${r.name}: ${r.code === 0 ? 'passed' : `failed (exit ${r.signal ?? r.code})`} in ${r.seconds.toFixed(1)} s`,
  );
}
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
