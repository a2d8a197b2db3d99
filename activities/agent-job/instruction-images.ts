import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { ApplicationFailure } from '@temporalio/activity';
import type { ImagePart } from 'ai';
import { sniffImage, type JobImageStore } from '../../src/jobs/job-images';
import { imageLimitsOf, imageRefusal, sizeText, type ImageModel } from '../../src/llm/image-limits';
import { OutboundRefused, type OutboundGuard } from '../../src/net/outbound';
import type { InstructionImage } from '../../workflows/agent-job-contract';

export interface ImageDeps {
  images: Pick<JobImageStore, 'get'>;
  guard: OutboundGuard;
}

const fetchTimeoutMs = 20_000;

function refused(message: string): never {
  throw ApplicationFailure.create({ type: 'ImageRefused', message, nonRetryable: true });
}

/** GETs the URL at an address checked beforehand (no second DNS answer, no redirects), reading at most `maxBytes`. */
function download(url: URL, address: string, signal: AbortSignal, maxBytes: number, tooLarge: string): Promise<Buffer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(
      url,
      {
        headers: { accept: 'image/png, image/jpeg, image/webp, image/gif', 'user-agent': 'docent-images' },
        lookup: (_host, opts, cb) => {
          const family = isIP(address);
          if ((opts as { all?: boolean }).all) (cb as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
          else cb(null, address, family);
        },
        timeout: fetchTimeoutMs,
        signal,
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new OutboundRefused(`${url.host} answered HTTP ${res.statusCode}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new OutboundRefused(tooLarge));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${fetchTimeoutMs / 1000} s`)));
    req.on('error', reject);
  });
}

/** Names a URL in messages without its query, which may hold a signature. */
const shown = (url: URL) => `${url.origin}${url.pathname}`;

async function fetchImage(deps: ImageDeps, raw: string, signal: AbortSignal, model: ImageModel): Promise<ImagePart> {
  const url = new URL(raw);
  const { maxBytes } = imageLimitsOf(model);
  let bytes: Buffer;
  try {
    const [address] = await deps.guard.check(url);
    bytes = await download(url, address!, signal, maxBytes, `it is larger than ${sizeText(maxBytes)}, the most ${model.name} (${model.provider}) takes per image`);
  } catch (err) {
    if (signal.aborted) throw err;
    if (err instanceof OutboundRefused) refused(`the image ${shown(url)} is refused: ${err.message}`);
    // A network failure may pass: Temporal retries the turn's step.
    throw new Error(`the image ${shown(url)} could not be fetched: ${(err as Error).message}`);
  }
  const type = sniffImage(bytes);
  if (!type) refused(`the image ${shown(url)} is not a PNG, JPEG, WebP or GIF image`);
  const refusal = imageRefusal(model, bytes.length, type);
  if (refusal) refused(`the image ${shown(url)} is refused: ${refusal}`);
  return { type: 'image', image: new Uint8Array(bytes), mediaType: type };
}

/** The instruction's images as image parts of the user message: stored ones read by hash, URLs fetched here. */
export async function instructionImageParts(deps: ImageDeps | undefined, images: InstructionImage[] | undefined, signal: AbortSignal, model: ImageModel | undefined): Promise<ImagePart[]> {
  if (!images?.length) return [];
  if (!deps) refused('this worker cannot read images');
  if (!model) refused("the job's model is not in this worker's model catalog (DOCENT_MODELS)");
  const parts: ImagePart[] = [];
  for (const image of images) {
    if ('url' in image) {
      parts.push(await fetchImage(deps, image.url, signal, model));
      continue;
    }
    const stored = await deps.images.get(image.sha256);
    if (!stored) refused('an image of the instruction is no longer stored (images are kept 30 days); send the instruction again with it');
    parts.push({ type: 'image', image: stored.data, mediaType: stored.mimeType });
  }
  return parts;
}
