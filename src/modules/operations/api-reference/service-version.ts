import * as fs from 'node:fs';
import * as path from 'node:path';

let version: string | null = null;

/** The package's version, from the package.json four levels up (the same from src/ and dist/). */
export function serviceVersion(): string {
  if (version === null) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version?: string };
      version = manifest.version ?? '0.0.0';
    } catch {
      version = '0.0.0';
    }
  }
  return version;
}
