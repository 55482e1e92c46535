/**
 * The session engine's projector port on a calibrated projector: footprints of the next layout,
 * black (and AV mute) before every rollout. PJLink trouble never stops a session — the frame has
 * gone out either way — so it is said to the operator, who can check the projector by eye.
 */
import type { LayoutProjector } from '../../calibration/projector/layout-projector.js';
import type { SessionProjector } from '../session/ports.js';

export function sessionProjector(
  projector: LayoutProjector,
  where: string,
  say: (line: string) => void,
): SessionProjector {
  const tell = (r: { problem?: string }): void => {
    if (r.problem) say(r.problem);
  };
  return {
    description: `projector ${where} (calibration ${projector.calibration.sha256.slice(0, 12)}, RMS ${projector.calibration.errors.rmsMm.toFixed(1)} mm)`,
    show: async (layout, set) => tell(await projector.show(set, layout.index)),
    blank: async () => tell(await projector.blank()),
  };
}
