import { imageMimeTypes, maxImageBytes, maxImages, type ImageMimeType } from '../jobs/job-images';
import type { CatalogModel, ModelProvider } from './model-catalog';

/** What a provider takes of an instruction's images: bytes of one image (as docent holds it, before base64), how many, which types. */
export interface ImageLimits {
  maxBytes: number;
  maxImages: number;
  mimeTypes: readonly ImageMimeType[];
}

/**
 * The providers' documented limits, as far as docent's own (10 MB, 5 images) leave them room; docs/decisions/2026-11-26-images-and-approve.md
 * names the sources. Anthropic's Messages API refuses an image whose base64 is over 5 MB (5,242,880 characters),
 * so 3.75 MB of bytes; OpenAI's is 20 MB an image, past docent's own 10 MB. An openai-compatible server states its own.
 */
export const providerImageLimits: Record<ModelProvider, ImageLimits> = {
  anthropic: { maxBytes: (5 * 1024 * 1024 * 3) / 4, maxImages: 100, mimeTypes: imageMimeTypes },
  openai: { maxBytes: 20 * 1024 * 1024, maxImages: 500, mimeTypes: imageMimeTypes },
  'openai-compatible': { maxBytes: maxImageBytes, maxImages, mimeTypes: imageMimeTypes },
};

/** The model images go to, as its catalog entry describes it. */
export type ImageModel = Pick<CatalogModel, 'name' | 'provider' | 'imageLimits'>;

/** What a model takes: its entry's limits over its provider's, never past docent's own. */
export function imageLimitsOf(m: Pick<CatalogModel, 'provider' | 'imageLimits'>): ImageLimits {
  const limits = { ...providerImageLimits[m.provider], ...m.imageLimits };
  return { maxBytes: Math.min(limits.maxBytes, maxImageBytes), maxImages: Math.min(limits.maxImages, maxImages), mimeTypes: limits.mimeTypes };
}

/** A size as people read it, with the exact bytes: "6 MB (6291456 bytes)". */
export const sizeText = (bytes: number) => `${Number((bytes / 1024 / 1024).toFixed(2))} MB (${bytes} bytes)`;

/** The limit as the provider words it, where its own unit differs from the bytes docent counts. */
const providerWording = (m: Pick<CatalogModel, 'provider'>) => (m.provider === 'anthropic' ? '; Anthropic counts 5 MB of base64' : '');

/** Why an image of `bytes` bytes and type `type` is too much for the model, or null when it takes it. */
export function imageRefusal(model: ImageModel, bytes: number, type: ImageMimeType): string | null {
  const limits = imageLimitsOf(model);
  const who = `${model.name} (${model.provider})`;
  if (!limits.mimeTypes.includes(type)) return `${who} takes ${limits.mimeTypes.join(', ')}, not ${type}`;
  if (bytes > limits.maxBytes) return `the image is ${sizeText(bytes)}; ${who} takes at most ${sizeText(limits.maxBytes)} per image${providerWording(model)}`;
  return null;
}
