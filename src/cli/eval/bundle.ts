import { buildSync } from 'esbuild';
import * as path from 'node:path';

/**
 * A validator's or prepare's module as the server runs it: one CommonJS file for Node 20 with
 * its imports inlined, so a check can be written in TypeScript next to the suite and use the
 * packages of the user's project.
 */
export function bundleSource(file: string): string {
  const result = buildSync({
    entryPoints: [file],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    logLevel: 'silent',
    absWorkingDir: path.dirname(file),
  });
  return result.outputFiles[0].text;
}

/** esbuild's failure in one line: the first error with its place. */
export function bundleFailure(error: unknown): string {
  const errors = (error as { errors?: Array<{ text: string; location: { file: string; line: number } | null }> }).errors;
  const first = errors?.[0];
  if (!first) return (error as Error).message;
  return first.location ? `${first.location.file}:${first.location.line}: ${first.text}` : first.text;
}
