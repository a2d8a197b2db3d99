/** Reads `probe` every 200 ms until `done` holds, and fails with what it last read once `timeoutMs` has passed. */
export async function poll<T>(what: string, probe: () => T | Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
