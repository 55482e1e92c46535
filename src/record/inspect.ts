/**
 * `tandem record inspect`: what an episode file holds — topics, message counts, rates, duration,
 * gaps longer than two periods, dropped and lost frames per camera, its metadata — from one
 * streaming pass, so a cut-off file is inspected as far as it reads (and says it is cut off).
 */
import { cameraOfTopic, EPISODE_END_METADATA_NAME, TOPICS } from './episode-format.js';
import { decodeMessage, scanEpisodeFile } from './episode-file-reader.js';
import { medianPeriodS } from './resample.js';

export interface TopicGap {
  /** Seconds from the file's first message. */
  readonly atS: number;
  readonly gapS: number;
}

export interface TopicReport {
  readonly topic: string;
  readonly schema: string;
  readonly count: number;
  readonly firstS: number;
  readonly lastS: number;
  readonly rateHz: number;
  /** Median time between messages. */
  readonly periodS: number;
  /** Gaps longer than two median periods (at most 20 listed; `gapCount` counts all). */
  readonly gaps: readonly TopicGap[];
  readonly gapCount: number;
}

export interface CameraReport {
  readonly camera: string;
  readonly frames: number;
  /** From the camera's counters in the end metadata (undefined in a cut-off file). */
  readonly dropped: number | undefined;
  readonly late: number | undefined;
  /** When the camera was lost (seconds from the file's first message), with the reason. */
  readonly lost: { atS: number; reason: string } | undefined;
}

export interface InspectReport {
  readonly file: string;
  readonly complete: boolean;
  readonly problem: string | undefined;
  readonly fileBytes: number;
  readonly profile: string;
  readonly library: string;
  readonly messages: number;
  readonly durationS: number;
  readonly topics: readonly TopicReport[];
  readonly cameras: readonly CameraReport[];
  readonly eventsByKind: Readonly<Record<string, number>>;
  readonly metadata: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

const MAX_LISTED_GAPS = 20;

export async function inspectEpisodeFile(file: string): Promise<InspectReport> {
  const channels = new Map<number, { topic: string; schema: string; times: number[] }>();
  const schemas = new Map<number, string>();
  const metadata: Record<string, Record<string, string>> = {};
  const eventsByKind: Record<string, number> = {};
  const lost = new Map<string, { timeNs: bigint; reason: string }>();
  let profile = '';
  let library = '';
  let firstNs: bigint | undefined;
  let messages = 0;
  const scan = await scanEpisodeFile(file, (r) => {
    switch (r.type) {
      case 'Header':
        profile = r.profile;
        library = r.library;
        break;
      case 'Schema':
        if (!schemas.has(r.id)) schemas.set(r.id, r.name);
        break;
      case 'Channel': // also repeated in the summary section: keep the first
        if (!channels.has(r.id))
          channels.set(r.id, { topic: r.topic, schema: schemas.get(r.schemaId) ?? '', times: [] });
        break;
      case 'Metadata':
        metadata[r.name] = Object.fromEntries(r.metadata);
        break;
      case 'Message': {
        const ch = channels.get(r.channelId);
        if (!ch) break;
        messages += 1;
        firstNs ??= r.logTime;
        // Seconds from the first message keep nanosecond precision (ns since 1970 do not fit a double).
        ch.times.push(Number(r.logTime - firstNs) / 1e9);
        if (ch.topic === TOPICS.events) {
          const ev = decodeMessage(ch.schema, r.data) as { kind: string; source: string; message: string } | undefined;
          if (ev) {
            eventsByKind[ev.kind] = (eventsByKind[ev.kind] ?? 0) + 1;
            if (ev.kind === 'camera-lost' && !lost.has(ev.source))
              lost.set(ev.source, { timeNs: r.logTime, reason: ev.message });
          }
        }
        break;
      }
      default:
        break;
    }
  });
  // Times are from the first message in file order; a later-written earlier message moves the origin.
  let originS = Infinity;
  for (const ch of channels.values()) for (const t of ch.times) originS = Math.min(originS, t);
  if (!Number.isFinite(originS)) originS = 0;
  let endS = originS;
  const topics: TopicReport[] = [];
  for (const ch of channels.values()) {
    const t = Float64Array.from(ch.times).sort();
    const deltas = new Float64Array(Math.max(0, t.length - 1));
    for (let i = 1; i < t.length; i++) deltas[i - 1] = t[i] - t[i - 1];
    const periodS = medianPeriodS(t);
    const gaps: TopicGap[] = [];
    let gapCount = 0;
    for (let i = 0; i < deltas.length; i++) {
      if (periodS > 0 && deltas[i] > 2 * periodS) {
        gapCount += 1;
        if (gaps.length < MAX_LISTED_GAPS) gaps.push({ atS: t[i] - originS, gapS: deltas[i] });
      }
    }
    if (t.length > 0) endS = Math.max(endS, t[t.length - 1]);
    const spanS = t.length > 1 ? t[t.length - 1] - t[0] : 0;
    topics.push({
      topic: ch.topic,
      schema: ch.schema,
      count: t.length,
      firstS: t.length ? t[0] - originS : 0,
      lastS: t.length ? t[t.length - 1] - originS : 0,
      rateHz: spanS > 0 ? (t.length - 1) / spanS : 0,
      periodS,
      gaps,
      gapCount,
    });
  }
  const end = metadata[EPISODE_END_METADATA_NAME] ?? {};
  const cameras: CameraReport[] = topics.flatMap((tp) => {
    const camera = cameraOfTopic(tp.topic);
    if (camera === undefined) return [];
    const counters = end[`camera.${camera}`]
      ? (JSON.parse(end[`camera.${camera}`]) as { dropped?: number; late?: number })
      : undefined;
    const l = lost.get(camera);
    return [
      {
        camera,
        frames: tp.count,
        dropped: counters?.dropped,
        late: counters?.late,
        lost: l && { atS: Number(l.timeNs - (firstNs ?? 0n)) / 1e9 - originS, reason: l.reason },
      },
    ];
  });
  return {
    file,
    complete: scan.complete,
    problem: scan.problem,
    fileBytes: scan.fileBytes,
    profile,
    library,
    messages,
    durationS: endS - originS,
    topics,
    cameras,
    eventsByKind,
    metadata,
  };
}
