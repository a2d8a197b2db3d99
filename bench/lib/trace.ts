// DOCENT_BENCH_TRACE=1: every 2 s, one line on what the benchmark's process waits for: its event loop's delay,
// MongoDB commands in flight and their durations by name, and waits for a pooled connection. For finding a stall.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MongoClient } from 'mongodb';

export function traceProcess(mongo: MongoClient, log: (line: string) => void): () => void {
  if (!process.env.DOCENT_BENCH_TRACE) return () => undefined;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let inflight = 0;
  let maxInflight = 0;
  const durations = new Map<string, number[]>();
  const checkoutStarted = new Map<number, number>();
  let checkouts = 0;
  let checkoutWaits: number[] = [];
  const onStart = () => {
    inflight++;
    maxInflight = Math.max(maxInflight, inflight);
  };
  const onEnd = (e: { commandName: string; duration: number }) => {
    inflight--;
    const list = durations.get(e.commandName) ?? [];
    list.push(e.duration);
    durations.set(e.commandName, list);
  };
  const onCheckoutStart = () => checkoutStarted.set(checkouts++, performance.now());
  const waiting: number[] = [];
  const onCheckout = () => {
    const first = checkoutStarted.keys().next().value;
    if (first !== undefined) {
      checkoutWaits.push(performance.now() - checkoutStarted.get(first)!);
      checkoutStarted.delete(first);
    }
  };
  mongo.on('commandStarted', onStart);
  mongo.on('commandSucceeded', onEnd);
  mongo.on('commandFailed', onEnd);
  mongo.on('connectionCheckOutStarted', onCheckoutStart);
  mongo.on('connectionCheckedOut', onCheckout);
  mongo.on('connectionCheckOutFailed', onCheckout);
  const q = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!.toFixed(0) : '-');
  const timer = setInterval(() => {
    const cmds = [...durations].map(([name, xs]) => `${name} ${xs.length}× p50 ${q(xs, 50)} max ${q(xs, 100)}`).join(', ');
    log(
      `trace: loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms max ${(loop.max / 1e6).toFixed(0)} ms; mongo in flight ${inflight} (max ${maxInflight}), waiting for a connection ${checkoutStarted.size} (waits p50 ${q(checkoutWaits, 50)} max ${q(checkoutWaits, 100)} ms); ${cmds}; heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB`,
    );
    loop.reset();
    durations.clear();
    maxInflight = inflight;
    checkoutWaits = [];
    waiting.length = 0;
  }, 2_000);
  timer.unref();
  return () => {
    clearInterval(timer);
    loop.disable();
  };
}
