/**
 * The trigger headers of a start: the CLI says it started the batch, and in CI which job did,
 * so the viewer links a batch back to its pipeline. From each CI's documented variables.
 */
export function triggerHeaders(env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = { 'assay-trigger-source': 'cli' };
  const url = ciJobUrl(env);
  if (url) headers['assay-trigger-url'] = url;
  return headers;
}

function ciJobUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID) {
    return `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`;
  }
  return env.CI_JOB_URL ?? env.BUILDKITE_BUILD_URL ?? env.CIRCLE_BUILD_URL ?? env.BUILD_URL ?? undefined;
}
