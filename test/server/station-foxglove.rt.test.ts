/**
 * A real `tandem station` on the emulated cell with the Foxglove live view asked for
 * (TANDEM_FOXGLOVE_PORT=0, as `npm start` takes it): it says where, a Foxglove-speaking `ws`
 * client decodes the held arms' joint states with the positions the station API reports, and /tf
 * carries the arm links and the cell's objects and fixtures of the layout on its table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startStation, type StationProcess } from '../helpers/station-process.js';
import { FoxgloveTestClient } from '../helpers/foxglove-client.js';
import { TOKEN_HEADER, type RigStatus } from '../../src/server/api-types.js';
import { defaultCellTable } from '../../src/emulated-cell/register.js';

const RIG = { type: 'yam-cell', transport: 'slcan', replyDeadlineMs: 350 };

async function rig(station: StationProcess, command?: 'hold' | 'damp'): Promise<RigStatus> {
  const headers = { [TOKEN_HEADER]: station.token, 'content-type': 'application/json' };
  const res = command
    ? await fetch(`${station.base}/api/rig/command`, { method: 'POST', headers, body: JSON.stringify({ command }) })
    : await fetch(`${station.base}/api/rig`, { headers });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as RigStatus;
}

async function foxgloveUrl(station: StationProcess): Promise<string> {
  const start = Date.now();
  for (;;) {
    const m = /Foxglove live view on (ws:\/\/127\.0\.0\.1:\d+)/.exec(station.stdout());
    if (m) return m[1];
    if (Date.now() - start > 10_000) throw new Error(`no Foxglove line; stdout: ${station.stdout()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface JointStateMsg {
  name: string[];
  position: Float64Array;
}

test("tandem station with TANDEM_FOXGLOVE_PORT serves the emulated cell live to a Foxglove client: joint states as the API reports them, the layout's objects on /tf", async (t) => {
  const station = await startStation({ rigConfig: RIG, env: { TANDEM_FOXGLOVE_PORT: '0' } });
  t.after(() => station.dispose());
  const url = await foxgloveUrl(station);
  const client = await FoxgloveTestClient.connect(url);
  t.after(() => client.close());
  const channels = await client.channels();
  assert.equal(client.json[0].op, 'serverInfo');
  assert.equal(client.json[0].name, 'tandem station (yam-cell)');
  const id = (topic: string): number => channels.find((c) => c.topic === topic)!.id;

  await rig(station, 'hold');
  client.subscribe(1, id('/joint_states'));
  client.subscribe(2, id('/left/joint_states'));
  client.subscribe(3, id('/tf'));
  // The held pose, as the station's own API reports it and as Foxglove decodes it.
  // The arms may still be settling into the hold: the live sample must lie between the API's
  // readings just before and just after it (within 2 mrad).
  await client.next(1);
  const api = (await rig(station)).position;
  const live = (await client.next(1)).message as JointStateMsg;
  const after = (await rig(station)).position;
  assert.equal(live.name.length, 14);
  assert.equal(live.name[0], 'left_joint1');
  const within = (q: number, i: number): boolean =>
    q > Math.min(api[i], after[i]) - 2e-3 && q < Math.max(api[i], after[i]) + 2e-3;
  live.position.forEach((q, i) =>
    assert.ok(within(q, i), `${live.name[i]}: Foxglove ${q}, API ${api[i]} then ${after[i]}`),
  );
  assert.ok(
    api.some((q) => Math.abs(q) > 1e-3),
    `a real pose, not zeros: ${api.join(', ')}`,
  );
  const left = (await client.next(2)).message as JointStateMsg;
  const later = (await rig(station)).position;
  left.position.forEach((q, i) =>
    assert.ok(
      q > Math.min(api[i], later[i]) - 2e-3 && q < Math.max(api[i], later[i]) + 2e-3,
      `left ${left.name[i]}: ${q}, API ${api[i]} then ${later[i]}`,
    ),
  );

  const tf = (await client.next(3)).message as {
    transforms: { child_frame_id: string; transform: { translation: { z: number } } }[];
  };
  const frames = new Map(tf.transforms.map((x) => [x.child_frame_id, x.transform.translation]));
  const { layout } = defaultCellTable();
  for (const o of layout.objects) {
    assert.ok(frames.has(o.id), `/tf has the layout's object ${o.id}: ${[...frames.keys()].join(', ')}`);
    assert.ok(
      frames.get(o.id)!.z > -0.05 && frames.get(o.id)!.z < 0.3,
      `${o.id} stands on the table (z ${frames.get(o.id)!.z})`,
    );
  }
  for (const f of layout.fixtures ?? []) assert.ok(frames.has(f.id), `/tf has the fixture ${f.id}`);
  for (const link of ['left_base_link', 'left_gripper', 'right_gripper']) assert.ok(frames.has(link), link);
  await rig(station, 'damp');
});
