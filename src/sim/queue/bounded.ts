/**
 * Waiting on Redis with a way out: a call raced against a stop, or against a time limit. With
 * Redis gone, ioredis keeps commands queued until it is back (BullMQ needs that), so anything a
 * stop must not wait for goes through here.
 */

/** What a call raced against the stop returns when the stop came first. */
export const STOPPED = Symbol('stopped');

/** The call's value, or STOPPED as soon as the signal fires. */
export function orStop<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof STOPPED> {
  // The call may still fail after the stop (its connection closed): nobody waits for it then.
  p.catch(() => undefined);
  if (!signal) return p;
  if (signal.aborted) return Promise.resolve(STOPPED);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(STOPPED);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** The call's value, or undefined after `ms`. */
export function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  p.catch(() => undefined);
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<undefined>((resolve) => (t = setTimeout(() => resolve(undefined), ms))),
  ]);
}
