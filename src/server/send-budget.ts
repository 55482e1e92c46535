/**
 * The send budget every WebSocket the station serves keeps per client: a client that stops reading
 * lets the station's outgoing buffer grow, and past the budget it is disconnected, so a stalled or
 * hostile reader costs the station a bounded amount of memory and nothing else. Viewers reconnect.
 */
import type { WebSocket } from 'ws';

/** Default per-client budget: far above what a reading client ever has in flight. */
export const DEFAULT_SEND_BUDGET_BYTES = 1 << 20;

/**
 * Sends `data` if the client's unsent bytes stay within `budgetBytes` with it; otherwise
 * disconnects the client (terminate: a slow reader would not read a close frame either).
 * Returns whether it was sent.
 */
export function sendWithinBudget(
  ws: WebSocket,
  data: string | Buffer,
  budgetBytes: number,
  onDrop?: () => void,
): boolean {
  if (ws.readyState !== ws.OPEN) return false;
  const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  if (ws.bufferedAmount + size > budgetBytes) {
    ws.terminate();
    onDrop?.();
    return false;
  }
  ws.send(data);
  return true;
}
