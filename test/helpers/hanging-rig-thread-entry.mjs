// The YAM's rig thread (drivers/yam/rig-thread-entry.mjs), which hangs — a busy loop that never
// yields, as a driver bug would — when the main thread posts {op: 'hang'}.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
parentPort.on('message', (m) => {
  if (m?.op === 'hang') for (;;);
});
await import('../../drivers/yam/rig-thread-worker.ts');
