/**
 * The Foxglove live view fed by a real RigHost (MirrorRig: commands mirrored to state through the
 * real safety supervisor), spoken to by a real `ws` client as Foxglove speaks: serverInfo then
 * advertise on connect, subscribe, CDR JointState decoded from the advertised schema with the
 * rig's own positions, a rollout's re-created rig followed live, unsubscribe stopping the flow,
 * and the refusals (no subprotocol, a non-loopback bind, requests it does not offer).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { MirrorRig } from '../../src/rig/mirror-rig.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { getTask } from '../../src/tasks/registry.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { RigHost, type RigParts } from '../../src/server/rig-host.js';
import { FoxgloveLiveError, FoxgloveLiveServer } from '../../src/server/foxglove-live.js';
import { FoxgloveTestClient, type AdvertisedChannel } from '../helpers/foxglove-client.js';

interface JointStateMsg {
  header: { stamp: { sec: number; nanosec: number }; frame_id: string };
  name: string[];
  position: Float64Array;
  velocity: Float64Array;
  effort: Float64Array;
}
interface TfMsg {
  transforms: {
    header: { frame_id: string };
    child_frame_id: string;
    transform: { translation: { x: number; y: number; z: number }; rotation: { w: number } };
  }[];
}

/** Two distinct poses (every joint a different value), so a slice taken from the wrong place shows. */
const POSE_A = Array.from({ length: 14 }, (_, i) => (i % 7 === 6 ? 0.3 + i / 100 : 0.05 * (i + 1) * (i % 2 ? -1 : 1)));
const POSE_B = POSE_A.map((x, i) => (i % 7 === 6 ? 0.8 : x + 0.2));

function mirrorParts(poses: number[][]): RigParts {
  let made = 0;
  return {
    type: 'mirror',
    create: ({ clock }) =>
      Promise.resolve({
        rig: new MirrorRig({ model: yamRigModel(), clock, initialPosition: poses[Math.min(made++, poses.length - 1)] }),
        services: undefined,
      }),
    motors: () => [],
    cell: () => null,
    bodies: () => [{ id: 'bottle-1', kind: 'bottle', position: [0.1, -0.05, 0.02], quaternion: [0, 0, 0, 1] }],
  };
}

async function liveOn(host: RigHost): Promise<FoxgloveLiveServer> {
  const live = new FoxgloveLiveServer({
    source: host,
    port: 0,
    name: 'tandem station (mirror)',
    metadata: { rigType: host.type },
  });
  await live.listen();
  return live;
}

const byTopic = (channels: AdvertisedChannel[], topic: string): AdvertisedChannel => {
  const c = channels.find((x) => x.topic === topic);
  assert.ok(c, `advertised ${topic}: ${channels.map((x) => x.topic).join(', ')}`);
  return c;
};

test("a Foxglove client gets serverInfo and the advertised channels, subscribes, and decodes JointState with the rig's positions per arm — following the rig a rollout re-creates", async (t) => {
  const host = new RigHost(mirrorParts([POSE_A, POSE_B]));
  await host.start();
  const live = await liveOn(host);
  t.after(async () => {
    await live.close();
    await host.close();
  });
  assert.match(live.url, /^ws:\/\/127\.0\.0\.1:\d+$/);
  const client = await FoxgloveTestClient.connect(live.url, ['foxglove.sdk.v1']);
  t.after(() => client.close());
  assert.equal(client.ws.protocol, 'foxglove.sdk.v1');
  const channels = await client.channels();
  assert.equal(client.json[0].op, 'serverInfo', 'serverInfo comes first');
  assert.equal(client.json[0].name, 'tandem station (mirror)');
  assert.deepEqual(
    client.json[0].capabilities,
    [],
    'a viewer-only server: no publishing, parameters or services offered',
  );
  assert.deepEqual(
    channels.map((c) => c.topic),
    ['/joint_states', '/left/joint_states', '/right/joint_states', '/tf'],
  );
  for (const c of channels) assert.equal(c.encoding, 'cdr');
  assert.equal(byTopic(channels, '/left/joint_states').schemaName, 'sensor_msgs/msg/JointState');
  assert.equal(byTopic(channels, '/tf').schemaName, 'tf2_msgs/msg/TFMessage');

  // Nothing arrives before a subscription.
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(client.messages.length, 0, 'no message data without a subscription');

  client.subscribe(10, byTopic(channels, '/left/joint_states').id);
  client.subscribe(11, byTopic(channels, '/right/joint_states').id);
  client.subscribe(12, byTopic(channels, '/joint_states').id);
  client.subscribe(13, byTopic(channels, '/tf').id);
  const left = (await client.next(10)).message as JointStateMsg;
  const right = (await client.next(11)).message as JointStateMsg;
  const both = (await client.next(12)).message as JointStateMsg;
  const model = host.model()!;
  assert.deepEqual(left.name, [...model.arms[0].joints.map((j) => j.name), model.arms[0].gripper.name]);
  assert.deepEqual(right.name, [
    'right_joint1',
    'right_joint2',
    'right_joint3',
    'right_joint4',
    'right_joint5',
    'right_joint6',
    'right_gripper',
  ]);
  const rigNow = Array.from(host.live()!.state.position);
  assert.deepEqual(rigNow, POSE_A, 'the rig holds pose A');
  assert.deepEqual(Array.from(left.position), rigNow.slice(0, 7), "left arm: the rig's first seven entries");
  assert.deepEqual(Array.from(right.position), rigNow.slice(7), 'right arm: the last seven');
  assert.deepEqual(Array.from(both.position), rigNow, '/joint_states: all 14, policy order');
  assert.equal(both.name.length, 14);
  // Stamped in unix time, within a second of now.
  const stampS = left.header.stamp.sec + left.header.stamp.nanosec / 1e9;
  assert.ok(Math.abs(stampS - Date.now() / 1000) < 1, `stamp ${stampS}`);
  const frame = client.of(10).at(-1)!;
  assert.ok(Math.abs(Number(frame.receiveNs) / 1e9 - Date.now() / 1000) < 1, "the frame's receive time is unix ns");

  const tf = (await client.next(13)).message as TfMsg;
  const frames = new Map(tf.transforms.map((x) => [x.child_frame_id, x]));
  for (const name of ['left_base_link', 'left_gripper', 'right_gripper', 'bottle-1'])
    assert.ok(frames.has(name), `/tf has ${name}: ${[...frames.keys()].join(', ')}`);
  assert.ok(
    tf.transforms.every((x) => x.header.frame_id === 'table'),
    'every frame is given in the table frame (the URDF root)',
  );
  assert.deepEqual(frames.get('bottle-1')!.transform.translation, { x: 0.1, y: -0.05, z: 0.02 });
  assert.notDeepEqual(
    frames.get('left_gripper')!.transform.translation,
    frames.get('right_gripper')!.transform.translation,
  );

  // A rollout takes the rig: the host re-creates it (here at pose B) and the live view follows it.
  let release!: () => void;
  const rollout = host.forRollout(
    {
      task: getTask('bottles-in-the-bin'),
      layout: sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 1 }).layouts[0],
    },
    () => new Promise<void>((r) => (release = r)),
  );
  await new Promise((r) => setTimeout(r, 100));
  const during = (await client.next(12)).message as JointStateMsg;
  assert.deepEqual(Array.from(during.position), POSE_B, "during the rollout: the new rig's pose");
  release();
  await rollout;

  // Unsubscribing the left arm stops it; the right arm keeps coming.
  client.unsubscribe(10);
  await new Promise((r) => setTimeout(r, 100)); // frames already on the wire
  const leftBefore = client.of(10).length;
  const rightBefore = client.of(11).length;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(client.of(10).length, leftBefore, 'no left-arm message after its unsubscribe');
  assert.ok(
    client.of(11).length > rightBefore + 3,
    `the right arm still streams (${client.of(11).length - rightBefore} in 0.4 s at 30 Hz)`,
  );
});

test('a client that does not offer the Foxglove subprotocol is refused before the upgrade; the older name is accepted; a plain GET is told what the port is', async (t) => {
  const host = new RigHost(mirrorParts([POSE_A]));
  await host.start();
  const live = await liveOn(host);
  t.after(async () => {
    await live.close();
    await host.close();
  });
  for (const protocols of [[], ['json']]) {
    const ws = new WebSocket(live.url, protocols);
    const status = await new Promise<number>((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => reject(new Error(`connected without the subprotocol (${protocols.join(',')})`)));
      ws.once('error', () => {});
    });
    assert.equal(status, 400, `offered [${protocols.join(', ')}]`);
  }
  const older = await FoxgloveTestClient.connect(live.url, ['foxglove.websocket.v1']);
  assert.equal(older.ws.protocol, 'foxglove.websocket.v1', 'Lichtblick / older Foxglove Studio still connect');
  older.close();
  const res = await fetch(live.url.replace('ws:', 'http:'));
  assert.equal(res.status, 426);
  assert.match(await res.text(), /Foxglove live view.*Open connection → Foxglove WebSocket → ws:\/\/127\.0\.0\.1:\d+/);
});

test('requests the live view does not offer get a status sentence and the connection stays up', async (t) => {
  const host = new RigHost(mirrorParts([POSE_A]));
  await host.start();
  const live = await liveOn(host);
  t.after(async () => {
    await live.close();
    await host.close();
  });
  const client = await FoxgloveTestClient.connect(live.url);
  t.after(() => client.close());
  const channels = await client.channels();
  const statusCount = (): number => client.json.filter((m) => m.op === 'status').length;
  const lastStatus = async (before: number): Promise<{ level: number; message: string }> => {
    const start = Date.now();
    while (statusCount() <= before) {
      if (Date.now() - start > 3000) throw new Error('no status');
      await new Promise((r) => setTimeout(r, 5));
    }
    return client.json.filter((m) => m.op === 'status').at(-1) as unknown as { level: number; message: string };
  };
  let n = statusCount();
  client.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1, channelId: 99 }] }));
  assert.match(
    (await lastStatus(n)).message,
    /Ignored 1 of 1 subscription: there is no channel 99 \(the advertised ones are 1 to 4\)/,
  );
  client.subscribe(1, channels[0].id);
  n = statusCount();
  client.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1, channelId: channels[1].id }] }));
  assert.match((await lastStatus(n)).message, /subscription id 1 is already in use/);
  n = statusCount();
  client.ws.send(JSON.stringify({ op: 'setParameters', parameters: [{ name: 'x', value: 1 }] }));
  assert.match((await lastStatus(n)).message, /does not offer 'setParameters'/);
  n = statusCount();
  client.ws.send(Buffer.from([1, 0, 0, 0, 0, 42]), { binary: true });
  const s = await lastStatus(n);
  assert.equal(s.level, 2);
  assert.match(s.message, /only publishes/);
  n = statusCount();
  client.ws.send('{not json');
  assert.match((await lastStatus(n)).message, /not JSON/);
  // Still streaming on the one good subscription.
  const m = (await client.next(1)).message as JointStateMsg;
  assert.deepEqual(Array.from(m.position), POSE_A);
});

test('a non-loopback bind is refused unless allowed, and no port is opened', () => {
  const source = { live: () => undefined };
  for (const host of ['0.0.0.0', '192.168.1.20', '::']) {
    assert.throws(
      () => new FoxgloveLiveServer({ source, port: 0, host }),
      (e: unknown) =>
        e instanceof FoxgloveLiveError &&
        /binds loopback only; .* is not loopback.*--foxglove-allow-remote/.test(e.message),
      host,
    );
  }
  // Allowed explicitly, the constructor takes it (not listened here: the test opens no outside port).
  assert.doesNotThrow(() => new FoxgloveLiveServer({ source, port: 0, host: '0.0.0.0', allowRemote: true }));
  for (const host of ['127.0.0.1', 'localhost', '::1', '127.0.0.2'])
    assert.doesNotThrow(() => new FoxgloveLiveServer({ source, port: 0, host }));
});
