/**
 * Real `tandem` processes for the distributed-sweep tests: spawned from bin/tandem.js, their
 * stderr watched line by line, stopped after each test; and the store they leave behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, importAsBin, PROJECT_ROOT } from './cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';

export interface Running {
  readonly child: ChildProcess;
  stderr(): string;
  stdout(): string;
  /** Resolves when stderr matches (every match counted) `count` times. */
  waitFor(re: RegExp, count?: number, timeoutMs?: number): Promise<void>;
  readonly exited: Promise<number>;
}

export function start(args: readonly string[]): Running {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : -1))),
  );
  return {
    child,
    stderr: () => err,
    stdout: () => out,
    exited,
    waitFor: (re, count = 1, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const t0 = Date.now();
        const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
        const poll = setInterval(() => {
          if ((err.match(g) ?? []).length >= count) {
            clearInterval(poll);
            resolve();
          } else if (Date.now() - t0 > timeoutMs || child.exitCode !== null) {
            clearInterval(poll);
            reject(new Error(`no ${count}× ${re} in stderr:\n${err}`));
          }
        }, 20);
      }),
  };
}

export async function stopProcess(r: Running): Promise<void> {
  if (r.child.exitCode === null && r.child.signalCode === null) {
    r.child.kill('SIGINT');
    const timer = setTimeout(() => r.child.kill('SIGKILL'), 15_000);
    await r.exited;
    clearTimeout(timer);
  }
}

export function until(cond: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const tick = async (): Promise<void> => {
      if (await cond()) return resolve();
      if (Date.now() - t0 > timeoutMs) return reject(new Error('condition not met in time'));
      setTimeout(() => void tick(), 50);
    };
    void tick();
  });
}

export function setup(tiers: number[]): { dir: string; file: string; data: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-queue-'));
  const file = join(dir, 'bottles.json');
  writeFileSync(file, serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers, perTier: 1, seed: 5 })));
  return { dir, file, data: join(dir, 'data') };
}

/** (layout/repeat → final-state hash) of every rollout in a data dir's store, and the row count. */
export function storedHashes(data: string): { rows: number; hashes: Map<string, string | null>; sessions: number } {
  // Before the coordinator has created its store there is nothing stored yet.
  if (!existsSync(join(data, 'tandem.sqlite'))) return { rows: 0, hashes: new Map(), sessions: 0 };
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    const rows = store.listRollouts({});
    return {
      rows: rows.length,
      hashes: new Map(rows.map((r) => [`${r.layoutIndex}/${r.repeatIndex}`, r.finalStateHash])),
      sessions: store.listSessions({}).length,
    };
  } finally {
    store.close();
  }
}

/** A `tandem` command running in this process (see runTandemInProcess): its output, and Ctrl-C. */
export interface InProcess {
  stderr(): string;
  stdout(): string;
  /** Resolves when stderr matches (every match counted) `count` times. */
  waitFor(re: RegExp, count?: number, timeoutMs?: number): Promise<void>;
  /** Its exit code, as bin/tandem.js would set it. */
  readonly exited: Promise<number>;
  /** Ctrl-C: the abort bin/tandem.js sends the command on SIGINT. */
  interrupt(): void;
}

/**
 * Starts a command in this process, through the same `runCli` entry point and io as bin/tandem.js:
 * for a worker or coordinator the test never kills outright, this saves the ≈ 1–1.5 CPU-s a child
 * process spends starting and loading modules (its rollout thread still runs on a thread of its own).
 */
export function startInProcess(args: readonly string[]): InProcess {
  let err = '';
  let out = '';
  const watchers = new Set<() => void>();
  const controller = new AbortController();
  let ended = false;
  const exited = importAsBin('src/app/cli.ts', () => import('../../src/app/cli.js'))
    .then(({ runCli }) =>
      runCli(args, {
        out: (t) => void (out += t),
        err: (t) => {
          err += t;
          for (const w of watchers) w();
        },
        env: { ...process.env },
        cwd: PROJECT_ROOT,
        signal: controller.signal,
      }),
    )
    .finally(() => {
      ended = true;
      for (const w of watchers) w();
    });
  return {
    stderr: () => err,
    stdout: () => out,
    exited,
    interrupt: () => controller.abort(),
    waitFor: (re, count = 1, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
        const done = (error?: Error): void => {
          clearTimeout(timer);
          watchers.delete(check);
          if (error) reject(error);
          else resolve();
        };
        // Checked on each write to stderr, not polled.
        const check = (): void => {
          if ((err.match(g) ?? []).length >= count) done();
          else if (ended) done(new Error(`no ${count}× ${re} in stderr before the command ended:\n${err}`));
        };
        const timer = setTimeout(() => done(new Error(`no ${count}× ${re} in stderr:\n${err}`)), timeoutMs);
        watchers.add(check);
        check();
      }),
  };
}

/** Ctrl-C to a command still running in this process, and its end awaited. */
export async function stopInProcess(r: InProcess): Promise<void> {
  r.interrupt();
  await r.exited;
}
