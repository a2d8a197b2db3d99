import net from 'node:net';

interface Target {
  host: string;
  port: number;
}

export interface CuttableLink {
  /** host:port to connect to instead of the target. */
  address: string;
  /** Drops every open connection and refuses new ones (they are reset on arrival), as a stopped service would. */
  cut(): void;
  /** Stops forwarding without closing anything, as a paused service would: requests sent meanwhile wait. */
  hold(): void;
  /** Forwards again, to a new target when given one. */
  restore(target?: Target): void;
  close(): Promise<void>;
}

/**
 * A TCP forwarder in front of a shared service, so that a test can take the service away from one gateway and give it
 * back without stopping it for everyone else. It listens on a port of its own (port 0, kept for its whole life).
 */
export async function startCuttableLink(initial?: Target): Promise<CuttableLink> {
  // Without a target it starts cut: the service is not there yet.
  let target = initial;
  let open = Boolean(initial);
  let held = false;
  const sockets = new Set<net.Socket>();
  // The client sides: a held link stops reading them, so nothing they send reaches the target until it is restored.
  const clients = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (!open || !target) return void client.resetAndDestroy();
    clients.add(client);
    client.once('close', () => clients.delete(client));
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream).pipe(client);
    if (held) client.pause();
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut() {
      open = false;
      for (const s of sockets) s.resetAndDestroy();
    },
    hold() {
      held = true;
      for (const c of clients) c.pause();
    },
    restore(to) {
      if (to) target = to;
      open = true;
      held = false;
      for (const c of clients) c.resume();
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
