import { AppError } from '../errors';
import { imageMimeTypes, maxImageBytes, maxImages, sniffImage, type ImageMimeType } from '../jobs/job-images';

/** An image as a create or follow-up gives it, REST (base64 decoded) and Connect alike. */
export type ImageInput = { mimeType?: string; data: Uint8Array } | { url: string };

/** An image ready to store: bytes whose type was checked by content, or a URL for the worker to fetch. */
export type CheckedImage = { mimeType: ImageMimeType; data: Uint8Array } | { url: string };

const megabytes = maxImageBytes / 1024 / 1024;
const bad = (i: number, message: string) => new AppError('invalid_argument', `images[${i}]: ${message}`);

function checkUrl(i: number, url: string): { url: string } {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw bad(i, 'url must be an http(s) URL');
  return { url };
}

function checkBytes(i: number, declared: string | undefined, data: Uint8Array): CheckedImage {
  if (!declared || !(imageMimeTypes as readonly string[]).includes(declared)) throw bad(i, `mimeType must be one of ${imageMimeTypes.join(', ')}`);
  if (data.length === 0) throw bad(i, 'data is empty');
  if (data.length > maxImageBytes) throw bad(i, `the image is larger than ${megabytes} MB`);
  const actual = sniffImage(data);
  if (!actual) throw bad(i, 'the bytes are not a PNG, JPEG, WebP or GIF image');
  if (actual !== declared) throw bad(i, `declared ${declared}, but the bytes are ${actual}`);
  return { mimeType: actual, data };
}

/**
 * Checks an instruction's images for the model that will see them: at most 5, each at most 10 MB and a PNG, JPEG,
 * WebP or GIF by its magic bytes (the declared type must agree), and a model whose catalog entry takes images.
 */
export function checkImages(images: readonly ImageInput[] | undefined, model: { name: string; images: boolean }, modelsPath: string): CheckedImage[] {
  if (!images?.length) return [];
  if (images.length > maxImages) throw new AppError('invalid_argument', `images: at most ${maxImages} images may go with an instruction, not ${images.length}`);
  if (!model.images) throw new AppError('invalid_argument', `images: the model ${model.name} does not take images; choose one whose "images" is true (GET ${modelsPath})`);
  return images.map((image, i) => ('url' in image ? checkUrl(i, image.url) : checkBytes(i, image.mimeType, image.data)));
}
