/** Where an interrupted session stood when the station stopped, for the Session page's list. */
import type { SlotPhase } from '../session/journal-state.js';

/** Where an interrupted session was, in an operator's words, and what resuming it does. */
export function interruptedWords(cut: { readonly slot?: number; readonly phase?: SlotPhase }, total: number): string {
  if (cut.slot === undefined) return 'Every rollout was done; resume it to close it.';
  const n = `Rollout ${cut.slot + 1} of ${total}`;
  switch (cut.phase) {
    case 'cut-off':
      return `${n} was running: on resume it is marked cut off (its recording recovered) and offered for redo.`;
    case 'score':
      return `${n} had run and was waiting for its score: score it on resume.`;
    case 'reset':
      return `${n} was scored; the table was being cleared.`;
    case 'decide':
      return `${n} ended without a score: redo or close it on resume.`;
    default:
      return `${n} was being placed: on resume its layout is shown again.`;
  }
}
