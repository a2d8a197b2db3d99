// A start-up check: one `true` in a sandbox shaped like the real ones, so a broken host fails at boot, not mid-job.
import { unavailable } from './errors';
import { runInSandbox } from './run';
import type { SandboxSpec } from './types';

/** A probe that hangs says as much as one that fails; it need not wait for a long job's wall time. */
const PROBE_TIMEOUT_MS = 30_000;

/** Starts `true` in the sandbox once; throws SandboxUnavailable whose message says what failed (bwrap's own stderr) and the likely fix (install the Debian package bubblewrap; allow unprivileged user namespaces; in Docker, a seccomp profile that allows them). */
export async function probeSandbox(spec: SandboxSpec): Promise<void> {
  const limits = { ...spec.limits, timeoutMs: Math.min(spec.limits.timeoutMs, PROBE_TIMEOUT_MS) };
  const r = await runInSandbox({ ...spec, limits }, 'true', { headBytes: 2048, tailBytes: 2048 });
  if (r.exitCode !== 0 || r.stoppedBy) {
    throw unavailable(`the sandbox started but \`true\` ${r.stoppedBy ? `was stopped (${r.stoppedBy})` : `exited with ${r.exitCode}`}`, r.output);
  }
}
