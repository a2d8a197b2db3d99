import { randomBytes } from 'node:crypto';
import { readerId } from './reader-id';
import type { Client as EsClient } from '@elastic/elasticsearch';
import type { LanguageModel } from 'ai';
import type { Db } from 'mongodb';
import type { Caller } from '../auth/api-keys';
import type { Config } from '../config';
import { AppError } from '../errors';
import { createLanguageModel } from '../llm/model';
import type { Logger } from '../log';
import { docsAlias, retrieveChunks, retrieveRanked, type Passage, type Retrieval, type SearchFilter } from '../search/docs-index';
import type { Embedder } from '../search/embedder';
import { pageMarkdown, readPages } from '../search/pages';
import { visibleGroups } from '../search/visibility';
import type { AnswerEvent, AnswerSource } from './events';
import { extractiveAnswer, generateAnswer, passageTitle } from './generate';
import { trimHistory } from './history-budget';
import type { AssistantQuestion } from './request';
import { isAnswerable, notCoveredAnswer } from './relevance';
import { isPreviewDomain } from '../../workflows/docs-gap-check-contract';
import { newSearchId, SearchLog, type SearchVia } from './search-log';
import { type AskingClient, historyOf, maxThreadTurns, storedContext, ThreadStore, type ThreadDoc, type TurnDoc } from './threads';
import { settledWithin, TurnWrites } from './turn-writes';

/** What a counted assistant request is charged to; the rate limiter keys its quotas on these. */
export interface CountedAssistantRequest {
  caller: Caller;
  domain: string;
  fp: string;
  remoteAddress?: string;
}

/**
 * Called once per assistant message, after authentication and validation and before any work
 * (docs/keys-and-limits.md). It may throw `AppError('resource_exhausted', …, retryAfterSeconds)`; the rate limiter goes here.
 * What it returns are the RateLimit-* headers of the admitted request.
 */
export type AssistantRequestCounter = (r: CountedAssistantRequest) => Promise<{ headers: Record<string, string> } | undefined>;

/**
 * What a counted search is charged to; without a client address (a caller inside the process) the per-IP limit does
 * not apply.
 */
export interface CountedSearchRequest {
  caller: Caller;
  domain: string;
  remoteAddress?: string;
}

/** Called once per search after authentication and validation, like AssistantRequestCounter. */
export type SearchRequestCounter = (r: CountedSearchRequest) => Promise<{ headers: Record<string, string> } | undefined>;

export interface AssistantServiceDeps {
  config: Config;
  log: Logger;
  db: Db;
  es: EsClient;
  /** The question-embedding model of hybrid retrieval; undefined when embeddings are off. */
  embedder?: () => Promise<Embedder>;
  countAssistantRequest?: AssistantRequestCounter;
  countSearchRequest?: SearchRequestCounter;
}

/** An answer about to be streamed: the ids go in headers before the first byte; `events` runs the generation. */
export interface AnswerSession {
  threadId: string;
  messageId: string;
  /** The question's retrieval in the search log, for clicks on its sources; absent when not recorded. */
  searchId?: string;
  /** RateLimit-* headers of the tightest limit that admitted the request. */
  limitHeaders: Record<string, string>;
  events: AsyncIterable<AnswerEvent>;
}

export interface SearchInput {
  query: string;
  pageSize?: number;
  /** 0..1: passages whose score (relative to the best match's, see relativeScores) is below it are left out. */
  scoreThreshold?: number;
  filter?: SearchFilter;
}

/**
 * Scores on Mintlify's 0..1 scale: each passage's score divided by the best one's. Raw scores (BM25, or fused ranks in
 * hybrid retrieval) have no fixed range, so the best match is 1 and the rest say how close to it they come.
 */
export function relativeScores(passages: Passage[]): Passage[] {
  const best = passages[0]?.score ?? 0;
  return passages.map((p) => ({ ...p, score: best > 0 ? Math.round((p.score / best) * 10_000) / 10_000 : 0 }));
}

/** Turn writes of one process running at once: FerretDB applies one update at a time, and slower when they contend. */
const turnWriteConcurrency = 4;
/** The longest an answer's stream waits for its turn to be stored before it ends anyway. */
const turnWaitMs = 1_000;

export class AssistantService {
  private readonly threads: ThreadStore;
  /** Turns of answers whose streams have ended, being stored; a follow-up on the thread waits for its thread's. */
  readonly turnWrites = new TurnWrites(turnWriteConcurrency);
  private readonly model: LanguageModel | null;
  private readonly modelName: string;
  private readonly retrieval: Retrieval;
  readonly searchLog: SearchLog;

  constructor(private readonly deps: AssistantServiceDeps) {
    this.threads = new ThreadStore(deps.db);
    this.searchLog = new SearchLog(deps.db);
    this.retrieval = { es: deps.es, indexPrefix: deps.config.elasticsearch.indexPrefix, embedder: deps.embedder };
    this.model = createLanguageModel(deps.config.model);
    this.modelName = this.model ? `${deps.config.model.provider}:${deps.config.model.id}` : 'extractive';
  }

  /** Holds an authenticated caller to its own domain; any other domain is `not_found`, so keys reveal nothing about others. */
  authorize(caller: Caller, domain: string): void {
    if (caller.kind !== 'assistant') throw new AppError('permission_denied', 'this endpoint needs an assistant key');
    if (caller.domain !== domain || isPreviewDomain(domain)) throw new AppError('not_found', `no documentation domain ${domain}`);
  }

  /** Passages for a search, with the rate-limit headers the search was counted under; a reader's search (`via`) is recorded for analytics. */
  async search(
    caller: Caller,
    domain: string,
    input: SearchInput,
    opts: { signal?: AbortSignal; remoteAddress?: string; via?: SearchVia } = {},
  ): Promise<{ passages: Passage[]; headers: Record<string, string>; searchId?: string }> {
    this.authorize(caller, domain);
    const admission = await this.deps.countSearchRequest?.({ caller, domain, remoteAddress: opts.remoteAddress });
    const visible = visibleGroups(caller.groups, input.filter?.groups);
    const ranked = await retrieveChunks(this.retrieval, { domain, query: input.query, pageSize: input.pageSize ?? 10, filter: input.filter, visibleGroups: visible }, opts.signal);
    const passages = relativeScores(ranked).filter((p) => p.score >= (input.scoreThreshold ?? 0));
    const search = opts.via && this.beginSearch(caller, domain, input.query, passages.length, opts.via);
    const searchId = search && (await search.written) ? search.searchId : undefined;
    return { passages, headers: admission?.headers ?? {}, ...(searchId && { searchId }) };
  }

  /** Analytics must not cost the reader the results: `written` is false, never a failure, when the search could not be recorded. */
  private beginSearch(caller: Caller, domain: string, query: string, results: number, via: SearchVia, id?: string): { searchId: string; written: Promise<boolean> } {
    const { searchId, written } = this.searchLog.begin({ domain, query, results, via, keyId: caller.keyId }, id);
    return {
      searchId,
      written: written.then(
        () => true,
        (err: unknown) => {
          this.deps.log.warn({ err, domain }, 'could not record a search for analytics');
          return false;
        },
      ),
    };
  }

  /**
   * A page's Markdown, rebuilt from its passages; counted as a search. A page the key may not see (or that `groups`
   * narrows away) is `not_found`, like a page that does not exist.
   */
  async getPage(
    caller: Caller,
    domain: string,
    path: string,
    opts: { remoteAddress?: string; groups?: readonly string[] } = {},
  ): Promise<{ path: string; markdown: string; url: string; title: string; headers: Record<string, string> }> {
    this.authorize(caller, domain);
    const admission = await this.deps.countSearchRequest?.({ caller, domain, remoteAddress: opts.remoteAddress });
    const wanted = path
      .trim()
      .replace(/^\/+|\/+$/g, '')
      .replace(/\.(md|mdx|markdown)$/i, '');
    const [page] = wanted ? await readPages(this.deps.es, docsAlias(this.retrieval.indexPrefix, domain), { visibleGroups: visibleGroups(caller.groups, opts.groups), path: wanted }) : [];
    if (!page) throw new AppError('not_found', `no page ${wanted.slice(0, 200)} in the documentation of ${domain}`);
    return { path: page.path, markdown: pageMarkdown(page), url: page.url, title: page.title, headers: admission?.headers ?? {} };
  }

  /**
   * Stores a reader's rating on a turn of a thread of this domain: the turn with `messageId`, else the latest one.
   * A thread (or message) unknown to the domain is `not_found`.
   */
  async recordFeedback(caller: Caller, domain: string, input: { threadId: string; messageId?: string; rating: 'up' | 'down'; comment?: string }): Promise<void> {
    this.authorize(caller, domain);
    await this.turnWrites.settled(input.threadId); // a rating sent as the answer ends is for the turn still being stored
    const stored = await this.threads.setFeedback(domain, input.threadId, visibleGroups(caller.groups, undefined), input.messageId, {
      rating: input.rating,
      ...(input.comment ? { comment: input.comment } : {}),
      at: new Date(),
    });
    if (stored === 'no-thread') throw new AppError('not_found', `no thread ${input.threadId.slice(0, 200)} in ${domain}`);
    if (stored === 'no-message') throw new AppError('not_found', `no message ${String(input.messageId).slice(0, 200)} in thread ${input.threadId.slice(0, 200)}`);
  }

  /**
   * Authorizes, counts and finds a continued thread, so that every failure about the request itself is a plain HTTP
   * error; then hands back the ids (a new thread's and the search's are chosen here, before they are written) and the
   * events. The slow work (the new thread's insert, embedding and retrieval) runs when the events are first read,
   * after the stream has opened, so a reader sees it open at once; a failure there ends the stream with an error.
   */
  async startAnswer(req: {
    caller: Caller;
    domain: string;
    question: AssistantQuestion;
    remoteAddress?: string;
    signal?: AbortSignal;
    via?: SearchVia;
    client?: AskingClient;
  }): Promise<AnswerSession> {
    const started = performance.now();
    this.authorize(req.caller, req.domain);
    const q = req.question;
    const admission = await this.deps.countAssistantRequest?.({ caller: req.caller, domain: req.domain, fp: q.fp, remoteAddress: req.remoteAddress });
    const keyGroups = visibleGroups(req.caller.groups, undefined);
    // The previous answer's stream may have ended before its turn was stored (turnWaitMs): a follow-up sent to this
    // process reads the thread once it is; one sent to another process then may read it without that turn.
    if (q.threadId) await this.turnWrites.settled(q.threadId);
    const continued = await this.threads.find(req.domain, q.threadId, keyGroups);
    const thread = continued ?? this.threads.draft(req.domain, q.fp, keyGroups);
    const messageId = `msg_${randomBytes(12).toString('base64url')}`;
    const searchId = req.via ? newSearchId() : undefined;
    const reader = readerId(req.domain, req.remoteAddress, this.deps.config.secretKey);
    const setup = () => this.prepare({ ...req, reader }, thread, !continued, started, messageId, searchId);
    return { threadId: thread._id, messageId, ...(searchId && { searchId }), limitHeaders: admission?.headers ?? {}, events: answerEvents(setup, this.deps.log, thread._id, started) };
  }

  /** The answer's slow setup: stores a new thread while its passages are retrieved, then starts the generation. */
  private async prepare(
    req: { caller: Caller; domain: string; question: AssistantQuestion; signal?: AbortSignal; via?: SearchVia; reader?: string; client?: AskingClient },
    thread: ThreadDoc,
    isNew: boolean,
    started: number,
    messageId: string,
    searchId: string | undefined,
  ): Promise<Prepared> {
    const q = req.question;
    const stored = isNew ? this.threads.insert(thread) : Promise.resolve();
    stored.catch(() => undefined);
    const history = trimHistory(isNew ? q.clientHistory.slice(-20) : historyOf(thread), this.deps.config.assistant.historyTokens);
    // A short follow-up ("and for workspaces?") is searched together with the previous question, at lower weight.
    const previousQuestion = [...history].reverse().find((t) => t.role === 'user')?.text;
    const hints = [...q.context.map((c) => c.value), ...(previousQuestion ? [previousQuestion] : [])];
    const retrieved = await retrieveRanked(
      this.retrieval,
      { domain: req.domain, query: q.question, pageSize: q.retrievalPageSize, filter: q.filter, visibleGroups: visibleGroups(req.caller.groups, q.filter?.groups), currentPath: q.currentPath, hints },
      req.signal,
    );
    await stored;
    const retrievalMs = performance.now() - started;
    // Below the relevance floor the nearest passages are about something else: no citations, and no model call.
    const answered = retrieved.passages.length > 0 && isAnswerable(retrieved.relevance, this.deps.config.assistant.relevanceFloor);
    const passages = answered ? retrieved.passages : [];
    const sources: AnswerSource[] = passages.map((p, i) => ({ id: String(i + 1), url: p.url, title: passageTitle(p), path: p.path }));
    // Written beside the answer under the id the stream already announced; the stream's end waits for it (answerEvents), and a failed write only loses analytics.
    const searchWritten = req.via && searchId ? this.beginSearch(req.caller, req.domain, q.question, passages.length, req.via, searchId).written : Promise.resolve(false);
    const generation = !answered
      ? notCovered()
      : this.model
        ? generateAnswer(
            this.model,
            { domain: req.domain, question: q.question, history, passages, context: q.context, signal: req.signal },
            { firstChunkMs: this.deps.config.assistant.modelFirstChunkMs, chunkGapMs: this.deps.config.assistant.modelChunkGapMs },
          )
        : extractiveAnswer({ passages });

    const record = (turn: Omit<TurnDoc, 'userMessage' | 'sources' | 'model' | 'createdAt' | 'context' | 'currentPath' | 'messageId' | 'answered' | 'relevance'>) =>
      this.turnWrites.add(thread._id, () =>
        this.threads
          .appendTurn(thread._id, {
            userMessage: q.question,
            ...(q.context.length ? { context: storedContext(q.context) } : {}),
            ...(q.currentPath ? { currentPath: q.currentPath } : {}),
            sources: passages.map((p, i) => ({ id: String(i + 1), path: p.path, url: p.url, title: passageTitle(p), score: p.score })),
            model: answered ? this.modelName : 'not-covered',
            messageId,
            answered,
            ...(retrieved.relevance.cosine === undefined ? {} : { relevance: retrieved.relevance.cosine }),
            ...(req.reader ? { reader: req.reader } : {}),
            ...(req.client ? { client: req.client } : {}),
            createdAt: new Date(),
            ...turn,
          })
          .then((stored) => stored || this.deps.log.warn({ threadId: thread._id }, `the thread reached ${maxThreadTurns} turns while this answer streamed; the turn is not stored`))
          .catch((err: unknown) => this.deps.log.error({ err, threadId: thread._id }, 'could not store the assistant turn')),
      );
    return { sources, generation, retrievalMs, record, searchWritten };
  }
}

/** What the events need once the setup has run. */
interface Prepared {
  sources: AnswerSource[];
  generation: AsyncIterable<AnswerEvent>;
  retrievalMs: number;
  /** Queues the turn's write (turnWrites); settles, never rejects, once it has run. */
  record(turn: Pick<TurnDoc, 'answer' | 'status' | 'usage' | 'timings'>): Promise<unknown>;
  /** The search record under the announced id; settles, never rejects. */
  searchWritten: Promise<boolean>;
}

/** Runs the setup when first read, then streams the sources and the generation, and stores the turn at the end (waiting at most turnWaitMs). */
async function* answerEvents(setup: () => Promise<Prepared>, log: Logger, threadId: string, started: number): AsyncGenerator<AnswerEvent> {
  let prepared: Prepared;
  try {
    prepared = await setup();
  } catch (err) {
    log.error({ err, threadId }, 'assistant answer failed before its first token');
    throw err;
  }
  const { sources, generation, retrievalMs, record, searchWritten } = prepared;
  let answer = '';
  let firstTokenMs: number | undefined;
  let status: TurnDoc['status'] = 'aborted';
  let usage: TurnDoc['usage'];
  try {
    for (const source of sources) yield { type: 'source', source };
    for await (const e of generation) {
      if (e.type === 'text') {
        firstTokenMs ??= performance.now() - started;
        answer += e.delta;
      } else if (e.type === 'finish') usage = e.usage;
      yield e;
    }
    status = 'completed';
  } catch (err) {
    status = 'failed';
    log.error({ err, threadId }, 'assistant answer failed while streaming');
    throw err;
  } finally {
    // The stream ends once the turn and the search are stored, as a follow-up or a click on a source sent to any process
    // expects, but not later than turnWaitMs: under a burst of answers ending together the writes queue on the database
    // for tens of seconds, and the reader would wait that long for the end of an answer it already has (a follow-up to
    // this process still waits for the write).
    const turn = record({ answer, status, usage, timings: { retrievalMs, firstTokenMs, totalMs: performance.now() - started } });
    await settledWithin(Promise.all([turn, searchWritten]), turnWaitMs);
  }
}

/** The answer below the relevance floor, in both modes: it says so and cites nothing. */
async function* notCovered(): AsyncGenerator<AnswerEvent> {
  for (const piece of notCoveredAnswer.match(/\S+\s*/g) ?? []) yield { type: 'text', delta: piece };
  yield { type: 'finish', finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
}
