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

/** What creating a job answers without a model: every setting still to give, for the case at hand. */
export function noModelMessage(missing: string): string {
  const what = missing === 'DOCENT_MODEL_PROVIDER' ? 'DOCENT_MODEL_PROVIDER and DOCENT_MODEL (or DOCENT_MODELS, a list of models)' : missing;
  return `no model is configured: set ${what} to run agent jobs (docs/configuration.md)`;
}

/** Builds the configured model through the ai SDK; `modelId` overrides the default (a job's `model`). Null when unconfigured. */
export function createLanguageModel(model: Config['model'], modelId?: string): LanguageModel | null {
  if (missingModelSetting(model)) return null;
  const id = modelId ?? model.id!;
  // Only the configured provider's SDK is loaded (each takes 20-70 ms of CPU to load, in every gateway and worker).
  switch (model.provider) {
    case 'openai': {
      const { createOpenAI } = require('@ai-sdk/openai') as typeof import('@ai-sdk/openai');
      return createOpenAI({ apiKey: model.apiKey, baseURL: model.baseUrl })(id);
    }
    case 'anthropic': {
      const { createAnthropic } = require('@ai-sdk/anthropic') as typeof import('@ai-sdk/anthropic');
      return createAnthropic({ apiKey: model.apiKey, baseURL: model.baseUrl })(id);
    }
    case 'openai-compatible': {
      const { createOpenAICompatible } = require('@ai-sdk/openai-compatible') as typeof import('@ai-sdk/openai-compatible');
      // Includes local servers such as Ollama or vLLM; usage numbers are asked for in streams too.
      return createOpenAICompatible({ name: 'openai-compatible', baseURL: model.baseUrl!, apiKey: model.apiKey, includeUsage: true })(id);
    }
    default:
      return null;
  }
}

/** Builds a catalog entry's model (a job's `model`). */
export function catalogLanguageModel(entry: CatalogModel): LanguageModel | null {
  return createLanguageModel({ provider: entry.provider, id: entry.name, baseUrl: entry.baseUrl, apiKey: entry.apiKey });
}
