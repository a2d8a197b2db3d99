import { AppError } from '../errors';
import { imageMimeTypes, sniffImage, type ImageMimeType } from '../jobs/job-images';
import { imageLimitsOf, imageRefusal, type ImageModel as LimitedModel } from '../llm/image-limits';

/** An image as a create or follow-up gives it, REST (base64 decoded) and Connect alike. */
export type ImageInput = { mimeType?: string; data: Uint8Array } | { url: string };

/** An image ready to store: bytes whose type was checked by content, or a URL for the worker to fetch. */
export type CheckedImage = { mimeType: ImageMimeType; data: Uint8Array } | { url: string };

/** The model an instruction's images go to: its limits, and whether it takes images at all. */
export type ImageModel = LimitedModel & { images: boolean };

const bad = (i: number, message: string) => new AppError('invalid_argument', `images[${i}]: ${message}`);

function checkUrl(i: number, url: string): { url: string } {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw bad(i, 'url must be an http(s) URL');
  return { url };
}

function checkBytes(i: number, declared: string | undefined, data: Uint8Array, model: ImageModel): CheckedImage {
  if (!declared || !(imageMimeTypes as readonly string[]).includes(declared)) throw bad(i, `mimeType must be one of ${imageMimeTypes.join(', ')}`);
  if (data.length === 0) throw bad(i, 'data is empty');
  const actual = sniffImage(data);
  if (!actual) throw bad(i, 'the bytes are not a PNG, JPEG, WebP or GIF image');
  if (actual !== declared) throw bad(i, `declared ${declared}, but the bytes are ${actual}`);
  const refusal = imageRefusal(model, data.length, actual);
  if (refusal) throw bad(i, refusal);
  return { mimeType: actual, data };
}

/**
 * Checks an instruction's images for the model that will see them, against its provider's limits (src/llm/image-limits.ts):
 * how many, how large and which types (PNG, JPEG, WebP or GIF by their magic bytes; the declared type must agree),
 * and a model whose catalog entry takes images. A URL's image is checked the same way once the worker fetched it.
 */
export function checkImages(images: readonly ImageInput[] | undefined, model: ImageModel, modelsPath: string): CheckedImage[] {
  if (!images?.length) return [];
  if (!model.images) throw new AppError('invalid_argument', `images: the model ${model.name} does not take images; choose one whose "images" is true (GET ${modelsPath})`);
  const { maxImages } = imageLimitsOf(model);
  if (images.length > maxImages) {
    throw new AppError('invalid_argument', `images: ${model.name} (${model.provider}) takes at most ${maxImages} images with an instruction, not ${images.length}`);
  }
  return images.map((image, i) => ('url' in image ? checkUrl(i, image.url) : checkBytes(i, image.mimeType, image.data, model)));
}
