// The settings that say where the local stack is and how to reach it (infra/stack.sh env, plus the install folder
// holding the embedding model) and what the run shares (test/support/global-setup.js: the workflow bundle, the
// embedding cache, the run's Temporal server): the only part of the developer's environment a test config or spawned
// process keeps.
export const stackSettingNames = [
  'DOCENT_MONGO_URL',
  'DOCENT_ES_URL',
  'DOCENT_ES_USERNAME',
  'DOCENT_ES_PASSWORD',
  'DOCENT_CACHE',
  'DOCENT_EMBEDDING_CACHE_DIR',
  'DOCENT_WORKFLOW_BUNDLE',
  'DOCENT_TEMPORAL_ADDRESS',
];

/** The stack settings present in this process's environment (test/support/stack-env.js put them there). */
export function stackSettings(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of stackSettingNames) {
    const value = process.env[name];
    if (value) out[name] = value;
  }
  return out;
}
