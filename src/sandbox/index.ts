// docent's sandbox for untrusted repository code: bubblewrap, deny by default.
export { SandboxUnavailable } from './errors';
export { probeSandbox } from './probe';
export { runInSandbox } from './run';
export type { CommandResult, OutputFilter, RunOptions, SandboxLimits, SandboxSpec } from './types';
