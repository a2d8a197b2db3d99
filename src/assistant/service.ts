import { randomBytes } from 'node:crypto';
import type { Client as EsClient } from '@elastic/elasticsearch';
import type { LanguageModel } from 'ai';
import type { Db } from 'mongodb';
import type { Caller } from '../auth/api-keys';
import type { Config } from '../config';
import { AppError } from '../errors';
import { createLanguageModel } from '../llm/model';
import type { Logger } from '../log';
import { retrieveChunks, type Passage, type Retrieval, type SearchFilter } from '../search/docs-index';
import type { Embedder } from '../search/embedder';
import { visibleGroups } from '../search/visibility';
import type { AnswerEvent, AnswerSource } from './events';
import { extractiveAnswer, generateAnswer, passageTitle } from './generate';
import { trimHistory } from './history-budget';
import type { AssistantQuestion } from './request';
import { historyOf, ThreadStore, type TurnDoc } from './threads';

/** What a counted assistant request is charged to; the rate limiter keys its quotas on these. */
export interface CountedAssistantRequest {
  caller: Caller;
  domain: string;
  fp: string;
  remoteAddress?: string;
}

/**
 * Called once per assistant message, after authentication and validation and before any work (README "Keys and
 * limits"). It may throw `AppError('resource_exhausted', …, retryAfterSeconds)`; the rate limiter goes here.
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
  /** RateLimit-* headers of the tightest limit that admitted the request. */
  limitHeaders: Record<string, string>;
  events: AsyncIterable<AnswerEvent>;
}

export interface SearchInput {
  query: string;
  pageSize?: number;
  filter?: SearchFilter;
}

export class AssistantService {
  private readonly threads: ThreadStore;
  private readonly model: LanguageModel | null;
  private readonly modelName: string;
  private readonly retrieval: Retrieval;

  constructor(private readonly deps: AssistantServiceDeps) {
    this.threads = new ThreadStore(deps.db);
    this.retrieval = { es: deps.es, indexPrefix: deps.config.elasticsearch.indexPrefix, embedder: deps.embedder };
    this.model = createLanguageModel(deps.config.model);
    this.modelName = this.model ? `${deps.config.model.provider}:${deps.config.model.id}` : 'extractive';
  }

  /** Holds an authenticated caller to its own domain; any other domain is `not_found`, so keys reveal nothing about others. */
  authorize(caller: Caller, domain: string): void {
    if (caller.kind !== 'assistant') throw new AppError('permission_denied', 'this endpoint needs an assistant key');
    if (caller.domain !== domain) throw new AppError('not_found', `no documentation domain ${domain}`);
  }

  /** Passages for a search, with the rate-limit headers the search was counted under. */
  async search(caller: Caller, domain: string, input: SearchInput, opts: { signal?: AbortSignal; remoteAddress?: string } = {}): Promise<{ passages: Passage[]; headers: Record<string, string> }> {
    this.authorize(caller, domain);
    const admission = await this.deps.countSearchRequest?.({ caller, domain, remoteAddress: opts.remoteAddress });
    const visible = visibleGroups(caller.groups, input.filter?.groups);
    const passages = await retrieveChunks(this.retrieval, { domain, query: input.query, pageSize: input.pageSize ?? 10, filter: input.filter, visibleGroups: visible }, opts.signal);
    return { passages, headers: admission?.headers ?? {} };
  }

  /**
   * Authorizes, counts, opens the thread and retrieves passages, so that every failure so far is a plain HTTP error;
   * then hands back the events, which generate the answer and store the turn as they are consumed.
   */
  async startAnswer(req: { caller: Caller; domain: string; question: AssistantQuestion; remoteAddress?: string; signal?: AbortSignal }): Promise<AnswerSession> {
    const started = performance.now();
    this.authorize(req.caller, req.domain);
    const q = req.question;
    const admission = await this.deps.countAssistantRequest?.({ caller: req.caller, domain: req.domain, fp: q.fp, remoteAddress: req.remoteAddress });

    const { thread, isNew } = await this.threads.open(req.domain, q.fp, q.threadId);
    const history = trimHistory(isNew ? q.clientHistory.slice(-20) : historyOf(thread), this.deps.config.assistant.historyTokens);
    // A short follow-up ("and for workspaces?") is searched together with the previous question, at lower weight.
    const previousQuestion = [...history].reverse().find((t) => t.role === 'user')?.text;
    const hints = [...q.context.map((c) => c.value), ...(previousQuestion ? [previousQuestion] : [])];
    const passages = await retrieveChunks(
      this.retrieval,
      { domain: req.domain, query: q.question, pageSize: q.retrievalPageSize, filter: q.filter, visibleGroups: visibleGroups(req.caller.groups, q.filter?.groups), currentPath: q.currentPath, hints },
      req.signal,
    );
    const retrievalMs = performance.now() - started;
    const sources: AnswerSource[] = passages.map((p, i) => ({ id: String(i + 1), url: p.url, title: passageTitle(p), path: p.path }));
    const generation = this.model
      ? generateAnswer(this.model, { domain: req.domain, question: q.question, history, passages, context: q.context, signal: req.signal })
      : extractiveAnswer({ passages });

    const record = (turn: Omit<TurnDoc, 'userMessage' | 'sources' | 'model' | 'createdAt' | 'context' | 'currentPath'>) =>
      this.threads
        .appendTurn(thread._id, {
          userMessage: q.question,
          ...(q.context.length ? { context: q.context } : {}),
          ...(q.currentPath ? { currentPath: q.currentPath } : {}),
          sources: passages.map((p, i) => ({ id: String(i + 1), path: p.path, url: p.url, title: passageTitle(p), score: p.score })),
          model: this.modelName,
          createdAt: new Date(),
          ...turn,
        })
        .catch((err: unknown) => this.deps.log.error({ err, threadId: thread._id }, 'could not store the assistant turn'));

    const log = this.deps.log;
    async function* events(): AsyncGenerator<AnswerEvent> {
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
        log.error({ err, threadId: thread._id }, 'assistant answer failed while streaming');
        throw err;
      } finally {
        await record({ answer, status, usage, timings: { retrievalMs, firstTokenMs, totalMs: performance.now() - started } });
      }
    }
    return { threadId: thread._id, messageId: `msg_${randomBytes(12).toString('base64url')}`, limitHeaders: admission?.headers ?? {}, events: events() };
  }
}
