/**
 * Teleop on virtual time is reproducible: the same scripted leader on the same cell records the
 * same takes, message for message, whatever the machine and the disk did in between. What sysid
 * fits on must not depend on how long a file took to open or how long the arms took to come up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { readIndexed } from '../helpers/mcap.js';

/** Each topic's messages with their time from the first message of the take (the epoch is the wall clock's at start). */
async function takeContent(file: string): Promise<Map<string, unknown[]>> {
  const { byTopic } = await readIndexed(file);
  const first = [...byTopic.values()].reduce(
    (m, list) => (list[0].logTime < m ? list[0].logTime : m),
    BigInt(Number.MAX_SAFE_INTEGER) * 1000n,
  );
  const out = new Map<string, unknown[]>();
  for (const [topic, list] of byTopic) {
    out.set(
      topic,
      list.map(({ logTime, message }) => {
        const header = message.header as { stamp?: { sec: number; nanosec: number } } | undefined;
        const stampNs = header?.stamp
          ? BigInt(header.stamp.sec) * 1_000_000_000n + BigInt(header.stamp.nanosec) - first
          : undefined;
        return {
          sinceStartNs: String(logTime - first),
          stampNs: stampNs === undefined ? undefined : String(stampNs),
          message: { ...message, header: header ? { ...header, stamp: undefined } : undefined },
        };
      }),
    );
  }
  return out;
}

test('two teleop sessions of the emulated leader on the virtual-time cell record identical takes (each message, and its time in the take)', {
  timeout: 1_200_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-teleop-virtual-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'cell.json'), JSON.stringify({ type: 'yam-cell', clock: 'virtual' }));
  const run = async (args: string[]) => {
    const r = await runTandem(args, { cwd: dir });
    assert.equal(r.code, 0, `${args.slice(0, 2).join(' ')}: exit ${r.code}: ${r.stderr}`);
    return r;
  };
  for (const out of ['a', 'b']) {
    await run([
      'teleop',
      'record',
      '--leader',
      'emulated-yam',
      '--follower',
      'cell.json',
      '--task',
      'bottles-in-the-bin',
      '--empty-table',
      '--episodes',
      '2',
      '--seconds',
      '2',
      '--reset',
      '0.5',
      '--out',
      out,
      '--data',
      `data-${out}`,
    ]);
  }
  const files = (d: string) =>
    readdirSync(join(dir, d))
      .filter((f) => f.endsWith('.mcap'))
      .sort();
  assert.equal(files('a').length, 2);
  assert.equal(files('b').length, 2);
  for (let k = 0; k < 2; k++) {
    const [a, b] = await Promise.all([
      takeContent(join(dir, 'a', files('a')[k])),
      takeContent(join(dir, 'b', files('b')[k])),
    ]);
    assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
    assert.ok((a.get('/joint_states')?.length ?? 0) >= 490, `take ${k + 1} holds its 2 s of joint states`);
    for (const [topic, list] of a) assert.deepEqual(b.get(topic), list, `take ${k + 1}, ${topic}`);
  }
});
