#!/usr/bin/env node
// Runs the tests in two tiers (docs/testing.md):
//   1. every test that controls its own clock (`*.test.ts`), as many files at once as the machine
//      has cores while the real-time tier runs and twice that once it has ended (each file its own
//      process, from one queue): they cannot starve, so a busy neighbour only makes them slower;
//   2. the real-time tier (`*.rt.test.ts`): tests that truly need the wall clock (a driver over
//      ptys, the control loop's timing, ffmpeg, the cell interlock…), one file at a time.
// Both tiers run at once: the clocked tier under Linux's idle scheduling class (SCHED_IDLE, inherited
// by every process and thread it starts), so the real-time tier's processes take the CPU whenever
// they want it and the clocked tier — which cannot starve, only slow down — fills the rest. Its lines come prefixed `rt│`.
// The tier is the file name, nothing guessed at run time. Each tier prints node's own summary
// lines; a last block adds them up (what CI reads), and any failure in either tier exits non-zero.
// Usage: node scripts/run-tests.mjs [path-prefix ...] [--tier=clocked|rt] [--check] [--record-durations] [--node-test-flag ...]
//   TANDEM_TEST_CONCURRENCY=N overrides the first tier's file concurrency beside the real-time tier
//   (default: one more than the core count); TANDEM_TEST_CONCURRENCY_ALONE=N once that tier has ended
//   (default: twice the core count).
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { buildRuntime, fresh } from './runtime-build.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const RT_SUFFIX = '.rt.test.ts';

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'fixtures') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}

const args = process.argv.slice(2);
const tierArg = args.find((a) => a.startsWith('--tier='))?.slice('--tier='.length);
if (tierArg !== undefined && tierArg !== 'clocked' && tierArg !== 'rt') {
  console.error(`--tier must be 'clocked' or 'rt', not '${tierArg}'.`);
  process.exit(2);
}
const prefixes = args.filter((a) => !a.startsWith('--'));
const recordDurations = args.includes('--record-durations');
const withCheck = args.includes('--check');
const passThrough = args.filter(
  (a) => a.startsWith('--') && !a.startsWith('--tier=') && a !== '--record-durations' && a !== '--check',
);
const files = walk(join(root, 'test'))
  .filter((f) => prefixes.length === 0 || prefixes.some((p) => f.startsWith(p)))
  .sort();

// Each file's time in an earlier full run (`--record-durations` writes it): the clocked tier starts
// the longest files first, so no long file starts last and runs alone while the other cores idle.
// A file without a recorded time (new) counts as UNRECORDED_S. Order is all it changes.
const DURATIONS = join(root, 'test', 'durations.tsv');
const durations = new Map();
try {
  for (const line of readFileSync(DURATIONS, 'utf8').split('\n')) {
    const [file, sec] = line.split('\t');
    if (file && Number.isFinite(Number(sec))) durations.set(file, Number(sec));
  }
} catch {
  // no recorded durations: alphabetical order
}
const UNRECORDED_S = 5;
const longestFirst = (list) =>
  [...list].sort(
    (a, b) => (durations.get(b) ?? UNRECORDED_S) - (durations.get(a) ?? UNRECORDED_S) || a.localeCompare(b),
  );
if (files.length === 0) {
  console.error(`no test files match ${prefixes.join(' ') || 'test/'}`);
  process.exit(1);
}
const envCount = (name) => {
  const n = Number(process.env[name]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
};
const cores = Math.max(1, availableParallelism());
// One file more than the cores beside the real-time tier: under SCHED_IDLE the clocked tier can no
// longer take the CPU from it, and in a full run with as many files as cores the two cores were
// ≈ 32 % idle (168 % over 917 s) — the real-time tier mostly sleeps and the clocked files wait on
// browsers, stations and children.
const concurrency = envCount('TANDEM_TEST_CONCURRENCY') ?? cores + 1;
// Once the real-time tier has ended nothing needs the CPU on time, and the clocked tier's last files
// spend much of their wall time waiting (a browser, a station, a child's start): in the last full
// run before this, the clocked tier's ≈ 500 s alone used ≈ 54 % of the two cores with two files at
// a time. Twice as many files then fill the idle half.
const concurrencyAlone = envCount('TANDEM_TEST_CONCURRENCY_ALONE') ?? Math.max(concurrency, 2 * cores);

// How the clocked tier yields the CPU to the real-time tier: SCHED_IDLE (chrt(1), util-linux), under
// which the kernel runs a process only when no ordinary one wants the core and preempts it as soon
// as one wakes. At nice 10, which weights a real-time process only ≈ 9× a clocked one, the clocked
// tier's two files and their threads still took enough that real-time tests starved on CI ("has not
// answered for 355 ms", a leader's watchdog). Where chrt is missing, nice 19.
const CHRT = ['/usr/bin/chrt', '/bin/chrt'].find((p) => statSafe(p));
const YIELDING = CHRT ? [CHRT, '--idle', '0'] : ['nice', '-n', '19'];
const YIELDING_NAME = CHRT ? 'SCHED_IDLE' : 'nice 19';
const tiers = [
  {
    name: 'clocked',
    title: `tests on their own clock, ${concurrency} files at a time beside the real-time tier and ${concurrencyAlone} after it, at ${YIELDING_NAME}`,
    files: longestFirst(files.filter((f) => !f.endsWith(RT_SUFFIX))),
    concurrency,
    concurrencyAlone,
    pooled: true,
    yields: true,
    tag: '',
  },
  {
    name: 'rt',
    title: 'real-time tier, one file at a time',
    files: files.filter((f) => f.endsWith(RT_SUFFIX)),
    concurrency: 1,
    yields: false,
    tag: 'rt│ ',
  },
].filter((t) => t.files.length > 0 && (tierArg === undefined || t.name === tierArg));

// node's summary lines: "ℹ tests 12" (spec reporter) or "# tests 12" (tap).
const SUMMARY = /^(?:ℹ|#) (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)\s*$/;

// What failed, printed again as the run's last lines: CI keeps the end of a log, and a failure deep
// in the real-time tier's output (or in a pooled file's, printed when that file ended) would
// otherwise be cut off above the summary. The spec reporter's own "✖ failing tests:" block, each
// trimmed to its first lines.
const FAILURE_LINES = 40;
const failures = [];
function noteFailures(label, output) {
  const at = output.indexOf('✖ failing tests:');
  const block = at >= 0 ? output.slice(at).split('\n').slice(1) : [];
  const shown = block
    .filter((l) => !SUMMARY.test(l) && !/^\s+at .*\(node:|^\s+at async .*\(node:/.test(l))
    .slice(0, FAILURE_LINES);
  failures.push(`✖ ${label}${shown.length ? `\n${shown.join('\n')}` : ''}`);
}

function readRows(tsv) {
  try {
    return readFileSync(tsv, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t'));
  } catch {
    return [];
  }
}

// A tier's costliest files: by CPU (the file's process and every process it waited for — on CI's 2
// cores the suite's length is its CPU time over two), beside the summed time of their top-level
// tests. Where CI's minutes go is then in every CI log, not guessed.
function printSlowest(tier, timesFile, cpuFile) {
  const rows = readRows(timesFile);
  const cpu = new Map(readRows(cpuFile).map(([sec, file]) => [sourceName(file), Number(sec)]));
  const times = rows.map(([sec, file]) => [sourceName(file), Number(sec)]);
  const byCost = [...times].sort(([fa, a], [fb, b]) => (cpu.get(fb) ?? b) - (cpu.get(fa) ?? a));
  const sum = (xs) => xs.reduce((s, x) => s + x, 0);
  console.log(
    `ℹ ${tier.name} tier, costliest files (all ${rows.length}: ${sum([...cpu.values()]).toFixed(0)} CPU-s; tests' time ${sum(times.map(([, s]) => s)).toFixed(0)} s):`,
  );
  for (const [file, sec] of byCost.slice(0, 15))
    console.log(`ℹ   ${(cpu.get(file)?.toFixed(1) ?? '?').padStart(6)} CPU-s ${sec.toFixed(1).padStart(6)} s  ${file}`);
  // Every file's figures, for whoever cuts the suite's time next (test-output/ is not committed).
  mkdirSync(join(root, 'test-output'), { recursive: true });
  writeFileSync(
    join(root, 'test-output', `test-cost-${tier.name}.tsv`),
    byCost.map(([file, sec]) => `${cpu.get(file)?.toFixed(1) ?? ''}\t${sec.toFixed(1)}\t${file}\n`).join(''),
  );
  return times;
}

const REPORTERS = (timesFile) => [
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  `--test-reporter=${join(root, 'scripts/file-times-reporter.mjs')}`,
  `--test-reporter-destination=${timesFile}`,
];
// The tests run transpiled from build/ (scripts/runtime-build.mjs, built below when stale), with
// plain node: through tsx each file's process paid ≈ 0.7 CPU-s more to load the same modules.
// TANDEM_FROM_SOURCE=1 runs the sources through tsx instead, as the CLI does.
const fromBuild = process.env.TANDEM_FROM_SOURCE !== '1';
const BUILD_TEST = join(root, 'build', 'test');
/** The file node runs for a test file named by its source (`test/x.test.ts`). */
const runPath = (file) => (fromBuild ? join(root, 'build', file.replace(/\.ts$/, '.js')) : join(root, file));
/** A path as reported back (absolute, maybe in build/) → the source file's name from the root. */
const sourceName = (path) => {
  const rel = relative(root, path);
  return path.startsWith(BUILD_TEST) ? rel.slice('build/'.length).replace(/\.js$/, '.ts') : rel;
};
const PRELOADS = [
  ...(fromBuild ? ['--enable-source-maps'] : ['--import', 'tsx']),
  '--import',
  join(root, 'scripts/test-file-cpu.mjs'),
];
// The clocked tier's processes, and every process they start, compile the physics engines'
// WebAssembly with V8's baseline compiler only (src/sim/wasm-tier.ts): most live seconds, and the
// optimizing compiler's background work cost more than it won back (a station's start 4.5 → 2.5
// CPU-s, a cell rollout test 8.4 → 6.7); a file with a minute of physics sets it back at its top.
// The real-time tier keeps V8's default, as the product runs: its cells step physics against the
// wall clock in one thread with the driver and the leader, where the steady-state speed counts.
// The same arithmetic either way; an explicit setting is kept.
const CLOCKED_ENV = { TANDEM_WASM_TIER: 'baseline', ...process.env };
const yielding = (tier, argv) => (tier.yields ? [...YIELDING, ...argv] : argv);

/**
 * The clocked tier from one queue of files, each file in a process of its own (node runs a test
 * file's tests itself when started on it, with the same reporters): `tier.concurrency` files at a
 * time until `alone` resolves (the real-time tier has ended), then `tier.concurrencyAlone`.
 * `node --test` fixes its concurrency for the whole run, so it cannot widen when the real-time tier
 * ends. Each file's output is printed whole when it ends; the summary lines are added up.
 */
function runPooledTier(tier, alone) {
  return new Promise((resolve) => {
    console.log(`\n▶ ${tier.title}: ${tier.files.length} files`);
    const t0 = performance.now();
    const timesDir = mkdtempSync(join(tmpdir(), 'tandem-test-times-'));
    const cpuFile = join(timesDir, 'cpu.tsv');
    const queue = [...tier.files];
    const timesFiles = [];
    const counts = {};
    let running = 0;
    let code = 0;
    let widened = false;
    const limit = () => (widened ? tier.concurrencyAlone : tier.concurrency);
    const start = (file) => {
      running += 1;
      const timesFile = join(timesDir, `times-${timesFiles.length}.tsv`);
      timesFiles.push(timesFile);
      const path = runPath(file);
      const [cmd, ...rest] = yielding(tier, [
        process.execPath,
        ...PRELOADS,
        ...REPORTERS(timesFile),
        ...passThrough,
        path,
      ]);
      const child = spawn(cmd, rest, {
        cwd: root,
        stdio: ['ignore', 'pipe', 'inherit'],
        // TANDEM_TEST_FILE_PROCESS names the file this process runs (scripts/test-file-cpu.mjs).
        env: { ...CLOCKED_ENV, TANDEM_TEST_CPU_FILE: cpuFile, TANDEM_TEST_FILE_PROCESS: path },
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.on('close', (exit, signal) => {
        running -= 1;
        let summed = false;
        for (const line of out.split('\n')) {
          const m = SUMMARY.exec(line);
          if (m && m[1] !== 'duration_ms') {
            counts[m[1]] = (counts[m[1]] ?? 0) + Number(m[2]);
            summed = true;
          }
        }
        process.stdout.write(out.endsWith('\n') || out === '' ? out : `${out}\n`);
        if (exit !== 0) {
          code = 1;
          noteFailures(file, out);
          // A file that died before node's summary (a crash, a signal) is a failure the counts miss.
          if (!summed || !/^ℹ fail [1-9]/m.test(out)) {
            counts.fail = (counts.fail ?? 0) + 1;
            console.log(`✖ ${file} ended with ${signal ?? `exit ${exit}`} without a failing test to show for it`);
          }
        }
        pump();
      });
    };
    const pump = () => {
      while (running < limit() && queue.length > 0) start(queue.shift());
      if (running === 0 && queue.length === 0) finish();
    };
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      const seconds = (performance.now() - t0) / 1000;
      const timesFile = join(timesDir, 'files.tsv');
      writeFileSync(timesFile, timesFiles.map((f) => (statSafe(f) ? readFileSync(f, 'utf8') : '')).join(''));
      const fileTimes = printSlowest(tier, timesFile, cpuFile);
      rmSync(timesDir, { recursive: true, force: true });
      console.log(`■ ${tier.name} tier: ${seconds.toFixed(1)} s wall, exit ${code}`);
      resolve({ tier, code, counts, seconds, fileTimes });
    };
    void alone.then(() => {
      if (!widened && queue.length > 0)
        console.log(`ℹ the real-time tier has ended: ${tier.concurrencyAlone} clocked files at a time`);
      widened = true;
      pump();
    });
    pump();
  });
}

function runTier(tier) {
  return new Promise((resolve) => {
    console.log(`\n▶ ${tier.title}: ${tier.files.length} files`);
    const t0 = performance.now();
    const timesDir = mkdtempSync(join(tmpdir(), 'tandem-test-times-'));
    const timesFile = join(timesDir, 'files.tsv');
    const cpuFile = join(timesDir, 'cpu.tsv');
    const argv = [
      process.execPath,
      ...PRELOADS,
      '--test',
      ...REPORTERS(timesFile),
      `--test-concurrency=${tier.concurrency}`,
      ...passThrough,
      ...tier.files.map(runPath),
    ];
    // A wrapper command rather than a change after the spawn: the priority holds from the first instruction.
    const [cmd, ...rest] = yielding(tier, argv);
    const child = spawn(cmd, rest, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, TANDEM_TEST_CPU_FILE: cpuFile },
    });
    const say = (line) => console.log(`${tier.tag}${line}`);
    const counts = {};
    let pending = '';
    let output = '';
    const scan = (text) => {
      output += text;
      for (const line of text.split('\n')) {
        const m = SUMMARY.exec(line);
        if (m) counts[m[1]] = Number(m[2]);
      }
    };
    // Whole lines only, so the two tiers' output interleaves line by line.
    child.stdout.on('data', (chunk) => {
      const text = pending + chunk.toString('utf8');
      const cut = text.lastIndexOf('\n');
      const lines = text.slice(0, cut + 1);
      if (lines) process.stdout.write(tier.tag ? lines.replace(/^(?=.)/gm, tier.tag) : lines);
      scan(lines);
      pending = text.slice(cut + 1);
    });
    child.on('close', (code, signal) => {
      if (pending) say(pending);
      scan(pending);
      const seconds = (performance.now() - t0) / 1000;
      const fileTimes = printSlowest(tier, timesFile, cpuFile);
      rmSync(timesDir, { recursive: true, force: true });
      console.log(`■ ${tier.name} tier: ${seconds.toFixed(1)} s wall, exit ${code ?? signal}`);
      if (code !== 0) noteFailures(`the ${tier.name} tier (exit ${code ?? signal})`, output);
      resolve({ tier, code: code ?? 1, counts, seconds, fileTimes });
    });
  });
}

// The CLI the tests start runs the prebuilt runtime when it is fresh (scripts/runtime-build.mjs), and
// the tests run from it: built here once, so hundreds of CLI starts and test files do not each pay
// tsx's loading.
if (!fresh()) {
  const t0 = performance.now();
  const n = await buildRuntime();
  console.log(`built the CLI's runtime (build/): ${n} files in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// `--check` (what `npm test` passes): the type check, lint, import-circle and format checks
// (scripts/check.mjs) run beside the tiers instead of before them, yielding the CPU as the clocked
// tier does. Before them they held the tests back ≈ 28 s while the two cores were not yet full;
// beside them they take CPU the tiers leave idle (≈ 15 % of the two cores over a full run).
// Their verdict counts as the tests' does: a failing check fails the run.
function runCheck() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const [cmd, ...rest] = [...YIELDING, process.execPath, join(root, 'scripts/check.mjs')];
    const child = spawn(cmd, rest, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - t0) / 1000;
      process.stdout.write(`\n▶ npm run check, beside the tests\n${out}${out.endsWith('\n') ? '' : '\n'}`);
      console.log(`■ check: ${seconds.toFixed(1)} s wall, exit ${code ?? signal}`);
      if (code !== 0)
        failures.push(`✖ npm run check (exit ${code ?? signal}): its output is above, after "▶ npm run check"`);
      resolve({ code: code ?? 1 });
    });
  });
}

const started = performance.now();
const checkRun = withCheck ? runCheck() : Promise.resolve({ code: 0 });
const rtTier = tiers.find((t) => t.name === 'rt');
const rtRun = rtTier ? runTier(rtTier) : Promise.resolve(undefined);
const results = await Promise.all(
  tiers.map((tier) => (tier === rtTier ? rtRun : tier.pooled ? runPooledTier(tier, rtRun) : runTier(tier))),
);
const checkResult = await checkRun;
const wallSeconds = (performance.now() - started) / 1000;

if (results.length > 1) {
  console.log('\n■ all tiers');
  for (const key of ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo']) {
    console.log(`ℹ ${key} ${results.reduce((s, r) => s + (r.counts[key] ?? 0), 0)}`);
  }
  console.log(`ℹ duration_ms ${(wallSeconds * 1000).toFixed(3)}`);
  for (const r of results)
    console.log(
      `ℹ tier ${r.tier.name}: ${r.tier.files.length} files, ${r.seconds.toFixed(1)} s, fail ${r.counts.fail ?? '?'}`,
    );
}
if (recordDurations) {
  for (const r of results) for (const [file, sec] of r.fileTimes) durations.set(file, sec);
  const kept = [...durations]
    .filter(([file]) => files.includes(file) || statSafe(join(root, file)))
    .sort(([a], [b]) => a.localeCompare(b));
  writeFileSync(DURATIONS, kept.map(([file, sec]) => `${file}\t${sec.toFixed(1)}\n`).join(''));
  console.log(`recorded ${kept.length} files' durations in ${relative(root, DURATIONS)}`);
}
if (failures.length > 0) console.log(`\n■ what failed\n${failures.join('\n')}`);
process.exit(results.some((r) => r.code !== 0) || checkResult.code !== 0 ? 1 : 0);

function statSafe(p) {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
