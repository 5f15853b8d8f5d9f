import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command, CommanderError } from 'commander';
import { Refusal } from '../errors';
import { starterFiles, SUITE_PATH, WORKFLOW_PATH } from './starter-files';

/** A command line `assay init` cannot take: exit 64, the message and where to read the options. */
export class InitUsage extends Error {}

interface InitFlags {
  package?: string;
}

/**
 * `assay init [--package SPEC]`: writes a starting point into the current directory (a suite,
 * its validator, a GitHub Actions workflow). A file that is already there is never overwritten:
 * init names every such file and writes nothing (exit 1).
 */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description(`Write ${SUITE_PATH} (two cases), its validator in evals/checks/ and ${WORKFLOW_PATH} into this directory; nothing is overwritten.`)
    .option(
      '--package <spec>',
      'where the workflow installs Assay from (a git URL, a tarball URL, a package name); default: the repository variable ASSAY_PACKAGE',
    )
    .configureOutput({ outputError: () => undefined })
    .exitOverride((error: CommanderError) => {
      if (error.exitCode === 0) process.exit(0);
      throw new InitUsage(error.message.replace(/^error: /, ''));
    })
    .action((flags: InitFlags) => {
      if (flags.package !== undefined && flags.package.trim() === '') throw new InitUsage('--package needs a value.');
      writeStarter(process.cwd(), flags.package);
    });
}

function writeStarter(directory: string, packageSpec: string | undefined): void {
  const files = starterFiles({ packageSpec });
  const present = files.filter((file) => fs.existsSync(path.join(directory, file.path)));
  if (present.length > 0) {
    const names = present.map((file) => file.path).join(', ');
    throw new Refusal(
      `assay init: ${names} already ${present.length === 1 ? 'exists' : 'exist'}; nothing was written. Move ${present.length === 1 ? 'it' : 'them'} away and run it again.`,
    );
  }
  for (const file of files) {
    const target = path.join(directory, file.path);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    // `wx`: a file that appeared since the check above is still not overwritten.
    fs.writeFileSync(target, file.content, { flag: 'wx' });
    process.stdout.write(`wrote ${file.path}\n`);
  }
  process.stdout.write(nextSteps(packageSpec));
}

function nextSteps(packageSpec: string | undefined): string {
  const install =
    packageSpec === undefined
      ? `Before it runs, set the repository variable ASSAY_PACKAGE to where npm installs Assay from\n(a git URL such as git+https://github.com/your-org/assay.git#v0.1.0, or a tarball's URL).\n`
      : `It installs Assay from ${packageSpec}.\n`;
  return `
Run the suite on this machine (its results go to an Assay server: ASSAY_URL, ASSAY_API_KEY):
  assay eval --local ${SUITE_PATH}
In GitHub Actions, ${WORKFLOW_PATH} starts a server of its own on the runner and runs it there.
${install}`;
}
