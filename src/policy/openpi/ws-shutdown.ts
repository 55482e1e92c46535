import type { Server } from 'node:http';
import type { WebSocketServer } from 'ws';

/**
 * Ends a websocket service over the openpi wire (the policy server, the sim env server): every
 * client is told why (close 1001), one that does not answer its close within 500 ms is cut off,
 * then the HTTP listener and its idle connections close.
 */
export async function closeWebSocketService(http: Server, wss: WebSocketServer, reason: string): Promise<void> {
  for (const ws of wss.clients) ws.close(1001, reason);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      for (const ws of wss.clients) ws.terminate();
    }, 500);
    wss.close(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
}
