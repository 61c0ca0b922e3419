import type { ServerWebSocket, WebSocketHandler } from "bun";

/**
 * A WebSocket's own handlers, carried as its data from the route that upgraded it: Bun.serve has
 * one `websocket` handler for the whole server, and this one only hands each event to its socket.
 */
export interface SocketSession {
  message(ws: ServerWebSocket<SocketSession>, data: string | Buffer): void;
  close(ws: ServerWebSocket<SocketSession>): void;
}

export const socketHandlers: WebSocketHandler<SocketSession> = {
  message: (ws, data) => ws.data.message(ws, data),
  close: (ws) => ws.data.close(ws),
};
