import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import type { Config } from '../config';
import type { CatalogModel } from './model-catalog';

/** The setting an operator must add before model-backed features work, or null when a model is configured. */
export function missingModelSetting(model: Config['model']): string | null {
  if (!model.provider) return 'DOCENT_MODEL_PROVIDER';
  if (!model.id) return 'DOCENT_MODEL';
  if (model.provider === 'openai-compatible' && !model.baseUrl) return 'DOCENT_MODEL_BASE_URL';
  return null;
}

/** Builds the configured model through the ai SDK; `modelId` overrides the default (a job's `model`). Null when unconfigured. */
export function createLanguageModel(model: Config['model'], modelId?: string): LanguageModel | null {
  if (missingModelSetting(model)) return null;
  const id = modelId ?? model.id!;
  switch (model.provider) {
    case 'openai':
      return createOpenAI({ apiKey: model.apiKey, baseURL: model.baseUrl })(id);
    case 'anthropic':
      return createAnthropic({ apiKey: model.apiKey, baseURL: model.baseUrl })(id);
    case 'openai-compatible':
      // Includes local servers such as Ollama or vLLM; usage numbers are asked for in streams too.
      return createOpenAICompatible({ name: 'openai-compatible', baseURL: model.baseUrl!, apiKey: model.apiKey, includeUsage: true })(id);
    default:
      return null;
  }
}

/** Builds a catalog entry's model (a job's `model`). */
export function catalogLanguageModel(entry: CatalogModel): LanguageModel | null {
  return createLanguageModel({ provider: entry.provider, id: entry.name, baseUrl: entry.baseUrl, apiKey: entry.apiKey });
}
