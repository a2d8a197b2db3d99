// Rate-limit windows are calendar hours, days and months in UTC (src/limits/fixed-window.ts), which all turn at the
// top of an hour: a test that counts units in a window must not straddle one, or the new window admits them again.

/** Waits for the next UTC hour when less than `marginMs` of this one is left (at most `marginMs`, once in a while). */
export async function clearOfWindowTurn(marginMs: number): Promise<void> {
  const left = 3_600_000 - (Date.now() % 3_600_000);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}
