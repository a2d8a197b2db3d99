// GitHub's client spaces requests for the whole process, first come first served (@octokit/plugin-throttling's
// module-level queues: content-creating calls such as opening a pull request 3 s apart, other writes 1 s, ten calls at
// once). In front of each of those queues, a gate of the same size takes requests by project in turn
// (src/limits/project-turns.ts), so the spacing's queue never holds more than the gate lets through.
import type { Octokit } from '@octokit/core';
import { TurnGate } from '../limits/project-turns';

/** The throttling plugin's queue a request waits in, as its wrap-request.js sorts them. */
export type ThrottleQueue = 'auth' | 'notifications' | 'write' | 'search' | 'global';

/** One gate per queue, as many at once as that queue lets run: the order is ours, the pace stays GitHub's. */
export const githubTurns: Record<ThrottleQueue, TurnGate> = {
  auth: new TurnGate(1),
  notifications: new TurnGate(1),
  write: new TurnGate(1),
  search: new TurnGate(1),
  global: new TurnGate(10),
};

const authPath = (method: string, pathname: string) =>
  (method === 'PATCH' && /^\/applications\/[^/]+\/token\/scoped$/.test(pathname)) ||
  (method === 'POST' && (/^\/applications\/[^/]+\/token$/.test(pathname) || /^\/app\/installations\/[^/]+\/access_tokens$/.test(pathname) || pathname === '/login/oauth/access_token'));

/** Which of the throttling plugin's queues spaces this request; `triggersNotification` is the plugin's own path test. */
export function throttleQueueOf(method: string, url: string, triggersNotification: (pathname: string) => boolean): ThrottleQueue {
  const { pathname } = new URL(url, 'http://github.test');
  if (authPath(method, pathname)) return 'auth';
  const write = method !== 'GET' && method !== 'HEAD';
  if (write && triggersNotification(pathname)) return 'notifications';
  if (write || pathname.startsWith('/graphql')) return 'write';
  if (pathname.startsWith('/search/')) return 'search';
  return 'global';
}

/**
 * An Octokit plugin, applied after the throttling plugin so that it wraps it: each request waits for its project's
 * turn at its queue's gate and holds the turn until GitHub has answered (or its rate-limit retries have given up).
 */
export function requestTurns(triggersNotification: (pathname: string) => boolean) {
  return (octokit: Octokit) => {
    octokit.hook.wrap('request', (request, options) => githubTurns[throttleQueueOf(options.method, options.url, triggersNotification)].take(async () => request(options)));
    return {};
  };
}
