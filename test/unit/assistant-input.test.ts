import { estimateTokens, trimHistory } from '../../src/assistant/history-budget';
import { assistantRequestV2, maxQuestionBytes, toQuestion, type ChatTurn } from '../../src/assistant/request';
import { AppError } from '../../src/errors';
import { visibleGroups, visibilityFilter } from '../../src/search/visibility';

const body = (...texts: string[]) => assistantRequestV2.parse({ fp: 'anonymous', messages: [{ role: 'user', parts: texts.map((text) => ({ type: 'text', text })) }] });

describe('question size', () => {
  it('accepts a question of 8 KiB and refuses one byte more with invalid_argument', () => {
    expect(toQuestion(body('a'.repeat(maxQuestionBytes))).question).toHaveLength(maxQuestionBytes);
    const err = (() => {
      try {
        toQuestion(body('a'.repeat(maxQuestionBytes + 1)));
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('8 KiB') });
  });

  it('counts the question in UTF-8 bytes, across all its text parts', () => {
    expect(() => toQuestion(body('€'.repeat(3_000)))).toThrow(/9000 bytes/);
    expect(() => toQuestion(body('a'.repeat(30_000), 'b'.repeat(30_000)))).toThrow(/question/);
  });
});

describe('history budget', () => {
  const turn = (role: ChatTurn['role'], bytes: number): ChatTurn => ({ role, text: 'x'.repeat(bytes) });

  it('estimates one token per 3 UTF-8 bytes', () => {
    expect(estimateTokens('abc')).toBe(1);
    expect(estimateTokens('abcd')).toBe(2);
    expect(estimateTokens('日本')).toBe(2);
  });

  it('keeps the most recent turns that fit, whole, starting with a user turn', () => {
    const history = [turn('user', 300), turn('assistant', 300), turn('user', 300), turn('assistant', 300)];
    // Each turn costs 100 + 4 tokens: three fit in 320, and the oldest kept one (an answer) is dropped too.
    expect(trimHistory(history, 320)).toEqual(history.slice(2));
    expect(trimHistory(history, 10_000)).toEqual(history);
    expect(trimHistory(history, 50)).toEqual([]);
  });

  it('drops a long old turn rather than keeping it cut in half', () => {
    const history = [turn('user', 30_000), turn('assistant', 30), turn('user', 30), turn('assistant', 30)];
    expect(trimHistory(history, 1_000)).toEqual(history.slice(2));
  });
});

describe('restricted page visibility', () => {
  it("is the key's groups, narrowed but never widened by the request's filter", () => {
    expect(visibleGroups(undefined, undefined)).toEqual([]);
    expect(visibleGroups(undefined, ['staff'])).toEqual([]);
    expect(visibleGroups(['staff', 'beta'], undefined)).toEqual(['staff', 'beta']);
    expect(visibleGroups(['staff', 'beta'], ['beta', 'admins'])).toEqual(['beta']);
    expect(visibleGroups(['staff'], ['customers'])).toEqual([]);
  });

  it('lets public pages through always and restricted pages only for listed groups', () => {
    expect(visibilityFilter([])).toEqual({ bool: { must_not: { exists: { field: 'groups' } } } });
    expect(JSON.stringify(visibilityFilter(['staff']))).toContain('{"terms":{"groups":["staff"]}}');
  });
});
