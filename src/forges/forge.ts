// What docent does on a forge, whatever its kind: one interface, one module per kind behind it (src/forges/github/,
// src/forges/gitea/, src/forges/gitlab/). The activities, the webhook intake and its durable step, automations, the docs sync and the gap
// preview call only this; a kind's API, its payloads and its refusals stay inside its module
// (docs/decisions/2026-12-02-forge-kinds.md).
import type { IncomingHttpHeaders } from 'node:http';
import type { ForgeKind } from './forge-connection';

/** A pull (or merge) request as the forge shows it now. */
export interface PullRequestState {
  open: boolean;
  merged: boolean;
  headRef: string;
  /** `owner/name` of the head's repository; null when the forge no longer knows it (a deleted fork). */
  headRepository: string | null;
  url: string;
}

/** A pull request docent opened or found: its page and its number. */
export interface PullRequestRef {
  url: string;
  number: number;
}

/** A user's standing on a repository, as the forge reports it now. */
export interface RepositoryPermission {
  /** Whether the forge lets them push (GitHub: write, maintain or admin; Gitea: write, admin or owner; GitLab: Developer or more). */
  push: boolean;
  /** The role as the forge names it, for the reason a delivery records. */
  role: string;
}

/** What docent opens for a job's branch. */
export interface NewPullRequest {
  head: string;
  base: string;
  title: string;
  /** The description for a draft, or for a ready pull request where the forge has no drafts. */
  body(draft: boolean): string;
  draft: boolean;
  /** Whether some check failed: where a draft cannot be had, the title says so instead. */
  checksFailing: boolean;
}

/** A completed run of the project's checks on a pushed commit, as docent reports it. */
export interface ChecksReport {
  commit: string;
  conclusion: 'success' | 'failure';
  /** One line: `2 of 5 checks failed`. */
  headline: string;
  /** What a forge with rich checks shows (GitHub's check run); others show the headline. */
  output: { title: string; summary: string; text: string };
}

/** Where a reaction goes: an issue or pull request itself, a comment on one, or a comment on a line of its diff. */
export type ReactionTarget =
  | { kind: 'issue'; number: number }
  /** `number` and `on`: the pull request or issue the comment is on (GitLab reaches a note only through it). */
  | { kind: 'comment'; id: number; number?: number; on?: CommentThread }
  | { kind: 'review_comment'; id: number };

/** What a numbered comment thread is: GitLab numbers merge requests and issues apart; GitHub and Gitea share the numbers. */
export type CommentThread = 'pull' | 'issue';

/** One repository's API calls, with one connection's credential. */
export interface ForgeRepository {
  readonly owner: string;
  readonly name: string;
  /** The open pull request whose head is `branch` in this repository, if any. */
  openPullRequestOf(branch: string): Promise<PullRequestRef | null>;
  /**
   * Opens the pull request, or answers the one already open for its head: never a second one. A draft where the forge
   * has drafts; where it has none, ready and titled `[checks failing]` when checks failed.
   */
  openPullRequest(pr: NewPullRequest): Promise<PullRequestRef>;
  /** The pull request's state; null when the forge has no such pull request. */
  pullRequest(number: number): Promise<PullRequestState | null>;
  /** The pull request's unified diff. */
  pullRequestDiff(number: number): Promise<string>;
  /** The comments on a pull request (or, `on: 'issue'`, an issue), oldest first. */
  comments(number: number, on?: CommentThread): Promise<Array<{ id: number; body: string }>>;
  /** Comments on a pull request (or, `on: 'issue'`, an issue). */
  comment(number: number, body: string, on?: CommentThread): Promise<{ id: number }>;
  /** The 👀 reaction: docent read it and acts on it. */
  react(target: ReactionTarget): Promise<void>;
  /** What `login` may do on this repository now. */
  permission(login: string): Promise<RepositoryPermission>;
  /** Shows the checks on the commit: how it was reported (`none` where the credential may not). */
  reportChecks(report: ChecksReport): Promise<'check-run' | 'commit-status' | 'none'>;
}

/** What a credential reaches on a repository: null when the forge will not show it; where to install an App that is not. */
export type RepositoryReach = { push: boolean } | { installUrl: string } | null;

/** A verified delivery's headers as docent reads them: the forge's id for it and its event, in docent's event names. */
export interface DeliveryHeaders {
  id: string | undefined;
  event: string | undefined;
}

/** How a forge signs and names its webhook deliveries. */
export interface ForgeWebhooks {
  /** The header that carries the signature, as errors name it. */
  readonly signatureHeader: string;
  /** Whether the body is signed with `secret`: checked on the raw body, before anything is parsed. */
  verify(secret: string, body: string, headers: IncomingHttpHeaders): Promise<boolean>;
  /** The delivery's id and event. */
  read(headers: IncomingHttpHeaders): DeliveryHeaders;
  /**
   * The event in docent's names and its payload in the shapes docent reads (src/github/payloads.ts): a forge whose
   * events or payloads differ (GitLab's `Note Hook`) translates them here.
   */
  normalize(event: string, payload: unknown): { event: string; payload: unknown };
}

/** Registering docent's webhook on a repository, where the credential may. */
export interface WebhookRegistration {
  url: string;
  secret: string;
}

/** One forge connection's way to its forge. */
export interface Forge {
  readonly kind: ForgeKind;
  /** The forge's name in messages: `GitHub refused to open the pull request (HTTP 422)`. */
  readonly displayName: string;
  /** The roles that may push, as a refusal names them (`write, maintain or admin`). */
  readonly pushRoles: string;
  readonly webhooks: ForgeWebhooks;
  /** The user name git sends with `gitPassword` (default `x-access-token`; GitLab: `oauth2`). */
  readonly gitUser?: string;
  /** What the credential may do on `owner/name`, asked of the forge. */
  reach(owner: string, name: string): Promise<RepositoryReach>;
  /**
   * The password git sends to the connection's git host for `owner/name` (undefined: none configured); `readOnly` asks
   * for one that can only read where the forge can mint one.
   */
  gitPassword(owner: string, name: string, opts?: { readOnly?: boolean }): Promise<string | undefined>;
  /** The API of one repository; `retryWindow`: until when a rate-limited call may be waited out (an activity's deadline). */
  repository(owner: string, name: string, retryWindow?: () => number): Promise<ForgeRepository>;
  /** Makes sure the repository sends its events to docent's webhook; false where the credential may not (the operator sets it by hand). */
  registerWebhook(owner: string, name: string, hook: WebhookRegistration): Promise<boolean>;
}
