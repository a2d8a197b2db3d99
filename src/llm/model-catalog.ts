import { z } from 'zod';
import { imageMimeTypes } from '../jobs/job-images';
import { imageLimitsOf, type ImageLimits } from './image-limits';
import type { PriceTable } from '../jobs/prices';

export const modelProviders = ['openai', 'anthropic', 'openai-compatible'] as const;
export type ModelProvider = (typeof modelProviders)[number];

/** One model an operator allows (DOCENT_MODELS); `name` is what a create's `model` names and the provider is sent. */
export interface CatalogModel {
  name: string;
  provider: ModelProvider;
  /** The provider's endpoint; DOCENT_MODEL_BASE_URL when the entry names none. */
  baseUrl?: string;
  /** The provider's key; DOCENT_MODEL_API_KEY when the entry names none. Never shown by the models listing. */
  apiKey?: string;
  /** USD per million tokens; absent when the operator gave none (turns then show no cost). */
  prices?: { input: number; output: number };
  /** Whether the model takes image parts in a user message. */
  images: boolean;
  /** What the provider takes of images, where the operator states it; the rest comes from `providerImageLimits`. */
  imageLimits?: Partial<ImageLimits>;
}

const entrySchema = z.strictObject({
  name: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9._:/@-]+$/, 'must be a model id'),
  provider: z.enum(modelProviders),
  baseUrl: z.url().optional(),
  apiKey: z.string().min(1).optional(),
  prices: z.strictObject({ input: z.number().min(0), output: z.number().min(0) }).optional(),
  images: z.boolean().default(false),
  // The provider's limits where they differ from its defaults (providerImageLimits), e.g. a proxy in front of it.
  imageLimits: z
    .strictObject({
      maxBytes: z.number().int().min(1).optional(),
      maxImages: z.number().int().min(1).optional(),
      mimeTypes: z.array(z.enum(imageMimeTypes)).min(1).optional(),
    })
    .optional(),
});

/** DOCENT_MODELS: a JSON array of entries, the first the default, each name once. */
export const modelCatalogSchema = z
  .array(entrySchema)
  .min(1, 'must list at least one model')
  .refine((list) => new Set(list.map((m) => m.name)).size === list.length, 'names each model once');

/** The entry a job's model names, or undefined when the operator no longer (or never) allowed it. */
export function catalogEntry(catalog: readonly CatalogModel[], name: string): CatalogModel | undefined {
  return catalog.find((m) => m.name === name);
}

/** The price table turns are costed with: DOCENT_MODEL_PRICES, with the catalog's own prices winning. */
export function catalogPrices(catalog: readonly CatalogModel[], legacy: PriceTable): PriceTable {
  const table: PriceTable = { ...legacy };
  for (const m of catalog) if (m.prices) table[m.name] = m.prices;
  return table;
}

/** What GET /v2/agent/{projectId}/models shows of an entry: never its endpoint or key. */
export function publicModel(m: CatalogModel, isDefault: boolean) {
  return { id: m.name, provider: m.provider, default: isDefault, images: m.images, imageLimits: m.images ? imageLimitsOf(m) : null, prices: m.prices ?? null };
}
