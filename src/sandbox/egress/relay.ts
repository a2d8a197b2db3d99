// Inside a sandbox with network on: a loopback port relayed to the worker's egress proxy, and the variables naming it.
import type { LoopbackEndpoint } from './allow-rules';

/** Where the proxy's Unix socket appears inside the sandbox. */
export const SANDBOX_PROXY_SOCKET = '/run/docent/egress.sock';
export const RELAY_PORT = 3128;
const PROXY_URL = `http://127.0.0.1:${RELAY_PORT}`;

/** What HTTP clients (curl, git, npm, pip, node's undici with env proxy on) read to find the proxy. */
export const PROXY_ENV: Readonly<Record<string, string>> = {
  HTTP_PROXY: PROXY_URL,
  HTTPS_PROXY: PROXY_URL,
  http_proxy: PROXY_URL,
  https_proxy: PROXY_URL,
  npm_config_proxy: PROXY_URL,
  npm_config_https_proxy: PROXY_URL,
  PIP_PROXY: PROXY_URL,
  // Loopback is the sandbox's own (its services, test servers): reaching it directly exposes nothing of the host.
  NO_PROXY: 'localhost,127.0.0.1,::1',
  no_proxy: 'localhost,127.0.0.1,::1',
};

/**
 * Polls before giving up on a relay that is alive but not yet listening. Each poll reads /proc/net/sockstat (a few
 * counters, about 0.1 ms), not /proc/net/tcp, whose every read walks the kernel's whole TCP hash (about 6 ms here).
 */
const MAX_POLLS = 20_000;

/**
 * `/bin/sh -c <this> docent-relay <command>`: starts socat, and one more per operator-listed loopback endpoint (which
 * listens on the same port of the sandbox's loopback and tunnels each connection with CONNECT through the proxy, so a
 * client that goes direct because of NO_PROXY reaches the listed endpoint), waits with shell builtins only (no fork
 * per poll) until this namespace counts that many TCP sockets in use (the relays', hashed when they listen; nothing
 * else runs yet), so the command's first request cannot race them, then runs the command. A relay that exits at once
 * ends the wait at once.
 */
export function relayScript(loopback: readonly LoopbackEndpoint[] = []): string {
  const listeners = loopback.map((e) => `socat TCP-LISTEN:${e.port},bind=127.0.0.1,reuseaddr,fork PROXY:127.0.0.1:${e.host}:${e.port},proxyport=${RELAY_PORT} </dev/null >/dev/null 2>&1 &`);
  return [
    `socat TCP-LISTEN:${RELAY_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${SANDBOX_PROXY_SOCKET} </dev/null >/dev/null 2>&1 &`,
    'p=$!',
    ...listeners.flatMap((l) => [l, 'p="$p $!"']),
    'i=0 up=',
    `while [ -z "$up" ] && [ $i -lt ${MAX_POLLS} ] && kill -0 $p 2>/dev/null; do`,
    `  while read -r proto _ n _; do if [ "$proto" = TCP: ] && [ "$n" -ge ${1 + loopback.length} ]; then up=1; break; fi; done </proc/net/sockstat`,
    '  i=$((i+1))',
    'done',
    `[ -n "$up" ] || echo "docent: the egress relay did not start; network requests will fail" >&2`,
    'unset p i up',
    'exec /bin/sh -c "$1"',
  ].join('\n');
}
