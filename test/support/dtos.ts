import * as fs from 'node:fs';
import * as path from 'node:path';

/** Every request DTO class of the service, loaded so that their decorators have registered. */
export function loadServiceDtos(): Function[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const file = path.join(dir, entry.name);
      return entry.isDirectory() ? walk(file) : entry.name.endsWith('.dto.ts') ? [file] : [];
    });
  return walk(path.resolve(__dirname, '../../src')).flatMap((file) =>
    Object.values(require(file) as Record<string, unknown>).filter((value): value is Function => typeof value === 'function' && /Dto$/.test(value.name)),
  );
}
