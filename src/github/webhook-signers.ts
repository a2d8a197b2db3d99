import { repositoryKey } from './deliveries';
import { unverifiedRepository } from './payloads';
import { signatureMatches, type ProjectWebhookSecrets } from './webhook-secrets';

/** Whose secret signed a delivery: a project's own (token mode), or DOCENT_GITHUB_WEBHOOK_SECRET. */
export type Signer = { verifiedFor: string } | { global: true };

/** In token mode the one global secret may still sign these: a push only starts a sync of what git holds, a ping does nothing. */
const globalSecretEvents: ReadonlySet<string> = new Set(['push', 'ping']);

/**
 * Which secret verifies a delivery. App mode: the App's (DOCENT_GITHUB_WEBHOOK_SECRET). Token mode: the own secrets of
 * the projects on the repository the body names (only `repository.full_name` is read before one matched), and the
 * global secret for push and ping only.
 */
export class DeliverySigners {
  /** Whether any delivery can be verified: else the route is off (404). */
  readonly on: boolean;

  constructor(
    private readonly mode: 'app' | 'token',
    private readonly globalSecret: string | undefined,
    private readonly projectSecrets: ProjectWebhookSecrets,
    hasSecretKey: boolean,
  ) {
    this.on = globalSecret !== undefined || (mode === 'token' && hasSecretKey);
  }

  /** Whether the global secret is set where it verifies only push and ping (the operator is warned at start). */
  get globalLimited(): boolean {
    return this.mode === 'token' && this.globalSecret !== undefined;
  }

  async signer(body: string, signature: string): Promise<Signer | null> {
    if (this.mode === 'token') {
      let named: unknown;
      try {
        named = JSON.parse(body);
      } catch {
        named = undefined;
      }
      const about = unverifiedRepository.safeParse(named);
      if (about.success) {
        const [owner, repo] = about.data.repository.full_name.split('/') as [string, string];
        const by = await this.projectSecrets.verify(repositoryKey(owner, repo), body, signature);
        if (by) return { verifiedFor: by.projectId };
      }
    }
    return this.globalSecret && (await signatureMatches(this.globalSecret, body, signature)) ? { global: true } : null;
  }

  /** Whether this signer may sign this event: in token mode the global secret cannot steer or archive jobs. */
  allows(signer: Signer, event: string): boolean {
    return !('global' in signer) || this.mode === 'app' || globalSecretEvents.has(event);
  }
}
