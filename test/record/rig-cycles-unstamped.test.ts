/**
 * A rig thread can run a cycle before its first reading: that cycle carries no stamp (time 0 on the
 * rig's clock). Recorded, its log time fell before 1970 and wrapped to the end of time in MCAP's
 * unsigned stamps, its chunk claimed to start there, and an indexed reader reading in time order
 * (Foxglove, the mcap CLI) lost the rest of that chunk — the first events of a take. The recorder
 * counts such a cycle and keeps it out of the file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EpisodeRecorder } from '../../src/record/episode-recorder.js';
import { EPISODE_END_METADATA_NAME, TOPICS } from '../../src/record/episode-format.js';
import { RigCycleRing } from '../../src/rig/rig-cycle-ring.js';
import { yamRigModel } from '../../src/rig/yam.js';
import type { RigState } from '../../src/rig/contract.js';
import { readIndexed } from '../helpers/mcap.js';

const UNIX_OFFSET_S = 1_796_000_000;

function state(timeS: number): RigState {
  const position = new Float64Array(14).fill(0.1);
  return {
    timeS,
    mode: 'active',
    position,
    velocity: position.map(() => 0),
    effort: position.map(() => 0),
    faults: [],
  };
}

test('a rig cycle without a stamp is counted, not recorded: the file starts at its first event and an indexed reader reads every event', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-unstamped-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ring = new RigCycleRing(64);
  const file = join(dir, 'e.mcap');
  const rec = await EpisodeRecorder.open({
    file,
    rigModel: yamRigModel(),
    metadata: {},
    unixOffsetS: UNIX_OFFSET_S,
    rigCycles: { ring, rateHz: 250, clockOffsetS: () => UNIX_OFFSET_S },
  });
  // The thread's first cycle, before any reading; then its stamped cycles beside the take's events.
  ring.push(1, state(0), undefined);
  rec.event(10, 'takeover', 'operator', 'The operator takes over.');
  for (let i = 0; i < 5; i++) ring.push(2 + i, state(10 + i * 0.004), undefined);
  rec.event(10.02, 'mark', 'operator', 'A note.');
  const summary = await rec.close({ outcome: 'completed' });
  assert.equal(summary.status, 'finished', summary.failure);

  const ep = await readIndexed(file);
  const cycles = ep.byTopic.get(TOPICS.rigCycles) ?? [];
  assert.deepEqual(
    cycles.map((c) => c.message.cycle),
    [2, 3, 4, 5, 6],
    'the stamped cycles, and not the one without a stamp',
  );
  const events = (ep.byTopic.get(TOPICS.events) ?? []).map((m) => m.message.message);
  assert.ok(events.includes('The operator takes over.') && events.includes('A note.'), JSON.stringify(events));
  const first = [...ep.byTopic.values()].flat().reduce((m, x) => (x.logTime < m ? x.logTime : m), 2n ** 64n);
  assert.equal(
    first,
    BigInt(UNIX_OFFSET_S + 10) * 1_000_000_000n,
    'the file starts at the first event, not before 1970',
  );
  const end = ep.metadata.get(EPISODE_END_METADATA_NAME);
  assert.equal(end?.get('rig_cycles_unstamped'), '1');
  assert.equal(end?.get('rig_cycles_recorded'), '5');
});
