/** Resolves once `cond()` holds, polling every `pollMs`; rejects after `timeoutMs`. */
export function until(cond: () => boolean, timeoutMs: number, pollMs = 5): Promise<void> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const t = setInterval(() => {
      if (cond()) {
        clearInterval(t);
        resolve();
      } else if (Date.now() - start > timeoutMs) {
        clearInterval(t);
        reject(new Error('condition not met in time'));
      }
    }, pollMs);
  });
}
