// Inside a sandbox with network on: a loopback port relayed to the worker's egress proxy, and the variables naming it.

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
  NO_PROXY: '',
  no_proxy: '',
};

/** 127.0.0.1:RELAY_PORT as /proc/net/tcp writes it, and the LISTEN state. */
const LISTEN_ADDRESS = `0100007F:${RELAY_PORT.toString(16).toUpperCase().padStart(4, '0')}`;
const LISTEN_STATE = '0A';
/** Reads of /proc/net/tcp before giving up on the relay (each is a shell builtin loop, a few microseconds). */
const MAX_POLLS = 20_000;

/**
 * `/bin/sh -c <this> docent-relay <command>`: starts socat, waits (with shell builtins only, no fork per poll) until
 * it listens so the command's first request cannot race it, then runs the command.
 */
export function relayScript(): string {
  return [
    `socat TCP-LISTEN:${RELAY_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${SANDBOX_PROXY_SOCKET} </dev/null >/dev/null 2>&1 &`,
    'i=0; up=',
    `while [ -z "$up" ] && [ $i -lt ${MAX_POLLS} ]; do`,
    `  while read -r _ l _ st _; do if [ "$l" = ${LISTEN_ADDRESS} ] && [ "$st" = ${LISTEN_STATE} ]; then up=1; break; fi; done </proc/net/tcp`,
    '  i=$((i+1))',
    'done',
    `[ -n "$up" ] || echo "docent: the egress relay did not start; network requests will fail" >&2`,
    'unset i up',
    'exec /bin/sh -c "$1"',
  ].join('\n');
}
