import { checkImages } from '../../src/agent/images';
import { sniffImage } from '../../src/jobs/job-images';
import { imageLimitsOf } from '../../src/llm/image-limits';
import { modelCatalogSchema, type CatalogModel } from '../../src/llm/model-catalog';

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const samples = {
  'image/png': bytes([0x89], 'PNG\r\n\x1a\n', [0, 0, 0, 13]),
  'image/jpeg': bytes([0xff, 0xd8, 0xff, 0xe0], 'JFIF'),
  'image/webp': bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 '),
  'image/gif': bytes('GIF87a', [1, 0, 1, 0]),
};
const vision: CatalogModel = { name: 'vision', provider: 'openai', images: true };

describe('images by their bytes', () => {
  it('knows the four types by their magic numbers and nothing else', () => {
    for (const [type, data] of Object.entries(samples)) expect(sniffImage(data)).toBe(type);
    expect(sniffImage(bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt '))).toBeNull();
    expect(sniffImage(bytes('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(sniffImage(bytes([0x89], 'PN'))).toBeNull();
    expect(sniffImage(new Uint8Array())).toBeNull();
  });

  it('takes a declared type only when the bytes agree, and a URL only over http(s)', () => {
    expect(checkImages([{ mimeType: 'image/webp', data: samples['image/webp'] }, { url: 'https://x.test/a.png' }], vision, '/m')).toEqual([
      { mimeType: 'image/webp', data: samples['image/webp'] },
      { url: 'https://x.test/a.png' },
    ]);
    expect(() => checkImages([{ mimeType: 'image/png', data: samples['image/jpeg'] }], vision, '/m')).toThrow('images[0]: declared image/png, but the bytes are image/jpeg');
    expect(() => checkImages([{ mimeType: 'image/svg+xml', data: samples['image/png'] }], vision, '/m')).toThrow(/mimeType must be one of/);
    expect(() => checkImages([{ url: 'ftp://x.test/a.png' }], vision, '/m')).toThrow(/http\(s\) URL/);
    expect(() => checkImages([{ mimeType: 'image/gif', data: samples['image/gif'] }], { ...vision, images: false }, '/m')).toThrow('images: the model vision does not take images');
    expect(checkImages(undefined, { ...vision, images: false }, '/m')).toEqual([]);
  });
});

describe("images against the model's provider", () => {
  const png = (size: number) => Buffer.concat([samples['image/png'], Buffer.alloc(size - samples['image/png'].length)]);
  const claude: CatalogModel = { name: 'claude', provider: 'anthropic', images: true };

  it("takes per provider what its API takes, never past docent's own limits", () => {
    expect(imageLimitsOf(claude)).toEqual({ maxBytes: 3_932_160, maxImages: 5, mimeTypes: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] });
    expect(imageLimitsOf(vision).maxBytes).toBe(10 * 1024 * 1024);
    expect(imageLimitsOf({ provider: 'openai-compatible', imageLimits: { maxBytes: 1024, mimeTypes: ['image/png'] } })).toMatchObject({ maxBytes: 1024, maxImages: 5, mimeTypes: ['image/png'] });
    expect(imageLimitsOf({ provider: 'openai', imageLimits: { maxBytes: 50 * 1024 * 1024, maxImages: 50 } })).toMatchObject({ maxBytes: 10 * 1024 * 1024, maxImages: 5 });
  });

  it('refuses an image over the limit of the chosen model, naming it, and takes the largest it allows', () => {
    expect(checkImages([{ mimeType: 'image/png', data: png(3_932_160) }], claude, '/m')).toHaveLength(1);
    expect(() => checkImages([{ mimeType: 'image/png', data: png(3_932_161) }], claude, '/m')).toThrow(
      'images[0]: the image is 3.75 MB (3932161 bytes); claude (anthropic) takes at most 3.75 MB (3932160 bytes) per image; Anthropic counts 5 MB of base64',
    );
    expect(checkImages([{ mimeType: 'image/png', data: png(6 * 1024 * 1024) }], vision, '/m')).toHaveLength(1);
    const pngOnly: CatalogModel = { ...vision, provider: 'openai-compatible', imageLimits: { mimeTypes: ['image/png'], maxImages: 1 } };
    expect(() => checkImages([{ mimeType: 'image/gif', data: samples['image/gif'] }], pngOnly, '/m')).toThrow('images[0]: vision (openai-compatible) takes image/png, not image/gif');
    expect(() => checkImages([{ url: 'https://x.test/a.png' }, { url: 'https://x.test/b.png' }], pngOnly, '/m')).toThrow(
      'images: vision (openai-compatible) takes at most 1 images with an instruction, not 2',
    );
  });

  it('DOCENT_MODELS states limits per entry and refuses unknown ones', () => {
    const entry = { name: 'm', provider: 'openai-compatible', images: true, imageLimits: { maxBytes: 1000, mimeTypes: ['image/png'] } };
    expect(modelCatalogSchema.parse([entry])[0]?.imageLimits).toEqual({ maxBytes: 1000, mimeTypes: ['image/png'] });
    expect(modelCatalogSchema.safeParse([{ ...entry, imageLimits: { mimeTypes: ['image/svg+xml'] } }]).success).toBe(false);
    expect(modelCatalogSchema.safeParse([{ ...entry, imageLimits: { maxPixels: 8000 } }]).success).toBe(false);
  });
});
