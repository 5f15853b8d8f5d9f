import * as fs from 'node:fs';
import * as path from 'node:path';

/** Every request DTO class of the service, loaded so that their decorators have registered. */
export function loadServiceDtos(): Array<new () => object> {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const file = path.join(dir, entry.name);
      return entry.isDirectory() ? walk(file) : entry.name.endsWith('.dto.ts') ? [file] : [];
    });
  return walk(path.resolve(__dirname, '../../src')).flatMap((file) =>
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loads every DTO file found on disk, synchronously, for the decorators to register
    Object.values(require(file) as Record<string, unknown>).filter(
      (value): value is new () => object => typeof value === 'function' && /Dto$/.test(value.name),
    ),
  );
}
