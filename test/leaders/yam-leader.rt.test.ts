import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { createEmulatedYamLeader } from '../../drivers/leaders/emulators/yam-leader-emulator.js';
import { scriptedMotion } from '../../drivers/leaders/emulators/operator-hand.js';
import { gripperFromTrigger, packHandleReply, unpackHandleReplyInto } from '../../drivers/leaders/teaching-handle.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pollFor(leader: { poll(t: number): void }, clock: RealtimeClock, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    leader.poll(clock.nowS());
    await sleep(4);
  }
}

test('the handle reply round-trips position and buttons; trigger pulled closes the gripper', () => {
  const f = packHandleReply({ device: 1, positionRad: 0.35, velocityRadS: -0.5, buttons: 2 });
  assert.equal(f.id, 0x50f);
  assert.equal(f.data.length, 6);
  const out = { device: 0, positionRad: 0, velocityRadS: 0, buttons: 0 };
  assert.ok(unpackHandleReplyInto(f, out));
  assert.equal(out.buttons, 2);
  assert.ok(Math.abs(out.positionRad - 0.35) < (2 * Math.PI) / 4096);
  assert.ok(Math.abs(out.velocityRadS + 0.5) < (2 * Math.PI) / 4096);
  assert.equal(gripperFromTrigger(0), 1);
  assert.equal(gripperFromTrigger(0.7), 0);
  assert.equal(gripperFromTrigger(2), 0, 'clipped at 0.7 rad');
  assert.equal(gripperFromTrigger(-0.3), 1, 'a trigger below rest is released');
});

test('the YAM leader follows the hand through SLCAN bytes: joints, trigger → gripper, button presses', async () => {
  const clock = new RealtimeClock();
  const emu = createEmulatedYamLeader({
    clock,
    arms: ['left'],
    hand: scriptedMotion({ cues: [{ t: 0.3, arm: 'left', button: 1, holdS: 0.1 }] }),
  });
  const { leader } = emu;
  await leader.configure();
  await leader.activate();
  emu.startHand();
  await pollFor(leader, clock, 700);
  const r = leader.latest();
  const hand = emu.handPose();
  for (let j = 0; j < 6; j++)
    assert.ok(Math.abs(r.position[j] - hand[j]) < 0.05, `joint ${j + 1}: leader ${r.position[j]} vs hand ${hand[j]}`);
  assert.ok(Math.abs(r.position[6] - hand[6]) < 0.02, `gripper ${r.position[6]} vs hand ${hand[6]}`);
  assert.ok(Number.isNaN(r.position[7]), 'no right arm, no right reading');
  assert.ok(r.samples[0] > 50, `samples ${r.samples[0]}`);
  const events = leader.takeEvents().filter((e) => e.kind === 'button');
  assert.deepEqual(
    events.map((e) => e.kind === 'button' && [e.button, e.pressed]),
    [
      [1, true],
      [1, false],
    ],
  );
  // Gravity compensation: the motors get kp 0 and a torque that carries the arm (joint 2 bears the most).
  const cmd = emu.buses.left!.motor(2).lastCommand;
  assert.equal(cmd.kp, 0);
  assert.ok(Math.abs(cmd.torqueNm) > 0.5, `joint 2 gravity torque ${cmd.torqueNm}`);
  await leader.deactivate();
  await leader.close();
});

test('the leader handle weighs 0.258 kg in the gravity model, not a gripper', async () => {
  const { ArmGravityModel } = await import('../../src/rig/gravity.js');
  const { yamArm } = await import('../../src/rig/yam.js');
  const q = [0, 1.2, 0.8, 0, 0, 0];
  const withGripper = new ArmGravityModel(yamArm('left')).torques(q, 0, new Float64Array(6));
  const withHandle = new ArmGravityModel(yamArm('left'), 0, 0.258).torques(q, 0, new Float64Array(6));
  const noTool = new ArmGravityModel(yamArm('left'), 0, 0).torques(q, 0, new Float64Array(6));
  // The handle is lighter than gripper + fingers: less shoulder torque, but more than nothing at the wrist.
  assert.ok(Math.abs(withHandle[1]) < Math.abs(withGripper[1]));
  assert.ok(Math.abs(withHandle[1]) > Math.abs(noTool[1]));
});

test('a silent leader is named at configure; garbage on its line is dropped and counted, never followed', async () => {
  const clock = new RealtimeClock();
  const emu = createEmulatedYamLeader({ clock, arms: ['left'] });
  emu.inject({ kind: 'silence' });
  await assert.rejects(emu.leader.configure(), /No answer from joint 1 .* left leader arm/);
  emu.inject({ kind: 'recover' });
  await emu.leader.configure();
  await emu.leader.activate();
  emu.startHand();
  await pollFor(emu.leader, clock, 100);
  emu.inject({ kind: 'garbage', bytes: 300 });
  await pollFor(emu.leader, clock, 100);
  const d = emu.leader.diagnostics()[0];
  assert.ok(d.bus.garbageBytes >= 300, `garbage ${d.bus.garbageBytes}`);
  const hand = emu.handPose();
  assert.ok(Math.abs(emu.leader.latest().position[1] - hand[1]) < 0.05);
  emu.inject({ kind: 'garbage', bytes: 2500 });
  await pollFor(emu.leader, clock, 50);
  assert.match(emu.leader.latest().problem[0] ?? '', /keeps sending bytes that are not CAN frames/);
  await emu.leader.close();
});
