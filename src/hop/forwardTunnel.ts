import { createServer, type Server, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { keepErrorListener } from "./sshErrors.ts";

/**
 * A loopback TCP listener whose every connection is piped into a fresh SSH channel, so plain
 * `fetch` reaches the remote agentd at `http://127.0.0.1:<port>`. `open` is asked per
 * connection, so after a reconnect new connections use the new SSH link.
 */
export class ForwardTunnel {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly open: () => Promise<Duplex>) {}

  async listen(): Promise<number> {
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        server.removeListener("error", reject);
        resolve();
      });
    });
    keepErrorListener(server, "tunnel listener");
    return (server.address() as { port: number }).port;
  }

  get port(): number | undefined {
    const address = this.server?.address();
    return address && typeof address === "object" ? address.port : undefined;
  }

  /** Ends every piped connection (the SSH link under them is gone). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.dropConnections();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.pause();
    socket.on("error", () => socket.destroy());
    socket.once("close", () => this.sockets.delete(socket));
    this.open().then(
      (channel) => {
        if (socket.destroyed) {
          channel.destroy();
          return;
        }
        channel.on("error", () => socket.destroy());
        channel.once("close", () => socket.destroy());
        socket.once("close", () => channel.destroy());
        socket.pipe(channel);
        channel.pipe(socket);
        socket.resume();
      },
      () => socket.destroy(),
    );
  }
}
