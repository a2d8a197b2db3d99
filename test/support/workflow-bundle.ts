/**
 * Where a replaying worker finds the workflow code: the bundle test/support/global-setup.js built once for this run
 * (stack-env.js passes it on as DOCENT_WORKFLOW_BUNDLE), or the source when a file runs outside that setup.
 */
export function replayWorkflows(): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  const codePath = process.env.DOCENT_WORKFLOW_BUNDLE;
  return codePath ? { workflowBundle: { codePath } } : { workflowsPath: require.resolve('../../workflows') };
}
