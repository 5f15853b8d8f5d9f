/**
 * What `assay init` writes: a suite of two cases (one judged by `verify`, one by a validator
 * loaded from a file) whose stand-in agent passes both, and a GitHub Actions workflow that runs
 * it on the runner itself. Paths are relative to the directory init runs in.
 */
export interface StarterFile {
  path: string;
  content: string;
}

export const SUITE_PATH = 'evals/suite.yaml';
export const VALIDATOR_PATH = 'evals/checks/said-bye.mjs';
export const WORKFLOW_PATH = '.github/workflows/assay.yml';

const SUITE = `# An Assay suite: the body of evals.batches.start in YAML, plus a name. Each case runs in a
# workspace of its own, once per trial and variant; "assay eval --local evals/suite.yaml" runs it
# on this machine. The guide's "Your first eval" and "The command line" pages describe every key.
name: starter
suite:
  id: starter
  prompt: "Write {{word}} into out.txt"
cases:
  - id: say-hello
    variables: { word: hello }
    verify: grep -q hello out.txt          # a shell command in the workspace: exit 0 passes
  - id: say-bye
    variables: { word: bye }
    validator:                             # code that judges the trial, bundled from a file
      name: saidBye                        # the function the file exports
      sourceFile: ./checks/said-bye.mjs
variants:
  # The agent under test. This one is a shell command standing in for a real agent (it writes the
  # word the prompt asks for): put yours here, a built-in driver such as claude-code or a command
  # line of your own (the guide's "Harnesses and sandboxes" and "Agent drivers" pages).
  - harness: command
    model: none
    profile:
      run: 'echo "$ASSAY_PROMPT" | sed "s/Write //; s/ into out.txt//" > out.txt'
trials: 3
`;

const VALIDATOR = `// A code validator: "assay eval" bundles this file (with what it imports) and runs the function
// the suite names in the trial's workspace after the agent's turn. It answers true, false, or
// {passed, score?, message?, metadata?} (the guide's "Judging trials" page).

/** @param {import('assay/validator').ValidatorContext} ctx */
export function saidBye(ctx) {
  if (!ctx.workspace.listFiles().includes('out.txt')) return { passed: false, message: 'the agent wrote no out.txt' };
  const text = ctx.workspace.readFile('out.txt').trim();
  return { passed: text === 'bye', message: \`out.txt holds "\${text}"\` };
}
`;

/**
 * The workflow. Nothing in its steps' shell is a GitHub expression, so a test can run those steps
 * with bash as the runner does; the package to install is the one expression, unless given.
 */
function workflow(packageSpec: string | undefined): string {
  const source = packageSpec === undefined ? '${{ vars.ASSAY_PACKAGE }}' : JSON.stringify(packageSpec);
  return `# Runs the Assay suite in evals/ on GitHub's runner itself: the job starts a throwaway Assay server
# on the runner, runs the trials there with "assay eval --local", and uploads the JUnit and JSON
# results. It fails when a case fails (--fail-on in the guide's "The command line" page).
name: assay
on:
  pull_request:
  push:
    branches: [main]
  workflow_dispatch:
jobs:
  eval:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    env:
      # Where npm installs Assay from: a git URL (npm builds it), a tarball's URL, or a package
      # name. Unless "assay init --package" wrote it here, set the repository variable ASSAY_PACKAGE.
      ASSAY_PACKAGE: ${source}
      ASSAY_URL: http://127.0.0.1:8080
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - name: Install Assay
        run: |
          if [ -z "$ASSAY_PACKAGE" ]; then
            echo "::error::Set the repository variable ASSAY_PACKAGE to where npm installs Assay from, e.g. git+https://github.com/your-org/assay.git#v0.1.0"
            exit 1
          fi
          # Packed first: npm pack builds a git URL's package, which npm install -g from git cannot (npm/cli#8440).
          tarball="$(npm pack --pack-destination "$RUNNER_TEMP" "$ASSAY_PACKAGE" | tail -n 1)"
          npm install -g --no-audit --no-fund "$RUNNER_TEMP/$tarball"
          assay --version
      - name: Start Assay on the runner
        run: |
          key="assay_$(node -p "require('crypto').randomBytes(24).toString('hex')")"
          echo "::add-mask::$key"
          echo "ASSAY_API_KEY=$key" >> "$GITHUB_ENV"
          ASSAY_INIT_ORG=ci ASSAY_INIT_API_KEY="$key" ASSAY_DATA_DIR="$RUNNER_TEMP/assay-data" HOST=127.0.0.1 PORT="\${ASSAY_URL##*:}" \\
            nohup assay serve > "$RUNNER_TEMP/assay-serve.log" 2>&1 &
          for _ in $(seq 1 60); do curl -sf "$ASSAY_URL/health" > /dev/null && exit 0; sleep 1; done
          cat "$RUNNER_TEMP/assay-serve.log"
          exit 1
      - name: Run the suite
        run: |
          # Trials run as plain processes where bubblewrap does not work: the runner is this job's alone.
          printf 'allowUnsandboxed: true\\n' > "$RUNNER_TEMP/assay-config.yaml"
          ASSAY_CONFIG="$RUNNER_TEMP/assay-config.yaml" assay eval --local evals/suite.yaml --no-progress --junit assay-junit.xml --json assay-results.json
      - name: Upload the results
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: assay-results
          path: |
            assay-junit.xml
            assay-results.json
          if-no-files-found: ignore
`;
}

/** The files init writes, in the order it writes them. */
export function starterFiles(options: { packageSpec?: string }): StarterFile[] {
  return [
    { path: SUITE_PATH, content: SUITE },
    { path: VALIDATOR_PATH, content: VALIDATOR },
    { path: WORKFLOW_PATH, content: workflow(options.packageSpec) },
  ];
}
