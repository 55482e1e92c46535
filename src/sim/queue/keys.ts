/** Redis keys tandem keeps beside BullMQ's own. */

/** The tandem version whose jobs the queue holds (set by coordinators, checked by workers). */
export function queueVersionKey(): string {
  return 'tandem:queue-version';
}

/** Present once a sweep's coordinator stopped it (Ctrl-C): workers skip and stop its jobs. */
export function sweepStoppedKey(sweepId: string): string {
  return `tandem:sweep-stopped:${sweepId}`;
}
