import type { Suite } from './support/suite';
import { installPromptfoo } from './support/promptfoo';
import { median, Row } from './support/table';
import { AT_ONCE, SLEEP, TRIALS, TRIVIAL, waveFloorMs } from './support/workloads';
import { measurableDrivers, measureAssay, measureFloor } from './throughput.bench';

const ROUNDS = 3;

/**
 * The throughput workloads through a peer (promptfoo's `exec:` provider: one process per test, no
 * sandbox), through Assay with each sandbox, and bare, in one run and one table. Every row's
 * baseline is the floor its processes can reach: bare `sh` for promptfoo and the process
 * sandbox, bare bubblewrap for the bubblewrap sandbox, waves of 1 s for the sleep.
 */
export const peersSuite: Suite = {
  name: 'peers',
  explicit: true,
  description: `${TRIALS} trials (tests) at ${AT_ONCE} at once through promptfoo's exec: provider, Assay with each sandbox, and bare processes; median of ${ROUNDS}. promptfoo is installed for the run into a temporary directory and removed after.`,
  async run(progress) {
    progress.log('installing promptfoo into a temporary directory (npm install)');
    const { promptfoo, reason } = await installPromptfoo();
    if (!promptfoo) progress.log(`promptfoo could not be installed (${reason}): Assay is measured against the floor alone`);
    const rows: Row[] = [];
    const withBubblewrap = (await measurableDrivers(progress)).includes('bubblewrap');
    try {
      for (const workload of [TRIVIAL, SLEEP]) {
        const trivial = workload === TRIVIAL;
        const shFloor = trivial ? await measureFloor(progress, 'process', workload) : waveFloorMs(TRIALS);
        const bwrapFloor = trivial && withBubblewrap ? await measureFloor(progress, 'bubblewrap', workload) : waveFloorMs(TRIALS);
        const floorName = trivial ? `${TRIALS * 2} bare runs` : 'waves of 1 s';
        const row = (who: string, value: number, baseline: number, floor: string): Row => ({
          benchmark: `${workload.name}: ${who}`,
          measure: `wall ms (floor: ${floor})`,
          value,
          baseline,
        });
        rows.push(row('bare sh (the floor)', shFloor, shFloor, floorName));
        if (trivial && withBubblewrap) rows.push(row('bare bubblewrap (the floor)', bwrapFloor, bwrapFloor, floorName));
        if (promptfoo) {
          const startUps: number[] = [];
          const walls: number[] = [];
          for (let round = 0; round < ROUNDS; round += 1) {
            walls.push(await promptfoo.evaluate(workload, TRIALS));
            // Its start-up: one trivial test (the eval of one write and one grep is ~its start alone).
            startUps.push(await promptfoo.evaluate(TRIVIAL, 1));
            progress.log(`promptfoo, ${workload.name}: ${walls[round].toFixed(0)} ms (1 test: ${startUps[round].toFixed(0)} ms)`);
          }
          const wall = median(walls);
          const startUp = median(startUps);
          rows.push(row(`promptfoo ${promptfoo.version} exec:`, wall, shFloor, `${floorName}, bare sh`));
          rows.push(
            row(`promptfoo ${promptfoo.version} exec:, less its start-up (${startUp.toFixed(0)} ms)`, wall - startUp, shFloor, `${floorName}, bare sh`),
          );
        }
        if (withBubblewrap) {
          const bubblewrap = await measureAssay(progress, 'bubblewrap', workload, { rounds: ROUNDS });
          rows.push(row('Assay, bubblewrap sandbox', bubblewrap.wallMs, bwrapFloor, `${floorName}, bare bubblewrap`));
        }
        const plain = await measureAssay(progress, 'process', workload, { rounds: ROUNDS });
        rows.push(row('Assay, process sandbox', plain.wallMs, shFloor, `${floorName}, bare sh`));
      }
    } finally {
      promptfoo?.remove();
    }
    return rows;
  },
};
