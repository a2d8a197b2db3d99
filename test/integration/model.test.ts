import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { loadConfig } from '../../src/config';
import { createLanguageModel, missingModelSetting } from '../../src/llm/model';
import { startScriptedModel, modelSettings } from '../support/scripted-model';

describe('configured model', () => {
  it('names the missing setting when no model is configured', () => {
    expect(missingModelSetting(loadConfig({}).model)).toBe('DOCENT_MODEL_PROVIDER');
    expect(missingModelSetting(loadConfig({ DOCENT_MODEL_PROVIDER: 'openai' }).model)).toBe('DOCENT_MODEL');
    expect(missingModelSetting(loadConfig({ DOCENT_MODEL_PROVIDER: 'openai-compatible', DOCENT_MODEL: 'm' }).model)).toBe('DOCENT_MODEL_BASE_URL');
    expect(createLanguageModel(loadConfig({}).model)).toBeNull();
  });

  it('streams text and runs tool calls through an OpenAI-compatible endpoint', async () => {
    const scripted = await startScriptedModel([{ toolCalls: [{ name: 'lookup', args: { term: 'docent' } }] }, { text: ['Docent ', 'is ready.'] }, { text: ['Hello', ' there'] }]);
    try {
      const config = loadConfig({ ...modelSettings(scripted) });
      const model = createLanguageModel(config.model)!;
      const looked: string[] = [];
      const r = await generateText({
        model,
        prompt: 'What is docent?',
        tools: {
          lookup: tool({
            description: 'look a term up',
            inputSchema: z.object({ term: z.string() }),
            execute: async ({ term }) => {
              looked.push(term);
              return `${term}: a service`;
            },
          }),
        },
        stopWhen: stepCountIs(3),
      });
      expect(looked).toEqual(['docent']);
      expect(r.text).toBe('Docent is ready.');
      const toolMessage = scripted.requests[1]!.messages.find((m) => m.role === 'tool');
      expect(JSON.stringify(toolMessage)).toContain('docent: a service');

      const s = streamText({ model, prompt: 'hi' });
      const parts: string[] = [];
      for await (const p of s.textStream) parts.push(p);
      expect(parts.join('')).toBe('Hello there');
      expect(scripted.rejected).toEqual([]);
    } finally {
      await scripted.close();
    }
  });
});
