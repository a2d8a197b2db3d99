// What a step event says about one model call and each tool call it made. Every admin of the project reads the event
// stream, so each text is redacted of the turn's secrets (as command output is) before it is cut, and the cuts keep
// an event small: docs/agent-jobs.md, "Events".
import type { Redact } from '../../src/secrets/redactor';

/** The most of one string argument a step event keeps. */
export const maxArgumentChars = 300;
/** Arguments that are file contents: an event gives their length only (the job's diff has what was written). */
const contentArguments = new Set(['content', 'old', 'new']);
/** The most of a `run_command` command line a step event keeps. */
export const maxCommandChars = 2000;
/** The most of a command's output a step event keeps: its first KiB and its end, where failures are reported. */
export const maxOutputChars = 4096;
const outputHeadChars = 1024;
/** Arguments past this many are left out (the tools take at most four). */
const maxArguments = 8;

/** When a call began and how long it took. */
export interface Timing {
  startedAt: Date;
  durationMs: number;
}

type ToolCall = { toolName: string; toolCallId?: string; input: unknown };

export const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`);

/** The beginning and the end of a long output, with how much was left out between them. */
export function headAndTail(text: string, max = maxOutputChars): string {
  if (text.length <= max) return text;
  const tail = max - outputHeadChars;
  return `${text.slice(0, outputHeadChars)}\n[… ${text.length - max} characters left out …]\n${text.slice(-tail)}`;
}

/** What a step event may say about a tool call at least: its name and the path it touched. */
export function stepData(call: ToolCall): { tool: string; path?: string } {
  const input = (call.input ?? {}) as Record<string, unknown>;
  const where = typeof input.path === 'string' ? input.path : typeof input.folder === 'string' ? input.folder : undefined;
  return { tool: call.toolName, ...(where !== undefined ? { path: where.slice(0, 500) } : {}) };
}

/** A tool call's arguments, each text redacted then cut; nested values as cut JSON. */
export function boundedArguments(input: unknown, redact: Redact): Record<string, unknown> {
  if (!input || typeof input !== 'object') return {};
  const args: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input).slice(0, maxArguments)) {
    if (typeof value === 'string' && contentArguments.has(name)) args[name] = `[${value.length} characters]`;
    else if (typeof value === 'string') args[name] = cut(redact(value), name === 'command' ? maxCommandChars : maxArgumentChars);
    else if (typeof value === 'number' || typeof value === 'boolean' || value === null) args[name] = value;
    else if (value !== undefined) args[name] = cut(redact(JSON.stringify(value) ?? ''), maxArgumentChars);
  }
  return args;
}

/** What a tool answered that a person follows: a command's exit code and output, or the tool's refusal. */
export function resultFields(output: unknown, redact: Redact): Record<string, unknown> {
  if (!output || typeof output !== 'object') return {};
  const r = output as Record<string, unknown>;
  return {
    ...(typeof r.exitCode === 'number' ? { exitCode: r.exitCode } : {}),
    ...(typeof r.stoppedBy === 'string' ? { stoppedBy: r.stoppedBy } : {}),
    ...(typeof r.output === 'string' ? { output: headAndTail(redact(r.output)) } : {}),
    ...(typeof r.error === 'string' ? { error: cut(redact(r.error), maxArgumentChars) } : {}),
  };
}

const timed = (t: Timing | undefined) => (t ? { startedAt: t.startedAt.toISOString(), durationMs: Math.round(t.durationMs) } : {});

/** One tool call of model step `step`: name, path, bounded arguments, what it answered, and its time. */
export function toolStepData(step: number, call: ToolCall, output: unknown, time: Timing | undefined, redact: Redact): Record<string, unknown> {
  return { kind: 'tool', step, ...stepData(call), args: boundedArguments(call.input, redact), ...resultFields(output, redact), ...timed(time) };
}

/** One model call: its tokens, its cost when the model has a price, how many tools it called, and its time. */
export function modelStepData(
  step: number,
  usage: { inputTokens: number; outputTokens: number },
  costUsd: number | undefined,
  toolCalls: number,
  finishReason: string | undefined,
  time: Timing,
): Record<string, unknown> {
  return { kind: 'model', step, ...usage, ...(costUsd !== undefined ? { costUsd } : {}), toolCalls, ...(finishReason ? { finishReason } : {}), ...timed(time) };
}
