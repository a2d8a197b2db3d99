// The gap loop's check workflow's contract: its input, result and activities' inputs.

/** What a gap-loop job checks after a push: which questions, against which docs. */
export interface GapCheckSpec {
  /** The live documentation domain the questions were asked on. */
  domain: string;
  /** Where the docs are inside the repository ('' or absent: its root). */
  docsPath?: string;
  /** The base URL of passage URLs, as the live docs were ingested with. */
  baseUrl: string;
  /** The questions, one per group of unanswered or down-rated questions. */
  questions: string[];
}

export interface DocsGapCheckInput {
  jobId: string;
  turn: number;
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  branch: string;
  /** The commit that was pushed. */
  commit: string;
  pullRequest: { url: string; number: number };
  spec: GapCheckSpec;
}

/** A question's retrieval against one docs version. */
export interface GapAnswer {
  /** Cosine of the question to its nearest passage; null without vectors. */
  relevance: number | null;
  answered: boolean;
  /** The page of the best passage, when answered. */
  topPath: string | null;
}

/** Before (live docs) and after (the job's branch) for each question; stored on the job as `gapCheck`. */
export interface GapCheckResult {
  turn: number;
  commit: string;
  /** The preview alias the branch's docs were ingested into (removed once the result is recorded). */
  previewIndex: string;
  checkedAt: string;
  questions: Array<{ question: string; before: GapAnswer; after: GapAnswer }>;
  /** Questions unanswered before and answered after. */
  fixed: number;
}

export interface BuildPreviewIndexInput {
  jobId: string;
  /** The live domain, whose passage vectors the preview reuses where the text is unchanged. */
  domain: string;
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  commit: string;
  docsPath?: string;
  baseUrl: string;
}

export interface ReAskInput {
  domain: string;
  /** The preview's alias domain (see previewDomain). */
  previewDomain: string;
  questions: string[];
}

/** The pseudo-domain a job's preview index is published under: its own alias, never a reader's domain. */
export const previewDomain = (jobId: string) => `preview-${jobId}.gaps.docent`;
/** A gap check's preview: never served by a public route, never a project's domain. */
export const isPreviewDomain = (domain: string) => domain.endsWith('.gaps.docent');
