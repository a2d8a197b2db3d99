import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client as EsClient } from '@elastic/elasticsearch';
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { resolveRepository, GitAccessRefused, repositoryAccess, type GitAccessSettings, hardenedGit } from '../src/git/access';
import { isAnswerable } from '../src/assistant/relevance';
import type { TurnRecord } from '../src/jobs/turn-record';
import type { ForgeRegistry } from '../src/forges/forge-registry';
import { docsAlias, retrieveRanked, versionedIndexPattern, type Retrieval } from '../src/search/docs-index';
import type { Embedder } from '../src/search/embedder';
import type { BuildPreviewIndexInput, GapAnswer, GapCheckResult, ReAskInput } from '../workflows/docs-gap-check-contract';
import type { BuildDocsIndexResult } from '../workflows/docs-ingest-contract';
import { previewDomain } from '../workflows/docs-gap-check-contract';
import { indexDocs } from './docs';
import { gapCheckComment, gapCommentMarker } from './gap-check-comment';

export interface GapCheckDeps extends GitAccessSettings {
  ledger: TurnRecord;
  es: EsClient;
  esIndexPrefix: string;
  embedder?: () => Promise<Embedder>;
  relevanceFloor: number;
  /** The forge connections whose credentials reach the job's repository (src/forges/). */
  forges: ForgeRegistry;
}

export function createGapCheckActivities(deps: GapCheckDeps) {
  const retrieval: Retrieval = { es: deps.es, indexPrefix: deps.esIndexPrefix, embedder: deps.embedder };

  /** How git reaches the pushed commit; a URL it may not reach fails the check for good, a refused credential is retried. */
  const previewAccess = async (repository: string, forgeId: string | undefined) => {
    try {
      return await repositoryAccess(repository, await deps.forges.gitAccess(forgeId, deps));
    } catch (err) {
      if (err instanceof GitAccessRefused && err.reason === 'address')
        throw ApplicationFailure.create({ type: 'InvalidDocsSource', message: `the repository URL is refused: ${err.message}`, nonRetryable: true });
      throw err;
    }
  };

  const ask = async (domain: string, question: string): Promise<GapAnswer> => {
    // Public pages only, like llms.txt: the check's result is shown on the pull request.
    const r = await retrieveRanked(retrieval, { domain, query: question, pageSize: 5 });
    const answered = r.passages.length > 0 && isAnswerable(r.relevance, deps.relevanceFloor);
    return { relevance: r.relevance.cosine ?? null, answered, topPath: answered ? r.passages[0]!.path : null };
  };

  return {
    /** Clones the pushed commit (with the git host's token) and indexes its docs into the job's preview index. */
    async buildPreviewIndex(input: BuildPreviewIndexInput): Promise<BuildDocsIndexResult> {
      const parent = await mkdtemp(path.join(os.tmpdir(), 'docent-preview-'));
      const dir = path.join(parent, 'repo');
      try {
        const access = await previewAccess(input.repository, input.forgeId);
        heartbeat({ phase: 'cloning' });
        await hardenedGit(parent, parent, access.config).clone(access.cloneUrl, dir, ['--no-checkout']);
        await hardenedGit(dir, parent).raw(['checkout', '--force', '--detach', input.commit]);
        // The docs path comes from the admin, the tree from the repository: neither may lead out of the clone, and a
        // symlinked docs folder is resolved first, since it could point into another job's clone.
        const root = await realpath(path.join(dir, input.docsPath ?? '')).catch(() => path.join(dir, input.docsPath ?? ''));
        const inside = path.relative(await realpath(dir), root);
        if (inside.startsWith('..') || path.isAbsolute(inside))
          throw ApplicationFailure.create({ type: 'InvalidDocsSource', message: `docs path ${input.docsPath} is outside the repository`, nonRetryable: true });
        return await indexDocs(
          { es: deps.es, esIndexPrefix: deps.esIndexPrefix, embedder: deps.embedder },
          root,
          {
            domain: previewDomain(input.jobId),
            source: `${input.repository}@${input.commit}`,
            baseUrl: input.baseUrl,
            docsPath: input.docsPath,
          },
          [input.domain],
        );
      } finally {
        await rm(parent, { recursive: true, force: true });
      }
    },

    /** Each question against the live docs (before) and the job's preview (after). */
    async reAskQuestions(input: ReAskInput): Promise<GapCheckResult['questions']> {
      const out: GapCheckResult['questions'] = [];
      for (const question of input.questions) out.push({ question, before: await ask(input.domain, question), after: await ask(input.previewDomain, question) });
      return out;
    },

    /** Stores the result on the job; an older turn's result never replaces a newer one. */
    async recordGapCheck(input: { jobId: string; result: GapCheckResult }): Promise<void> {
      await deps.ledger.recordGapCheck(input.jobId, input.result);
    },

    /** Deletes a job's preview index and its alias; a preview already gone is fine. */
    async removePreviewIndex(input: { domain: string }): Promise<void> {
      const alias = docsAlias(deps.esIndexPrefix, input.domain);
      const ours = versionedIndexPattern(alias);
      const existing = Object.keys(await deps.es.indices.get({ index: `${alias}-*`, expand_wildcards: 'all' }).catch(() => ({})));
      const previews = existing.filter((i) => ours.test(i));
      if (previews.length) await deps.es.indices.delete({ index: previews.join(',') }, { ignore: [404] });
    },

    /** Comments the result on the pull request, once per job turn. */
    async commentOnPullRequest(input: { repository: string; forgeId?: string; pullRequest: number; jobId: string; result: GapCheckResult }): Promise<void> {
      const { owner, name: repo } = resolveRepository(input.repository, deps.gitBaseUrl);
      const marker = gapCommentMarker(input.jobId, input.result.turn);
      const forge = await deps.forges.forgeOf(input.forgeId);
      try {
        const client = await forge.repository(owner, repo);
        const comments = await client.comments(input.pullRequest);
        if (comments.some((c) => c.body.startsWith(marker))) return;
        await client.comment(input.pullRequest, gapCheckComment(input.jobId, input.result));
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
          throw ApplicationFailure.create({ type: 'PullRequestRejected', message: `${forge.displayName} refused the gap check comment (HTTP ${status})`, nonRetryable: true });
        }
        throw err;
      }
    },
  };
}
