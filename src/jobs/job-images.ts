import { createHash } from 'node:crypto';
import { Binary, type Db } from 'mongodb';

/** At most this many images go with one instruction, each at most `maxImageBytes`. */
export const maxImages = 5;
export const maxImageBytes = 10 * 1024 * 1024;
/** How long a stored image stays after the instruction that brought it (a retry within that time finds it). */
export const imageRetentionMs = 30 * 24 * 60 * 60 * 1000;

export const imageMimeTypes = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type ImageMimeType = (typeof imageMimeTypes)[number];

/** How an instruction names its images in Temporal history and turn records: never the bytes. */
export type ImageRef = { sha256: string; mimeType: ImageMimeType } | { url: string };

const startsWith = (bytes: Uint8Array, at: number, ascii: string) => Buffer.from(bytes.subarray(at, at + ascii.length)).toString('latin1') === ascii;

/** The image type the bytes are, by their magic numbers; null for anything else, whatever it was declared to be. */
export function sniffImage(bytes: Uint8Array): ImageMimeType | null {
  if (bytes.length >= 8 && startsWith(bytes, 0, '\x89PNG\r\n\x1a\n')) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && startsWith(bytes, 0, 'RIFF') && startsWith(bytes, 8, 'WEBP')) return 'image/webp';
  if (bytes.length >= 6 && (startsWith(bytes, 0, 'GIF87a') || startsWith(bytes, 0, 'GIF89a'))) return 'image/gif';
  return null;
}

interface ImageDoc {
  _id: string;
  mimeType: ImageMimeType;
  data: Binary;
  bytes: number;
  expiresAt: Date;
}

/** Images given with instructions (`job_images`), by the SHA-256 of their bytes; written by the ledger only. */
export class JobImageStore {
  constructor(private readonly db: Db) {}

  private get images() {
    return this.db.collection<ImageDoc>('job_images');
  }

  /** Stores the image (the same bytes again only move its expiry) and returns its reference. */
  async put(mimeType: ImageMimeType, data: Uint8Array, now = new Date()): Promise<ImageRef> {
    const sha256 = createHash('sha256').update(data).digest('hex');
    const expiresAt = new Date(now.getTime() + imageRetentionMs);
    await this.images.updateOne({ _id: sha256 }, { $set: { expiresAt }, $setOnInsert: { mimeType, data: new Binary(data), bytes: data.length } }, { upsert: true });
    return { sha256, mimeType };
  }

  /** The stored bytes, or null once expired (or never stored). */
  async get(sha256: string): Promise<{ mimeType: ImageMimeType; data: Uint8Array } | null> {
    const doc = await this.images.findOne({ _id: sha256 });
    return doc ? { mimeType: doc.mimeType, data: doc.data.buffer } : null;
  }
}

export async function ensureImageIndexes(db: Db): Promise<void> {
  const images = db.collection('job_images');
  // Where TTL indexes are not supported the index still serves an expiry sweep.
  await images.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }).catch(() => images.createIndex({ expiresAt: 1 }));
}
