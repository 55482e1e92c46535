/**
 * The session engine's operators: the emulated cell's scripted operator (the cell places the
 * layout with its seeded noise when the rig comes up, and the operator scores from the cell's end
 * state, with simulated operator seconds), and a person at a terminal (stdin prompts, so a session
 * runs over SSH without the UI).
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { createRng } from '../layouts/random.js';
import type { ObjectEndState } from '../tasks/types.js';
import type { OperatorStep, PlaceAnswer, ScoreAnswer, SessionOperator, Timed } from '../session/ports.js';
import type { SessionProgress } from '../session/journal-state.js';
import { progressLine } from '../session/journal-state.js';
import { countQuestion } from '../session/score-entry.js';

/**
 * The emulated cell's scripted operator's name, as stored with its scores (the session's and a
 * single rollout's alike): it places a layout from its projected outlines (the cell world does,
 * with seeded placement noise) and scores a rollout from each object's end state on the cell's
 * table, in the task's own terms — the same shape a human operator enters.
 */
export const SCRIPTED_OPERATOR = 'scripted operator (emulated cell)';

/**
 * Simulated seconds, seeded by the rollout's seed: a person takes longer for more objects, and
 * never exactly the same time twice. Place ~15 s + 8 s an object, score ~4 s + 3 s an object,
 * reset ~8 s + 5 s an object, each ±20 %.
 */
function simulatedS(step: OperatorStep, what: 'place' | 'score' | 'reset'): number {
  const n = step.layout.objects.length;
  const [base, per, salt] = what === 'place' ? [15, 8, 1] : what === 'score' ? [4, 3, 2] : [8, 5, 3];
  const jitter = 0.8 + 0.4 * createRng(step.seed * 4 + salt + step.attempt * 16).next();
  return Math.round((base + per * n) * jitter * 10) / 10;
}

/** Redos of one planned rollout before the scripted operator closes it (a shared machine starves the cell's motors now and then). */
const MAX_SCRIPTED_REDOS = 10;

/** `hands`: what the operator really puts on the table (`--placement-error-mm`); default exactly the layout, within the cell's placement noise. */
export function scriptedOperator(
  log: (line: string) => void,
  hands?: { placed(step: OperatorStep): void },
): SessionOperator {
  let pausedS = 0;
  return {
    name: SCRIPTED_OPERATOR,
    place(step) {
      hands?.placed(step);
      return Promise.resolve({ action: 'confirm', simulatedS: simulatedS(step, 'place') });
    },
    score(step): Promise<ScoreAnswer> {
      const seen = step.run.tableEndStates;
      // The cell shows its table after every valid episode; without it there is nothing to look at.
      if (!seen)
        return Promise.resolve({
          action: 'redo',
          reason: 'the scripted operator saw no end state of the table',
          simulatedS: 0,
        });
      return Promise.resolve({ action: 'score', endStates: seen, simulatedS: simulatedS(step, 'score') });
    },
    refused(problem) {
      // A scripted score the task refuses is a bug in the cell, not an operator's typo to retry.
      throw new Error(`the ${SCRIPTED_OPERATOR}'s score was refused: ${problem}`);
    },
    reset: (step) => Promise.resolve({ simulatedS: simulatedS(step, 'reset') }),
    // A rollout cut off, stopped, e-stopped or faulted by the rig is redone (a few times: a rig
    // that keeps faulting needs a person); one the policy failed is its result.
    offerRedo: (step, why) => Promise.resolve(why.kind !== 'policy-failed' && step.attempt < MAX_SCRIPTED_REDOS),
    // Paused because the cell is not safe (an interlock open): look again in a second, as a
    // person would after closing the door; after a minute of it, stop for now (resumable) rather
    // than journal pauses forever.
    paused: async () => {
      pausedS += 1;
      await new Promise((r) => setTimeout(r, 1000));
      return pausedS <= MAX_SCRIPTED_PAUSED_S;
    },
    breakReminder: () => Promise.resolve({ simulatedS: 0 }),
    say: log,
  };
}

/** Seconds the scripted operator waits for a blocked cell before it stops the session for now. */
const MAX_SCRIPTED_PAUSED_S = 60;

/** Line-at-a-time reading that notices the end of input (Ctrl-D, a closed SSH pipe): undefined. */
class Lines {
  private readonly queue: string[] = [];
  private waiting: ((l: string | undefined) => void) | undefined;
  /** Takes every line typed from now on, ahead of the prompts, until the signal aborts. */
  private watcher: ((l: string) => void) | undefined;
  private closed = false;
  private readonly rl: Interface;
  constructor(input: Readable) {
    this.rl = createInterface({ input, terminal: false });
    this.rl.on('line', (l) => {
      if (this.watcher) {
        this.watcher(l);
        return;
      }
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(l);
      } else this.queue.push(l);
    });
    this.rl.on('close', () => {
      this.closed = true;
      this.waiting?.(undefined);
      this.waiting = undefined;
    });
  }
  next(): Promise<string | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.queue.shift());
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((r) => (this.waiting = r));
  }
  /** Every line typed from now until `signal` aborts goes to `take` (lines typed ahead stay for the prompts). */
  watch(take: (l: string) => void, signal: AbortSignal): void {
    if (signal.aborted) return;
    this.watcher = take;
    signal.addEventListener('abort', () => void (this.watcher === take && (this.watcher = undefined)), { once: true });
  }
  close(): void {
    this.rl.close();
  }
}

export interface TerminalOperator extends SessionOperator {
  close(): void;
}

/**
 * A person at the terminal: every answer is a line on stdin. End of input stops the session for now.
 * `marks`: while the rig runs, a line typed then marks an object done (its time to success); on by
 * default only when stdin is a terminal — answers piped in ahead are never taken for marks.
 */
export function terminalOperator(
  input: Readable,
  output: Writable,
  name = 'operator (terminal)',
  options: {
    readonly marks?: boolean;
    /** The leader's takeover: the line `e` while a rollout runs takes over from the policy, or gives back. */
    readonly takeover?: { toggle(): boolean };
  } = {},
): TerminalOperator {
  const marks = options.marks ?? (input as Readable & { isTTY?: boolean }).isTTY === true;
  const takeover = options.takeover;
  const lines = new Lines(input);
  const ask = async (q: string): Promise<string | undefined> => {
    output.write(q);
    const l = await lines.next();
    return l?.trim();
  };
  const head = (s: OperatorStep): string =>
    `[${s.slot + 1}/${s.total}] layout ${s.layout.index} (tier ${s.layout.tier}), ${s.label}${s.attempt > 0 ? `, redo ${s.attempt}` : ''}`;
  return {
    name,
    async place(step): Promise<PlaceAnswer> {
      const ids = step.layout.objects.map((o) => `${o.id} ${o.posture}`).join(', ');
      for (;;) {
        const a = await ask(
          `${head(step)}: place ${ids} as projected.\n  Enter = placed, go; p = pause; s = stop for now; e = e-stop > `,
        );
        if (a === undefined || a === 's') return { action: 'stop' };
        if (a === '') return { action: 'confirm' };
        if (a === 'p') return { action: 'pause' };
        if (a === 'e') return { action: 'estop' };
        output.write(`  '${a}' is not an answer here: Enter, p, s or e.\n`);
      }
    },
    watchRun(step, mark, signal): void {
      if (!marks && !takeover) return;
      output.write(
        `  Running.${marks ? ' Each time an object is done, press Enter (or type its id, then Enter): its time to success.' : ''}${takeover ? ' e, then Enter: take over with the leader (again: give back).' : ''}\n`,
      );
      const ids = new Set(step.layout.objects.map((o) => o.id));
      lines.watch((l) => {
        const id = l.trim();
        if (takeover && id.toLowerCase() === 'e') {
          if (!takeover.toggle()) output.write('  No rollout is running to take over.\n');
          return;
        }
        if (!marks) return;
        if (id !== '' && !ids.has(id))
          output.write(
            `  '${id}' is not an object of this layout (${[...ids].join(', ')}): marked done without a name.\n`,
          );
        mark(ids.has(id) ? { objectId: id } : {});
      }, signal);
    },
    async score(step): Promise<ScoreAnswer> {
      const regions = step.task.regionIds;
      const ends: ObjectEndState[] = [];
      output.write(
        `${head(step)}: ${step.run.status === 'valid' ? 'the episode ran its length' : `ended: ${step.run.reason ?? step.run.status}`}. Score it (r = redo this rollout).\n`,
      );
      const q = countQuestion(step.task);
      if (q) {
        const objects = step.layout.objects.length;
        const a = await ask(
          `  How many of the ${objects} objects are ${q.kind === 'region' ? `in the ${q.region}` : 'upright'}? (a number; Enter = object by object) > `,
        );
        if (a === undefined) return { action: 'redo', reason: 'the operator left before scoring' };
        if (a === 'r') return { action: 'redo', reason: (await ask('  Why redo it? > ')) || 'no reason given' };
        if (a !== '') {
          const note = await ask('  Note (Enter for none) > ');
          // Any text that is not a count goes to the engine, which says what a count must be.
          return { action: 'score-count', count: /^\d+$/.test(a) ? Number(a) : NaN, ...(note ? { note } : {}) };
        }
      }
      for (const o of step.layout.objects) {
        for (;;) {
          const q =
            regions.length > 0
              ? `  ${o.id}: where is it? (${regions.join(' / ')}; Enter = none of them; off = off the table) > `
              : `  ${o.id}: upright? (y / n; off = off the table) > `;
          const a = await ask(q);
          if (a === undefined) return { action: 'redo', reason: 'the operator left before scoring' };
          if (a === 'r') return { action: 'redo', reason: (await ask('  Why redo it? > ')) || 'no reason given' };
          if (a === 'off') {
            ends.push({ id: o.id, offTable: true });
            break;
          }
          if (regions.length > 0) {
            if (a === '' || regions.includes(a)) {
              ends.push(a === '' ? { id: o.id } : { id: o.id, region: a });
              break;
            }
          } else if (a === 'y' || a === 'n') {
            ends.push({ id: o.id, upright: a === 'y' });
            break;
          }
          output.write(`  '${a}' is not one of the answers for ${o.id}.\n`);
        }
      }
      const note = await ask('  Note (Enter for none) > ');
      return { action: 'score', endStates: ends, ...(note ? { note } : {}) };
    },
    refused(problem) {
      output.write(`  Not stored: ${problem} Enter the score again.\n`);
    },
    async reset(step): Promise<Timed> {
      await ask(`${head(step)}: clear the table, then Enter > `);
      return {};
    },
    async offerRedo(step, why) {
      const a = await ask(`${head(step)} has no score (${why.kind}: ${why.reason}). Redo it? [Y/n] > `);
      return a === undefined ? true : a.toLowerCase() !== 'n';
    },
    async paused(p: SessionProgress) {
      const a = await ask(`Paused — ${progressLine(p)}. Enter = carry on, s = stop for now > `);
      return a !== undefined && a !== 's';
    },
    async breakReminder(p: SessionProgress): Promise<Timed> {
      await ask(`Time for a break (${progressLine(p)}). Enter when you are back > `);
      return {};
    },
    say: (line) => output.write(`${line}\n`),
    close: () => lines.close(),
  };
}
