/**
 * The leader arm a rig rollout's operator takes over with: the same leaders as teleop (a YAM with
 * its teaching handle, GELLO, their emulators; `--leader` spells them as `teleop record` does),
 * brought up before the rollout and put away after it. The operator toggles the takeover with the
 * handle's top button, or E on the keyboard (the terminal's stdin), as sync in teleop.
 */
import type { Clock } from '../rig/contract.js';
import type { LeaderHand } from '../rig/leader-registry.js';
import { LeaderFollow } from '../teleop/follow.js';
import { OperatorControls } from '../teleop/operator-controls.js';
import { LeaderTakeover } from '../teleop/takeover.js';
import { UserError } from './command.js';
import { createLeader, type LeaderSetup } from './leader-registry.js';

export interface TakeoverLeader {
  readonly takeover: LeaderTakeover;
  readonly description: string;
  close(): Promise<void>;
}

export interface TakeoverLeaderOptions {
  readonly spec: string;
  readonly clock: Clock;
  /** The ramp from the policy's last command to the leader. Default the teleop engage ramp (3 s). */
  readonly rampS?: number;
  /** Keys from here (the terminal in raw mode, or any byte stream): E toggles the takeover. */
  readonly keyboard?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  readonly log: (line: string) => void;
  /** The hand an emulated leader plays (scripted button presses); hardware ignores it. */
  readonly hand?: LeaderHand;
}

/** Opens and activates the leader, and wires the operator's toggles to the takeover. */
export async function openTakeoverLeader(o: TakeoverLeaderOptions): Promise<TakeoverLeader> {
  const setup: LeaderSetup = createLeader(o.spec, o.clock, o.hand);
  const controls = new OperatorControls();
  try {
    await setup.leader.configure();
    await setup.leader.activate();
  } catch (e) {
    await setup.leader.close().catch(() => undefined);
    throw new UserError(`The leader for taking over (${o.spec}) could not start: ${(e as Error).message}`);
  }
  setup.emulated?.startHand();
  const takeover = new LeaderTakeover(new LeaderFollow({ leader: setup.leader, rampS: o.rampS }), { log: o.log });
  let open = true;
  if (o.keyboard) {
    controls.attachKeyboard(o.keyboard);
    void (async () => {
      while (open) {
        const a = await controls.next(new Promise<void>(() => {}));
        if (a?.action === 'sync') takeover.toggle();
      }
    })();
  }
  return {
    takeover,
    description: setup.leader.description,
    async close() {
      open = false;
      controls.close();
      await setup.leader.deactivate().catch(() => undefined);
      await setup.leader.close().catch(() => undefined);
    },
  };
}
