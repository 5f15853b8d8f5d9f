import type { Progress, Suite } from './support/suite';
import { InspectAi, installInspect } from './support/inspect-ai';
import { installPromptfoo, Promptfoo } from './support/promptfoo';
import { median, Row } from './support/table';
import { AT_ONCE, SLEEP, TRIALS, TRIVIAL, waveFloorMs, Workload } from './support/workloads';
import { measurableDrivers, measureAssay, measureFloor } from './throughput.bench';

const ROUNDS = 3;

/** A row of the workload's: `who` against the floor its processes can reach. */
type RowOf = (who: string, value: number, baseline: number, floor: string) => Row;

/**
 * The median wall of ROUNDS runs of the workload through a peer, and of its start-up: one trivial
 * test (the eval of one write and one grep is ~its start alone), run after each.
 */
async function peerWalls(progress: Progress, label: string, evaluate: (workload: Workload, tests: number) => Promise<number>, workload: Workload) {
  const walls: number[] = [];
  const startUps: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    walls.push(await evaluate(workload, TRIALS));
    startUps.push(await evaluate(TRIVIAL, 1));
    progress.log(`${label}, ${workload.name}: ${walls[round].toFixed(0)} ms (1 test: ${startUps[round].toFixed(0)} ms)`);
  }
  return { wall: median(walls), startUp: median(startUps) };
}

async function promptfooRows(progress: Progress, promptfoo: Promptfoo, workload: Workload, row: RowOf, floor: number, floorName: string): Promise<Row[]> {
  const { wall, startUp } = await peerWalls(progress, 'promptfoo', (load, tests) => promptfoo.evaluate(load, tests), workload);
  const name = `promptfoo ${promptfoo.version} exec:`;
  return [
    row(name, wall, floor, `${floorName}, bare sh`),
    row(`${name}, less its start-up (${startUp.toFixed(0)} ms)`, wall - startUp, floor, `${floorName}, bare sh`),
  ];
}

/** Inspect with its subprocess helper (and less its start-up), then with its local sandbox. */
async function inspectRows(progress: Progress, inspect: InspectAi, workload: Workload, row: RowOf, floor: number, floorName: string): Promise<Row[]> {
  const { wall, startUp } = await peerWalls(progress, 'Inspect, subprocess', (load, samples) => inspect.evaluate(load, samples, 'subprocess'), workload);
  const local: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    local.push(await inspect.evaluate(workload, TRIALS, 'local'));
    progress.log(`Inspect, local sandbox, ${workload.name}: ${local[round].toFixed(0)} ms`);
  }
  const name = `Inspect ${inspect.version}`;
  return [
    row(`${name}, subprocess`, wall, floor, `${floorName}, bare sh`),
    row(`${name}, subprocess, less its start-up (${startUp.toFixed(0)} ms)`, wall - startUp, floor, `${floorName}, bare sh`),
    row(`${name}, local sandbox`, median(local), floor, `${floorName}, bare sh`),
  ];
}

/**
 * The throughput workloads through two peers (promptfoo's `exec:` provider, one process per test;
 * Inspect AI, one sample per trial whose solver runs the command and whose scorer runs the
 * verify; neither sandboxes), through Assay with each sandbox, and bare, in one run and one table.
 * Every row's baseline is the floor its processes can reach: bare `sh` for the peers and the
 * process sandbox, bare bubblewrap for the bubblewrap sandbox, waves of 1 s for the sleep.
 */
export const peersSuite: Suite = {
  name: 'peers',
  explicit: true,
  description: `${TRIALS} trials (tests, samples) at ${AT_ONCE} at once through promptfoo's exec: provider, Inspect AI (mockllm/model; its subprocess helper, or its local sandbox), Assay with each sandbox, and bare processes; median of ${ROUNDS}. promptfoo is installed for the run with npm, Inspect with pip into a virtual environment, each in a temporary directory removed after.`,
  async run(progress) {
    progress.log('installing promptfoo into a temporary directory (npm install)');
    const { promptfoo, reason } = await installPromptfoo();
    if (!promptfoo) progress.log(`promptfoo could not be installed (${reason}): its rows are left out`);
    progress.log('installing Inspect AI into a temporary virtual environment (pip install)');
    const installedInspect = await installInspect();
    const { inspect } = installedInspect;
    if (!inspect) progress.log(`Inspect AI could not be installed (${installedInspect.reason}): its rows are left out`);
    const rows: Row[] = [];
    const withBubblewrap = (await measurableDrivers(progress)).includes('bubblewrap');
    try {
      for (const workload of [TRIVIAL, SLEEP]) {
        const trivial = workload === TRIVIAL;
        const shFloor = trivial ? await measureFloor(progress, 'process', workload) : waveFloorMs(TRIALS);
        const bwrapFloor = trivial && withBubblewrap ? await measureFloor(progress, 'bubblewrap', workload) : waveFloorMs(TRIALS);
        const floorName = trivial ? `${TRIALS * 2} bare runs` : 'waves of 1 s';
        const row: RowOf = (who, value, baseline, floor) => ({ benchmark: `${workload.name}: ${who}`, measure: `wall ms (floor: ${floor})`, value, baseline });
        rows.push(row('bare sh (the floor)', shFloor, shFloor, floorName));
        if (trivial && withBubblewrap) rows.push(row('bare bubblewrap (the floor)', bwrapFloor, bwrapFloor, floorName));
        if (promptfoo) rows.push(...(await promptfooRows(progress, promptfoo, workload, row, shFloor, floorName)));
        if (inspect) rows.push(...(await inspectRows(progress, inspect, workload, row, shFloor, floorName)));
        if (withBubblewrap) {
          const bubblewrap = await measureAssay(progress, 'bubblewrap', workload, { rounds: ROUNDS });
          rows.push(row('Assay, bubblewrap sandbox', bubblewrap.wallMs, bwrapFloor, `${floorName}, bare bubblewrap`));
        }
        const plain = await measureAssay(progress, 'process', workload, { rounds: ROUNDS });
        rows.push(row('Assay, process sandbox', plain.wallMs, shFloor, `${floorName}, bare sh`));
      }
    } finally {
      promptfoo?.remove();
      inspect?.remove();
    }
    return rows;
  },
};
