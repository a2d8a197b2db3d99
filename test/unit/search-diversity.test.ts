import { compactVector, expandVector } from '../../src/search/compact-vector';
import { cosine } from '../../src/search/vector-math';
import { diversify, type Passage } from '../../src/search/docs-index';
import { diverseOrder } from '../../src/search/mmr';

const unit = (...xs: number[]) => {
  const n = Math.hypot(...xs);
  return Float32Array.from(xs, (x) => x / n);
};

describe('compact vectors', () => {
  it('keep a vector’s direction in one byte per component', () => {
    const a = unit(0.3, -0.1, 0.05, 0.9);
    const b = unit(0.2, 0.4, -0.3, 0.1);
    const ca = expandVector(compactVector(a));
    expect(ca).toHaveLength(4);
    expect(ca[3]).toBe(127);
    expect(cosine(ca, a)).toBeGreaterThan(0.999);
    expect(cosine(ca, expandVector(compactVector(b)))).toBeCloseTo(cosine(a, b), 2);
  });

  it('keep the encoding that indexes already store', () => {
    expect(compactVector(Float32Array.from([0.3, -0.1, 0.05, 0.9, -0.45, 0]))).toBe('KvIHf8EA');
  });

  it('give a cosine of 0 for an all-zero vector', () => {
    expect(cosine(expandVector(compactVector([0, 0, 0])), [1, 0, 0])).toBe(0);
  });
});

describe('diverseOrder (maximal marginal relevance)', () => {
  const vectors: Record<string, number[]> = { a: [1, 0, 0], aCopy: [1, 0, 0], b: [0, 1, 0], c: [0, 0, 1] };
  const ranked = [
    { id: 'a', score: 1 },
    { id: 'aCopy', score: 0.95 },
    { id: 'b', score: 0.8 },
    { id: 'c', score: 0.3 },
  ];

  it('moves a near-copy of a better candidate below a different one of similar score', () => {
    expect(diverseOrder(ranked, (id) => vectors[id]).map((x) => x.id)).toEqual(['a', 'b', 'aCopy', 'c']);
  });

  it('keeps the order when no vectors are known, and leaves candidates past the depth alone', () => {
    expect(diverseOrder(ranked, () => undefined).map((x) => x.id)).toEqual(['a', 'aCopy', 'b', 'c']);
    expect(diverseOrder(ranked, (id) => vectors[id], 0.7, 2).map((x) => x.id)).toEqual(['a', 'aCopy', 'b', 'c']);
  });

  it('does not let a weak candidate jump far ahead for being different', () => {
    const order = diverseOrder(ranked, (id) => vectors[id]).map((x) => x.id);
    expect(order.indexOf('c')).toBe(3);
  });
});

describe('diversify', () => {
  const p = (id: string, path: string, score: number): Passage => ({ id, path, url: '', title: '', headings: [], content: '', score });

  it('keeps the given order (a re-ranked list), at most two passages per page while others match', () => {
    const ranked = [p('1', 'x', 0.5), p('2', 'y', 0.9), p('3', 'x', 0.4), p('4', 'x', 0.8), p('5', 'z', 0.1)];
    expect(diversify(ranked, 4).map((x) => x.id)).toEqual(['1', '2', '3', '5']);
    expect(diversify(ranked, 5).map((x) => x.id)).toEqual(['1', '2', '3', '4', '5']);
  });
});
