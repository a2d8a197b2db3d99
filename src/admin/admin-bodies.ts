import { z } from 'zod';
import { forgeKinds } from '../forges/forge-connection';
import { WEBHOOK_EVENTS } from '../webhooks/store';

// The bodies of the operator API's operations, checked alike whether they come as REST JSON or as Connect messages.

const id = z.string().min(1).max(64);
export const createOrgBody = z.strictObject({ id });
export const createProjectBody = z.strictObject({
  id,
  orgId: id,
  repository: z.string().min(1).max(2000),
  ref: z.string().min(1).max(200),
  domain: z.string().min(1).max(253),
  allowedOrigins: z.array(z.string().max(2000)).max(50).optional(),
});
const commands = z.array(z.string().max(4096)).max(20);
export const projectSettingsBody = z.strictObject({
  setup: commands.optional(),
  check: commands.optional(),
  clearChecks: z.boolean().optional(),
  network: z.boolean().optional(),
  allowHosts: z.array(z.string().max(253)).max(100).optional(),
  secretsToChecks: z.boolean().optional(),
  secretsForAgentCode: z.boolean().optional(),
  cacheKeys: z.array(z.string().max(500)).max(20).optional(),
  maintenance: commands.optional(),
  caps: z.strictObject({ maxTurnTokens: z.number().nonnegative().optional(), maxTurnMinutes: z.number().nonnegative().optional(), maxJobCostUsd: z.number().nonnegative().optional() }).optional(),
  /** The project's share of the agent workers when projects queue jobs at once (src/jobs/fairness.ts); 1 is the default. */
  fairnessWeight: z.number().optional(),
  /** Replaces the project's allowed origins (scheme://host[:port]); an empty list allows none. */
  allowedOrigins: z.array(z.string().max(300)).max(100).optional(),
  /** Operator keys only: another repository (resolved through the organization's forge connections), base ref or documentation domain. */
  repository: z.string().min(1).max(2000).optional(),
  ref: z.string().min(1).max(200).optional(),
  domain: z.string().min(1).max(253).optional(),
});
export const createKeyBody = z.strictObject({
  kind: z.enum(['admin', 'assistant']),
  groups: z.array(z.string().max(100)).max(20).optional(),
  /** After it, the key is refused with 401. */
  expiresAt: z.iso.datetime({ offset: true }).optional(),
  /** Addresses and networks (CIDR) the key may be used from; others get 403. */
  allowedIps: z.array(z.string().max(64)).max(50).optional(),
  /** Admin keys: read may only read; write (the default) may do everything. */
  scope: z.enum(['read', 'write']).optional(),
});
export const createWebhookBody = z.strictObject({ url: z.string().max(2000), events: z.array(z.enum(WEBHOOK_EVENTS)).max(WEBHOOK_EVENTS.length).optional() });
export const secretBody = z.strictObject({
  name: z.string().min(1).max(100),
  value: z
    .string()
    .min(1)
    .max(64 * 1024),
});

export const followBody = z.strictObject({
  repository: z.string().min(1).max(2000).optional(),
  ref: z.string().min(1).max(200).optional(),
  docsPath: z.string().max(500).optional(),
  baseUrl: z.string().max(2000).optional(),
  sitemap: z.string().max(2000).optional(),
  every: z.string().max(10).optional(),
  firstNow: z.boolean().optional(),
});

/** A forge connection of an organization: a token, or an installation of the deployment's GitHub App (exactly one; src/admin/forge-operations.ts checks). */
export const addForgeBody = z.strictObject({
  kind: z.enum(forgeKinds),
  /** The forge's one address (Gitea: its API is `{baseUrl}/api/v1`, its repositories `{baseUrl}/owner/name.git`). */
  baseUrl: z.string().min(1).max(2000).optional(),
  apiUrl: z.string().min(1).max(2000).optional(),
  gitUrl: z.string().min(1).max(2000).optional(),
  // Never echoed: a refusal names the field and the rule only.
  token: z
    .string()
    .regex(/^[\x21-\x7e]{1,1000}$/, 'must be the token as the forge gave it (1-1000 printable characters, no spaces)')
    .optional(),
  appInstallationId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
});
