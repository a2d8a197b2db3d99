import { maxArgumentChars, maxCommandChars, maxOutputChars, modelStepData, toolStepData } from '../../activities/agent-job/step-events';

// The turn's one secret, as the redactor of src/secrets/redactor.ts replaces it.
const redact = (text: string) => text.replaceAll('hunter2-secret', '[secret TOKEN]');
const at = { startedAt: new Date('2026-12-02T10:00:00.000Z'), durationMs: 1234.4 };

describe('a step event of a tool call', () => {
  it('says the command, its exit code, its output and its time, with the secret redacted', () => {
    const call = { toolName: 'run_command', toolCallId: 'c1', input: { command: 'echo hunter2-secret && npm test' } };
    const data = toolStepData(3, call, { exitCode: 1, output: 'token hunter2-secret\n1 failing' }, at, redact);
    expect(data).toEqual({
      kind: 'tool',
      step: 3,
      tool: 'run_command',
      args: { command: 'echo [secret TOKEN] && npm test' },
      exitCode: 1,
      output: 'token [secret TOKEN]\n1 failing',
      startedAt: '2026-12-02T10:00:00.000Z',
      durationMs: 1234,
    });
  });

  it('gives the length of file contents it wrote or replaced, never the text (the diff has it)', () => {
    const data = toolStepData(1, { toolName: 'edit_file', input: { path: 'a.md', old: 'before text', new: 'after' } }, { edited: 'a.md' }, undefined, redact);
    expect(data).toMatchObject({ tool: 'edit_file', path: 'a.md', args: { path: 'a.md', old: '[11 characters]', new: '[5 characters]' } });
  });

  it('stays bounded: long arguments are cut, a long output keeps its beginning and its end', () => {
    const output = `FIRST-LINE\n${'y'.repeat(50_000)}\nLAST-LINE`;
    const data = toolStepData(1, { toolName: 'search_files', input: { text: 'x'.repeat(10_000) } }, { output }, undefined, redact);
    expect(String((data.args as Record<string, string>).text).length).toBeLessThan(maxArgumentChars + 40);
    expect(String(data.output).length).toBeLessThan(maxOutputChars + 60);
    expect(String(data.output)).toMatch(/^FIRST-LINE/);
    expect(String(data.output)).toMatch(/LAST-LINE$/);
    const long = toolStepData(1, { toolName: 'run_command', input: { command: 'z'.repeat(9000) } }, undefined, undefined, redact);
    expect(String((long.args as Record<string, string>).command).length).toBeLessThan(maxCommandChars + 40);
  });

  it('redacts a secret before cutting, so a secret across the cut is never half shown', () => {
    const input = { text: `${'a'.repeat(maxArgumentChars - 5)}hunter2-secret` };
    const data = toolStepData(1, { toolName: 'search_files', input }, undefined, undefined, redact);
    expect(JSON.stringify(data)).not.toContain('hunter');
  });

  it("says a tool's refusal", () => {
    expect(toolStepData(2, { toolName: 'read_file', input: { path: 'nope' } }, { error: 'cannot read nope: no such file' }, undefined, redact)).toMatchObject({
      error: 'cannot read nope: no such file',
    });
  });
});

describe('a step event of a model call', () => {
  it('says its tokens, cost, tool calls and time', () => {
    expect(modelStepData(2, { inputTokens: 100, outputTokens: 20 }, 0.0012, 1, 'tool-calls', at)).toEqual({
      kind: 'model',
      step: 2,
      inputTokens: 100,
      outputTokens: 20,
      costUsd: 0.0012,
      toolCalls: 1,
      finishReason: 'tool-calls',
      startedAt: '2026-12-02T10:00:00.000Z',
      durationMs: 1234,
    });
    expect(modelStepData(1, { inputTokens: 1, outputTokens: 1 }, undefined, 0, undefined, at)).not.toHaveProperty('costUsd');
  });
});
