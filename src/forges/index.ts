// Builds the forge parts from one database and config, alike for the gateway, the worker and the CLI.
import type { Db } from 'mongodb';
import type { Config } from '../config';
import { SecretBox } from '../crypto/secret-box';
import type { Logger } from '../log';
import { ForgeRegistry } from './forge-registry';
import { ForgeStore } from './forge-store';
import { RepositoryGate } from './repository-gate';

export function createForges(
  db: Db,
  config: Pick<Config, 'github' | 'secretKey' | 'allowPrivateNetworks'> & Partial<Pick<Config, 'publicUrl' | 'api'>>,
  log?: Logger,
): { store: ForgeStore; registry: ForgeRegistry; gate: RepositoryGate } {
  const store = new ForgeStore(db, config.secretKey ? new SecretBox(config.secretKey) : undefined);
  const registry = new ForgeRegistry(store, config.github, log, config.publicUrl ?? config.api?.url);
  return { store, registry, gate: new RepositoryGate(registry, config.allowPrivateNetworks) };
}
