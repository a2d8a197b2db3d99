import { checkImages } from '../../src/agent/images';
import { sniffImage } from '../../src/jobs/job-images';
import type { CatalogModel } from '../../src/llm/model-catalog';

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
