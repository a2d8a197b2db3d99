import { modelSettings } from '../../test/support/scripted-model';
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export interface ModelProcess {
  baseUrl: string;
  apiKey: string;
  modelId: string;
  /** Gateway settings that point docent at this model. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** A question that makes the scripted model answer with `tokens` deltas, `delayMs` apart, the first after `firstMs`. */
export const scriptedQuestion = (text: string, s: { tokens: number; delayMs?: number; firstMs?: number }) => `${text} [tokens=${s.tokens} delay=${s.delayMs ?? 0} first=${s.firstMs ?? 0}]`;

/** Starts bench/lib/model-process.js as a child process and waits for its address. */
export async function startModelProcess(): Promise<ModelProcess> {
  const child = spawn(process.execPath, [path.join(__dirname, 'model-process.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`model process exited (${code})`)));
  });
  const m = JSON.parse(line) as { baseUrl: string; apiKey: string; modelId: string };
  return {
    ...m,
    env: { ...modelSettings(m) },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
