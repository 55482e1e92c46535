/**
 * Keeps the cell's tower light equal to the station's state: on every change of the state board
 * it writes the light that state calls for, one write at a time (a change during a write is
 * written right after it, only the latest). Off the control loop entirely; a failed write is
 * said once per failure and retried on the next change — the light is a sign, not a safety
 * function (the interlock is).
 */
import type { CellPlcClient } from './plc-client.js';
import type { StationStateBoard } from './station-state.js';
import { sameLight, towerLightFor, type TowerLight } from './tower-light.js';

export class TowerLightDriver {
  private shown: TowerLight | undefined;
  private wanted: TowerLight;
  private writing: Promise<void> = Promise.resolve();
  private busy = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly plc: Pick<CellPlcClient, 'setTowerLight'>,
    board: StationStateBoard,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.wanted = towerLightFor(board.state);
    this.unsubscribe = board.onChange((s) => {
      this.wanted = towerLightFor(s);
      this.kick();
    });
    this.kick();
  }

  /** Resolves once the light shows the latest state (or its last write failed). */
  settled(): Promise<void> {
    return this.writing;
  }

  private kick(): void {
    if (this.busy) return;
    this.busy = true;
    this.writing = (async () => {
      try {
        while (!this.shown || !sameLight(this.shown, this.wanted)) {
          const light = this.wanted;
          try {
            await this.plc.setTowerLight(light);
            this.shown = light;
          } catch (e) {
            this.log(`The tower light was not updated: ${(e as Error).message}`);
            this.shown = undefined;
            return;
          }
        }
      } finally {
        this.busy = false;
      }
    })();
  }

  close(): void {
    this.unsubscribe();
  }
}
