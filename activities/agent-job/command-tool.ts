import { tool } from 'ai';
import { z } from 'zod';
import type { CommandResult } from '../../src/sandbox';

/** The agent's `run_command` tool: a shell command in the turn's sandbox, never on the worker itself. */
export function commandTool(run: (command: string) => Promise<CommandResult>) {
  return {
    run_command: tool({
      description:
        'Run a shell command (/bin/sh -c) in the repository root, inside a sandbox: only the repository is writable, there are no ' +
        'secrets, and there is no network unless the project allows it. Use it to run tests, linters and builds and fix what fails. ' +
        'Returns the exit code and the beginning and end of the output.',
      inputSchema: z.object({ command: z.string().min(1).max(8192).describe('the shell command, e.g. "npm test"') }),
      execute: async ({ command }) => {
        const r = await run(command);
        return { exitCode: r.exitCode, output: r.output, ...(r.stoppedBy ? { stoppedBy: r.stoppedBy } : {}) };
      },
    }),
  };
}
