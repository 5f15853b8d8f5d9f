import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Named places where a crash test can hold a server, to kill or freeze it at an exact step of a
 * multi-stream write (a start between its slot and its batch, say). Off unless
 * ASSAY_TEST_PAUSE_AT names a point and ASSAY_TEST_PAUSE_DIR a directory: reaching that point,
 * the server writes `<dir>/<point>.paused` and waits until `<dir>/<point>.resume` exists. A
 * process-wide setting read once, for the tests' child servers; no production set-up sets it.
 */
const settings = readSettings();

function readSettings(): { point: string; directory: string } | null {
  const point = process.env.ASSAY_TEST_PAUSE_AT;
  const directory = process.env.ASSAY_TEST_PAUSE_DIR;
  if (!point || !directory) return null;
  return { point, directory };
}

/** Waits at `point` when a test asked for it; answers at once otherwise. */
export async function pausePoint(point: string): Promise<void> {
  if (settings?.point !== point) return;
  const marker = path.join(settings.directory, point);
  fs.writeFileSync(`${marker}.paused`, String(process.pid));
  while (!fs.existsSync(`${marker}.resume`)) await new Promise((resolve) => setTimeout(resolve, 20));
}
