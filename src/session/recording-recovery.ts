/**
 * The session engine's RecordingRecovery on the station's disk: episode files the store still lists
 * as recording when a session resumes were cut off by the station stopping; each one's readable
 * prefix is recovered beside it (`NAME.recovered.mcap`) and its store row marked recovered, or
 * failed with the reason. At a session's resume nothing else records.
 */
import { existsSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import type { Store } from '../store/store.js';
import { recoverEpisodeFile } from '../record/recover.js';
import type { RecordingRecovery } from './ports.js';

export function episodeFileRecovery(store: Store): RecordingRecovery {
  return {
    async recoverCutOff(): Promise<string[]> {
      const out: string[] = [];
      for (const r of store.listRecordings({ states: ['recording'] })) {
        if (!existsSync(r.file)) continue;
        const target = join(dirname(r.file), `${basename(r.file).replace(/\.mcap$/i, '')}.recovered.mcap`);
        try {
          const rep = await recoverEpisodeFile(r.file, target);
          store.endRecording(r.id, {
            state: 'recovered',
            recoveredFile: rep.output ?? null,
            problem: rep.problem ?? null,
            messages: rep.keptMessages,
            durationS: rep.keptSeconds,
            bytes: rep.outputBytes,
          });
          out.push(rep.output ?? r.file);
        } catch (e) {
          store.endRecording(r.id, { state: 'failed', problem: `not recoverable: ${(e as Error).message}` });
        }
      }
      return out;
    },
  };
}
