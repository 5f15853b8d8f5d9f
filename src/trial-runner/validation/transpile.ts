import { transform } from 'esbuild';

/**
 * A case's module (TypeScript or JavaScript, bundled by its author) as CommonJS for Node: the
 * types are dropped, nothing is resolved or bundled here. Answers why it cannot be compiled in one
 * line (the first error, with its position) when it cannot.
 */
export async function transpileModule(source: string): Promise<{ code: string } | { failure: string }> {
  try {
    const result = await transform(source, { loader: 'ts', format: 'cjs', platform: 'node', target: 'node20', sourcefile: 'module.ts' });
    return { code: result.code };
  } catch (error) {
    const first = (error as { errors?: Array<{ text: string; location: { line: number; column: number } | null }> }).errors?.[0];
    if (first === undefined) return { failure: `does not compile: ${(error as Error).message}` };
    const where = first.location === null ? '' : ` (line ${first.location.line}, column ${first.location.column + 1})`;
    return { failure: `does not compile: ${first.text}${where}` };
  }
}
