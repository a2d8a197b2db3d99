// `docent local-model`: what `npm start` runs before it starts the gateway and the worker, so that a model's key alone
// (DOCENT_MODEL_API_KEY) or an OpenAI-compatible server's address alone (DOCENT_MODEL_BASE_URL) is a configured model.
// It prints the settings still missing as KEY=VALUE lines (a provider and a model id, never a key); nothing when the
// model is configured already, or there is nothing to go on.
import { loadConfig } from '../config';

/** The model a provider's key alone runs (DOCENT_MODEL changes it); a key of Anthropic's starts with `sk-ant-`. */
export const keyOnlyModels = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-4.1' } as const;

/** How long the server has to list its models. */
const listTimeoutMs = 10_000;

/** The first model an OpenAI-compatible server lists (`GET {baseUrl}/models`, as Ollama, vLLM and llama.cpp serve it). */
async function firstListedModel(baseUrl: string, apiKey: string | undefined): Promise<string | undefined> {
  const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, {
    headers: { accept: 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    signal: AbortSignal.timeout(listTimeoutMs),
  }).catch(() => undefined);
  if (!res?.ok) return undefined;
  const body = (await res.json().catch(() => null)) as { data?: Array<{ id?: unknown }> } | null;
  const id = body?.data?.find((m) => typeof m.id === 'string' && m.id)?.id;
  return typeof id === 'string' ? id : undefined;
}

export async function localModelCommand(args: string[]): Promise<number> {
  if (args.length) {
    console.error('usage: docent local-model');
    return 2;
  }
  const { provider, id, baseUrl, apiKey } = loadConfig().model;
  if (provider) return 0;
  const settings: Record<string, string> = {};
  if (baseUrl) {
    settings.DOCENT_MODEL_PROVIDER = 'openai-compatible';
    const listed = id ?? (await firstListedModel(baseUrl, apiKey));
    if (listed) settings.DOCENT_MODEL = listed;
    else console.error(`${baseUrl}/models listed no model: set DOCENT_MODEL to the one to use`);
  } else if (apiKey) {
    const chosen = apiKey.startsWith('sk-ant-') ? 'anthropic' : 'openai';
    settings.DOCENT_MODEL_PROVIDER = chosen;
    settings.DOCENT_MODEL = id ?? keyOnlyModels[chosen];
  }
  for (const [name, value] of Object.entries(settings)) console.log(`${name}=${value}`);
  return 0;
}
