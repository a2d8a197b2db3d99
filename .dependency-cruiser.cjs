// Import rules that `npm run lint` enforces (issue 25; docs/decisions/2026-11-24-job-ledger-and-import-rules.md). dependency-cruiser reads the
// sources with swc: TypeScript 7 has no compiler API for it, and swc tells type-only imports from value imports.
/** The edge: the HTTP and Connect surface (the console's session and page too), composed by the entry points and nothing below them. */
const edge = '^src/(rest|rpc|edge|console)/';
const entryPoints = '^src/(server|main|playground|widget|own-docs|favicon)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circles, counting value imports only: a type-only import is erased and cannot run in a circle.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'workflow-imports',
      comment: 'Workflow code runs in the deterministic sandbox: it imports workflow files (its contract) and @temporalio/workflow only.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { dependencyTypesNot: ['type-only'], pathNot: '^workflows/|node_modules/@temporalio/workflow/' },
    },
    {
      name: 'workflow-type-imports',
      comment: 'Of anything else, workflow code imports activity types only.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { dependencyTypes: ['type-only'], pathNot: '^(workflows|activities)/|node_modules/@temporalio/' },
    },
    {
      name: 'activities-not-edge',
      comment: 'Activities run in the worker: they never import the gateway surface (src/rest, src/rpc, src/edge).',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: edge },
    },
    {
      name: 'activities-use-jobs',
      comment: "Activities reach job state through the shared job domain (src/jobs), never through the gateway's src/agent.",
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^src/agent/' },
    },
    {
      name: 'gateway-admits-only',
      comment:
        "The gateway admits and delivers; once a turn is admitted the workflow side alone records it. Its folders reach job state through src/jobs/admission.ts, never the ledger class or the turn's record (docs/decisions/2026-11-26-workflow-records-turn-decisions.md).",
      severity: 'error',
      from: { path: '^src/(rest|rpc|agent|github|gaps)/' },
      to: { path: '^src/jobs/(ledger|turn-record)\\.ts$' },
    },
    {
      name: 'nothing-into-cli',
      comment: 'The CLI is an entry point: what it shares with the gateway (the operator operations) lives below it, in src/admin.',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'nothing-into-edge',
      comment: 'Nothing imports upward into the edge: only the edge itself and the entry points that compose it.',
      severity: 'error',
      from: { pathNot: `${edge}|${entryPoints}` },
      to: { path: edge },
    },
    {
      name: 'forge-credentials-in-forges',
      comment:
        'One place decides whether a tenant may name a repository (src/forges/repository-gate.ts): only src/forges/ builds forge credentials, every other module takes them from a connection (docs/decisions/2026-12-01-forge-connections.md).',
      severity: 'error',
      from: { pathNot: '^src/(forges/|github/credentials\\.ts$)' },
      to: { path: '^src/github/credentials\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'forge-clients-in-forge-modules',
      comment: "A forge's API client is made by its credentials module (and the connection check) alone, never beside the gate.",
      severity: 'error',
      from: { pathNot: '^src/(github/credentials|forges/connection-check)\\.ts$' },
      to: { path: '(^|node_modules/)@octokit/(rest|core|auth-app|plugin-throttling)(/|$)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'clones-through-git-access',
      comment: 'git runs only as src/git/access.ts builds it: hardened, with the credential of the connection a repository resolved through.',
      severity: 'error',
      from: { pathNot: '^src/git/access\\.ts$' },
      to: { path: 'node_modules/simple-git/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // ESM-only packages (@octokit/rest) resolve through their `import` condition, so a type-only import of one is seen as such.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    exclude: { path: '^(src/gen|dist)/' },
  },
};
