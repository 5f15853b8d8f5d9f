import * as fs from 'node:fs';
import { detectDefaultSandbox, SandboxDriverName } from '#trial-runner';
import { BenchServer, CpuSplit, startBenchServer } from './support/child-server';
import { mainThreadParts, monotonicMicros, ProfileWindow, readProfile, summarizeProfiles } from './support/cpu-profile';
import { FloorProcess } from './support/floor-process';
import { mountJournaledExt4 } from './support/journaled-ext4';
import { KernelProfile, KernelShares } from './support/kernel-profile';
import { defaultHelperKind } from '#trial-runner';
import type { StraightMeasure } from './support/straight-trials';
import type { Progress, Suite } from './support/suite';
import { tempDir } from './support/sqlite-log';
import { median, Row } from './support/table';
import { AT_ONCE, assayBatch, BareMeasure, BatchMeasure, SLEEP, TRIALS, TRIVIAL, waveFloorMs, Workload } from './support/workloads';

/** Runs of each measure; the median is reported. */
const ROUNDS = 3;
/**
 * Trivial batches a server runs before it is measured: a running service's steady state, not its
 * start-up. Through the first few hundred trials the server's own CPU falls by a third (4.0 to
 * 2.5 ms a trial on the process sandbox) while V8 compiles the hot path in background threads,
 * whose time counts as the server's; with compilation off (`--no-opt`) it starts flat at ~2.7 ms.
 * The first batch's CPU is reported in its own row.
 */
const WARM_UP_BATCHES = 5;
/**
 * Half of the server's own CPU per trivial trial in this suite's first run, the issue's "today"
 * (bench/results/2026-11-26-throughput.md, issue 20's first run: 11.4 ms with bubblewrap, 10.4 ms
 * with the process sandbox).
 */
const CPU_PER_TRIAL_TARGET_MS = { bubblewrap: 11.4 / 2, process: 10.4 / 2 };

/** BENCH_CPU_PROFILE=<dir>: the child servers write V8 CPU profiles there, summarized after the suite. */
const profileDir = process.env.BENCH_CPU_PROFILE;
/**
 * BENCH_THROUGHPUT_ROWS=trivial: the trivial workload's rows alone, on each file system (this
 * disk, a tmpfs, a journaled ext4), without the profiled servers and the sleep workload: a
 * quarter of the suite's time, for comparing two builds run by turns.
 */
const trivialOnly = process.env.BENCH_THROUGHPUT_ROWS === 'trivial';

export interface AssayMeasures {
  wallMs: number;
  cpuPerTrialMs: number;
  /** The server's CPU per trial in its first batch after start (lazy loading and compilation). */
  firstBatchCpuPerTrialMs: number;
  /** Of the median batch by wall time. */
  perTrial: CpuSplit;
  /** When each measured batch ran, on the clock of the server's CPU profile. */
  windows: ProfileWindow[];
}

export interface AssayOptions {
  rounds?: number;
  /** Where the trial directories go (the default temporary directory otherwise). */
  trialsParent?: string;
  /** Runs just before each measured batch (the floor's batch, side by side). */
  beforeEachRound?: () => Promise<void>;
  /** Where the server writes its CPU profile (BENCH_CPU_PROFILE otherwise, if set). */
  cpuProfileDir?: string;
  /** Told the server's pid before its first measured batch, and awaited after its last. */
  watch?: { start(pid: number): void; stop(): Promise<void> };
}

/** The median of ROUNDS batches of the workload on one server of the driver, after WARM_UP_BATCHES trivial batches. */
export async function measureAssay(progress: Progress, driver: SandboxDriverName, workload: Workload, options: AssayOptions = {}): Promise<AssayMeasures> {
  const { rounds = ROUNDS, trialsParent, beforeEachRound = () => Promise.resolve(), cpuProfileDir = profileDir, watch } = options;
  const server: BenchServer = await startBenchServer({ driver, parallel: AT_ONCE, cpuProfileDir, trialsParent });
  try {
    // The first batches pay for lazy loading (modules, prepared statements, the sandbox probe) and compilation.
    const first = await assayBatch(server, TRIVIAL);
    for (let batch = 1; batch < WARM_UP_BATCHES; batch += 1) await assayBatch(server, TRIVIAL);
    const measures: BatchMeasure[] = [];
    const windows: ProfileWindow[] = [];
    watch?.start(server.pid);
    for (let round = 0; round < rounds; round += 1) {
      await beforeEachRound();
      const fromMicros = monotonicMicros();
      const measure = await assayBatch(server, workload);
      windows.push({ fromMicros, toMicros: monotonicMicros() });
      progress.log(`assay ${driver}, ${workload.name}: ${measure.wallMs.toFixed(0)} ms, server CPU ${measure.serverCpuMs.toFixed(0)} ms`);
      measures.push(measure);
    }
    await watch?.stop();
    return {
      wallMs: median(measures.map((measure) => measure.wallMs)),
      cpuPerTrialMs: median(measures.map((measure) => measure.serverCpuMs / TRIALS)),
      firstBatchCpuPerTrialMs: first.serverCpuMs / TRIALS,
      perTrial: medianBy(measures, (measure) => measure.wallMs).perTrial,
      windows,
    };
  } finally {
    await server.stop();
  }
}

/** WARM_UP_BATCHES trivial straight batches, as a measured server gets: the first ones load and compile the runner and the log. */
async function warmUpStraight(straightProcess: FloorProcess, driver: SandboxDriverName, under?: string): Promise<void> {
  for (let batch = 0; batch < WARM_UP_BATCHES; batch += 1) await straightProcess.straightBatch(driver, TRIVIAL, under);
}

/** The wall of one batch through the trial runner and the event log alone, after the warm-up. */
async function measureStraight(progress: Progress, driver: SandboxDriverName, workload: Workload): Promise<number> {
  return FloorProcess.using(async (straightProcess) => {
    await warmUpStraight(straightProcess, driver);
    const { wallMs } = await straightProcess.straightBatch(driver, workload);
    progress.log(`straight ${driver}, ${workload.name}: ${wallMs.toFixed(0)} ms`);
    return wallMs;
  });
}

/** The median wall of `rounds` bare batches, after one that warms the floor process. */
export async function measureFloor(progress: Progress, driver: SandboxDriverName, workload: Workload, rounds = ROUNDS): Promise<number> {
  return FloorProcess.using(async (floorProcess) => {
    await floorProcess.batch(driver, workload);
    const measures: BareMeasure[] = [];
    for (let round = 0; round < rounds; round += 1) measures.push(await floorBatch(progress, floorProcess, driver, workload));
    return medianFloor(measures).wallMs;
  });
}

async function floorBatch(progress: Progress, floorProcess: FloorProcess, driver: SandboxDriverName, workload: Workload, under?: string): Promise<BareMeasure> {
  const measure = await floorProcess.batch(driver, workload, under);
  progress.log(`bare ${driver}, ${workload.name}: ${measure.wallMs.toFixed(0)} ms`);
  return measure;
}

/** The median wall, and the CPU split of the batch that took it. */
function medianFloor(measures: readonly BareMeasure[]): BareMeasure {
  return { wallMs: median(measures.map((measure) => measure.wallMs)), perTrial: medianBy(measures, (measure) => measure.wallMs).perTrial };
}

function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)];
}

/**
 * Where the CPU of a trial goes, against the bare runs': on a machine with few cores the trivial
 * workload is bound by the CPU of all its processes together, not by the server's thread alone.
 * The baseline is the bare runs spawned from Node, whose CPU is all counted; the spawn helper's
 * own is not, as the floor process does not wait for it.
 */
function cpuRows(benchmark: string, assay: CpuSplit, bare: BareMeasure['perTrial']): Row[] {
  const { serverUser, serverKernel, helpers, trialProcesses } = assay;
  return [
    {
      benchmark,
      measure: 'CPU ms per trial, every process (baseline: the bare runs spawned from Node, spawner and processes)',
      value: serverUser + serverKernel + helpers + trialProcesses,
      baseline: bare.spawner + bare.processes,
    },
    { benchmark, measure: 'CPU ms per trial: server, user', value: serverUser },
    { benchmark, measure: 'CPU ms per trial: server, kernel', value: serverKernel },
    {
      benchmark,
      measure: 'CPU ms per trial: spawn helper and trial processes (baseline: the bare runs spawned from Node, spawner and processes)',
      value: helpers + trialProcesses,
      baseline: bare.spawner + bare.processes,
    },
  ];
}

/** Where the trial directories (and the bare runs' directories) go: the default temporary directory, or a tmpfs. */
interface Directories {
  label: string;
  parent?: string;
}

async function trivialRows(progress: Progress, driver: SandboxDriverName, directories: Directories = { label: '' }): Promise<Row[]> {
  // Side by side: the floors' batches just before each measured batch, so they all see the
  // machine, and the file system, in the same state (on ext4 without a journal each batch's
  // removed inodes slow the next minutes' creations). The first warms the floor process's spawning
  // path. The straight trials (the runner and the log alone, in a process of their own) run
  // beside them too, warmed up as the server is.
  const nodeFloors: BareMeasure[] = [];
  const helperFloors: BareMeasure[] = [];
  const straights: StraightMeasure[] = [];
  const assay = await FloorProcess.using((floorProcess) =>
    FloorProcess.using(async (straightProcess) => {
      await floorProcess.batch(driver, TRIVIAL, directories.parent);
      await floorProcess.helperBatch(driver, TRIVIAL, directories.parent);
      await warmUpStraight(straightProcess, driver, directories.parent);
      return measureAssay(progress, driver, TRIVIAL, {
        trialsParent: directories.parent,
        beforeEachRound: async () => {
          nodeFloors.push(await floorBatch(progress, floorProcess, driver, TRIVIAL, directories.parent));
          const helperFloor = await floorProcess.helperBatch(driver, TRIVIAL, directories.parent);
          progress.log(`bare ${driver} through the spawn helper, ${TRIVIAL.name}: ${helperFloor.wallMs.toFixed(0)} ms`);
          helperFloors.push(helperFloor);
          const straight = await straightProcess.straightBatch(driver, TRIVIAL, directories.parent);
          progress.log(`straight ${driver}, ${TRIVIAL.name}: ${straight.wallMs.toFixed(0)} ms`);
          straights.push(straight);
        },
      });
    }),
  );
  const floors = trivialFloors(medianFloor(nodeFloors), medianFloor(helperFloors));
  const straight = medianBy(straights, (measure) => measure.wallMs);
  const benchmark = `${TRIALS} trials, ${AT_ONCE} at once, ${TRIVIAL.name} (${driver}${directories.label})`;
  return [
    {
      benchmark,
      measure: `wall ms (floor: the faster of ${TRIALS * 2} bare runs spawned from Node or through the spawn helper)`,
      value: assay.wallMs,
      baseline: floors.fastest.wallMs,
      floor: floors.fastestName,
      target: { kind: 'ratio-at-most', ratio: WALL_RATIO_GOAL },
    },
    {
      benchmark,
      measure: 'server CPU ms per trial',
      value: assay.cpuPerTrialMs,
      target: { kind: 'at-most', value: CPU_PER_TRIAL_TARGET_MS[driver], unit: 'ms' },
    },
    { benchmark, measure: 'server CPU ms per trial, first batch after start', value: assay.firstBatchCpuPerTrialMs },
    ...floorRows(benchmark, floors, assay.wallMs),
    ...cpuRows(benchmark, assay.perTrial, floors.node.perTrial),
    {
      benchmark,
      measure: `server CPU ms per trial (baseline: what ${WALL_RATIO_GOAL}x the floor's wall leaves it, estimated)`,
      value: assay.cpuPerTrialMs,
      baseline: serverBudget(assay, floors.fastest.wallMs),
      floor: floors.fastestName,
    },
    ...straightRows(benchmark, straight, floors, assay.wallMs),
  ];
}

/**
 * The two ways measured to run a trivial trial's processes bare, with the isolation Assay gives
 * them: spawned from a small Node process (the first floor), and through the spawn helper
 * the service itself uses (the Python one where python3 runs: vfork, much less CPU a spawn). The
 * verdicts use the faster of the two in the same run: a floor is the fastest way to run the same
 * processes, and Assay's own start of a command must not count in its favour.
 */
interface TrivialFloors {
  node: BareMeasure;
  helper: BareMeasure;
  fastest: BareMeasure;
  fastestName: string;
}

function trivialFloors(node: BareMeasure, helper: BareMeasure): TrivialFloors {
  const helperName = `bare runs through the spawn helper (${defaultHelperKind()})`;
  const nodeName = 'bare runs spawned from Node';
  return helper.wallMs < node.wallMs ? { node, helper, fastest: helper, fastestName: helperName } : { node, helper, fastest: node, fastestName: nodeName };
}

/** Both floors' walls, and Assay against the slower one: what the verdict would read against it. */
function floorRows(benchmark: string, floors: TrivialFloors, assayWallMs: number): Row[] {
  const slower = floors.fastest === floors.helper ? floors.node : floors.helper;
  const slowerName = floors.fastest === floors.helper ? 'bare runs spawned from Node' : `bare runs through the spawn helper (${defaultHelperKind()})`;
  return [
    { benchmark, measure: `wall ms, floor: ${TRIALS * 2} bare runs spawned from Node`, value: floors.node.wallMs },
    {
      benchmark,
      measure: `wall ms, floor: ${TRIALS * 2} bare runs through the spawn helper (${defaultHelperKind()}) (baseline: spawned from Node)`,
      value: floors.helper.wallMs,
      baseline: floors.node.wallMs,
    },
    { benchmark, measure: `wall ms, Assay (baseline: the slower floor, not the verdict's)`, value: assayWallMs, baseline: slower.wallMs, floor: slowerName },
  ];
}

/**
 * The same batches through the trial runner and the event log alone (straight-trials.ts): what a
 * trial's own machinery and its durable events cost, against what the service around them adds
 * (the saga, the read models, HTTP and the watch stream).
 */
function straightRows(benchmark: string, straight: StraightMeasure, floors: TrivialFloors, assayWallMs: number): Row[] {
  const { serverUser, serverKernel } = straight.perTrial;
  return [
    {
      benchmark,
      measure: `wall ms, the trial runner and the event log alone, no service around them (floor: the faster of ${TRIALS * 2} bare runs)`,
      value: straight.wallMs,
      baseline: floors.fastest.wallMs,
      floor: floors.fastestName,
      target: { kind: 'ratio-at-most', ratio: WALL_RATIO_GOAL },
    },
    { benchmark, measure: 'wall ms, Assay (baseline: the trial runner and the event log alone)', value: assayWallMs, baseline: straight.wallMs },
    { benchmark, measure: 'CPU ms per trial: the trial runner and the event log alone, their process', value: serverUser + serverKernel },
    {
      benchmark,
      measure: 'CPU ms per trial: the trial runner and the event log alone, every process (baseline: the bare runs spawned from Node)',
      value: serverUser + serverKernel + straight.perTrial.helpers + straight.perTrial.trialProcesses,
      baseline: floors.node.perTrial.spawner + floors.node.perTrial.processes,
    },
  ];
}

/** The trivial workload's goal: Assay's wall at most this many times the floor's. */
const WALL_RATIO_GOAL = 1.3;

/**
 * The server CPU per trial that would let the batch end within WALL_RATIO_GOAL times the floor's
 * wall, the rest unchanged. On few cores the trivial workload is bound by the CPU of all its
 * processes together (the server's, the spawn helper's, the trials'): the machine gives the
 * batch a steady amount of CPU per wall millisecond, measured here in Assay's own batch; what
 * the goal's wall allows at that rate, less the helper's and the trials' processes' share, is
 * what is left for the server. An estimate: it assumes the rate holds at the shorter wall.
 */
function serverBudget(assay: AssayMeasures, floorWallMs: number): number {
  const { serverUser, serverKernel, helpers, trialProcesses } = assay.perTrial;
  const cpuPerWallMs = ((serverUser + serverKernel + helpers + trialProcesses) * TRIALS) / assay.wallMs;
  return (WALL_RATIO_GOAL * floorWallMs * cpuPerWallMs) / TRIALS - helpers - trialProcesses;
}

/** The kernel's inode allocators (ext4, tmpfs, XFS, Btrfs), and ext4's search past recently freed inodes (without a journal). */
const INODE_ALLOCATORS = ['__ext4_new_inode', 'shmem_get_inode', 'xfs_dialloc', 'btrfs_new_inode'];
const RECENTLY_DELETED = 'recently_deleted';

/**
 * Samples the profiled server's kernel stacks with perf through its measured batches, when asked
 * (the trivial workload's runs) and where perf can: the share of its CPU spent making the
 * trials' directories and files, which the file system under the trials root decides.
 */
function kernelWatch(progress: Progress, wanted: boolean): { start(pid: number): void; stop(): Promise<void>; shares: KernelShares | null } {
  let profile: KernelProfile | null = null;
  const watch = {
    shares: null as KernelShares | null,
    start(pid: number) {
      if (!wanted) return;
      const started = KernelProfile.start(pid);
      if (started instanceof KernelProfile) profile = started;
      else progress.log(`no kernel profile of the server: ${started.unavailable}`);
    },
    async stop() {
      const read = await profile?.stop([...INODE_ALLOCATORS, RECENTLY_DELETED]);
      if (read === undefined) return;
      if ('unavailable' in read) progress.log(`no kernel profile of the server: ${read.unavailable}`);
      else watch.shares = read;
    },
  };
  return watch;
}

/** The server's CPU in making inodes, as a share of its samples and in ms a trial (that share of its CPU). */
function inodeRows(benchmark: string, shares: KernelShares | null, cpuPerTrialMs: number): Row[] {
  if (shares === null) return [];
  const making = INODE_ALLOCATORS.reduce((total, symbol) => total + (shares.sharePercent.get(symbol) ?? 0), 0);
  const searching = shares.sharePercent.get(RECENTLY_DELETED) ?? 0;
  return [
    {
      benchmark,
      measure: 'server CPU ms per trial in the kernel making inodes (perf: the file system under the trials root)',
      value: (making / 100) * cpuPerTrialMs,
    },
    {
      benchmark,
      measure: `server CPU ms per trial in ext4 searching past recently freed inodes (${RECENTLY_DELETED}: ext4 without a journal)`,
      value: (searching / 100) * cpuPerTrialMs,
    },
    { benchmark, measure: 'server CPU share in the kernel making inodes, per cent (perf)', value: making },
  ];
}

/** What a profiled server runs: the workload, how many measured batches, where the trial directories go. */
interface ProfiledRun {
  workload?: Workload;
  rounds?: number;
  directories?: Directories;
}

/**
 * Where the server's main thread goes during a workload (the trivial one unless told), by part of
 * the service: one more server of the driver, profiled (V8's sampling profiler, which slows it a
 * little), its measured batches only (not its start or warm-up). Each part in ms per trial and as
 * a share.
 */
async function profileRows(progress: Progress, driver: SandboxDriverName, run: ProfiledRun = {}): Promise<Row[]> {
  const { workload = TRIVIAL, rounds, directories = { label: '' } } = run;
  const dir = tempDir('profile');
  const kernel = kernelWatch(progress, workload === TRIVIAL);
  try {
    const assay = await measureAssay(progress, driver, workload, { rounds, cpuProfileDir: dir.dir, trialsParent: directories.parent, watch: kernel });
    const parts = mainThreadParts(readProfile(dir.dir), assay.windows);
    const trials = TRIALS * assay.windows.length;
    const busy = parts.reduce((total, { ms }) => total + ms, 0);
    const benchmark = `${TRIALS} trials, ${AT_ONCE} at once, ${workload.name} (${driver}${directories.label}), server profiled`;
    return [
      { benchmark, measure: 'server main thread busy, ms per trial (profiled)', value: busy / trials },
      ...parts.map(({ part, ms }) => ({ benchmark, measure: `main thread ms per trial: ${part} (${((ms / busy) * 100).toFixed(0)} %)`, value: ms / trials })),
      ...inodeRows(benchmark, kernel.shares, assay.cpuPerTrialMs),
    ];
  } finally {
    dir.remove();
  }
}

/** The sleep workload's goal: the wave floor at least this share of Assay's wall. */
const SLEEP_EFFICIENCY_GOAL = 0.98;

/**
 * The sleep workload's wall as ms per trial beyond its second: the batch's longest chain is one
 * slot's ceil(TRIALS / AT_ONCE) trials one after another, each a second of sleep plus this.
 */
function msBeyondSleep(wallMs: number): number {
  const chain = Math.ceil(TRIALS / AT_ONCE);
  return (wallMs - waveFloorMs(TRIALS)) / chain;
}

async function sleepRows(progress: Progress, driver: SandboxDriverName): Promise<Row[]> {
  // One round: the same two processes per trial, bare, show what the wave floor leaves out (their spawns).
  const bare = await measureFloor(progress, driver, SLEEP, 1);
  const straight = await measureStraight(progress, driver, SLEEP);
  const assay = await measureAssay(progress, driver, SLEEP);
  const floor = waveFloorMs(TRIALS);
  const benchmark = `${TRIALS} trials, ${AT_ONCE} at once, ${SLEEP.name} (${driver})`;
  return [
    { benchmark, measure: 'wall ms (floor: waves of 1 s)', value: assay.wallMs, baseline: floor },
    { benchmark, measure: 'wall ms (floor: the same processes bare)', value: assay.wallMs, baseline: bare },
    { benchmark, measure: 'bare processes: wave floor / wall', value: floor / bare },
    {
      benchmark,
      measure: 'efficiency (wave floor / wall)',
      value: floor / assay.wallMs,
      floor: 'waves of 1 s (no way of running them is faster)',
      target: { kind: 'at-least', value: SLEEP_EFFICIENCY_GOAL, unit: '' },
    },
    {
      benchmark,
      measure: `ms per trial beyond its 1 s, in a slot's chain (baseline: what ${SLEEP_EFFICIENCY_GOAL} efficiency leaves)`,
      value: msBeyondSleep(assay.wallMs),
      baseline: msBeyondSleep(floor / SLEEP_EFFICIENCY_GOAL),
    },
    { benchmark, measure: "bare processes: ms per trial beyond the 1 s (spawning the trial's two processes)", value: msBeyondSleep(bare) },
    { benchmark, measure: 'the trial runner and the event log alone: ms per trial beyond the 1 s', value: msBeyondSleep(straight) },
    { benchmark, measure: 'server CPU ms per trial', value: assay.cpuPerTrialMs },
  ];
}

const SHM = '/dev/shm';
const TMPFS_MAGIC = 0x01021994;

/**
 * The trivial workload again with the trial directories, and the bare runs' directories, on a
 * tmpfs: what the trials root's file system costs (making and removing each trial's directories)
 * against what the service's own work costs, with the profiled servers' parts. Skipped, saying
 * so, without a tmpfs at /dev/shm.
 */
async function tmpfsRows(progress: Progress, drivers: readonly SandboxDriverName[]): Promise<Row[]> {
  if (!fs.existsSync(SHM) || fs.statfsSync(SHM).type !== TMPFS_MAGIC) {
    progress.log(`${SHM} is not a tmpfs here: the rows with the trial directories on a tmpfs are left out.`);
    return [];
  }
  const parent = tempDir('trials', SHM);
  try {
    return await rowsWithTrialsIn(progress, drivers, { label: ', trial directories on a tmpfs', parent: parent.dir });
  } finally {
    parent.remove();
  }
}

/** The trivial rows and the profiled servers' rows of each driver, with the trial directories (and the bare runs') there. */
async function rowsWithTrialsIn(progress: Progress, drivers: readonly SandboxDriverName[], directories: Directories): Promise<Row[]> {
  const rows: Row[] = [];
  for (const driver of drivers) rows.push(...(await trivialRows(progress, driver, directories)));
  if (trivialOnly) return rows;
  for (const driver of drivers) rows.push(...(await profileRows(progress, driver, { directories })));
  return rows;
}

/**
 * The trivial workload again with the trial directories, and the bare runs' directories, on a
 * fresh journaled ext4 (loop-mounted): the disk rows as they are on ext4 made by default, which
 * reuses freed inodes instead of searching past them. With the kernel rows of profiled servers.
 * Skipped, saying why, where it cannot be mounted (not root, no mkfs.ext4, no loop devices).
 */
async function journaledExt4Rows(progress: Progress, drivers: readonly SandboxDriverName[]): Promise<Row[]> {
  const mounted = mountJournaledExt4();
  if ('unavailable' in mounted) {
    progress.log(`the rows with the trial directories on a journaled ext4 are left out: ${mounted.unavailable}`);
    return [];
  }
  try {
    return await rowsWithTrialsIn(progress, drivers, { label: ', trial directories on a journaled ext4', parent: mounted.dir });
  } finally {
    mounted.remove();
  }
}

/**
 * The sandboxes this machine can measure: both where bubblewrap works (the probe the server runs
 * at start-up), else the process sandbox alone, saying why. Without it every bubblewrap trial
 * would be void and the suite would end with no rows at all.
 */
export async function measurableDrivers(progress: Progress): Promise<SandboxDriverName[]> {
  const probed = await detectDefaultSandbox();
  if (probed.driver === 'bubblewrap') return ['bubblewrap', 'process'];
  progress.log(`the bubblewrap rows are left out: ${probed.reason}`);
  return ['process'];
}

export const throughputSuite: Suite = {
  name: 'throughput',
  description: `${TRIALS} trials at ${AT_ONCE} at once on a running child server (after ${WARM_UP_BATCHES} warm-up batches), start request to finished batch, median of ${ROUNDS}, against the fastest floor of the same run (the same processes bare, spawned from Node or through the spawn helper, whichever was faster; the floor column names it); server CPU is its own (children excluded).`,
  async run(progress) {
    const rows: Row[] = [];
    const drivers = await measurableDrivers(progress);
    for (const driver of drivers) rows.push(...(await trivialRows(progress, driver)));
    if (!trivialOnly) for (const driver of drivers) rows.push(...(await profileRows(progress, driver)));
    rows.push(...(await tmpfsRows(progress, drivers)));
    rows.push(...(await journaledExt4Rows(progress, drivers)));
    if (trivialOnly) return rows;
    for (const driver of drivers) rows.push(...(await sleepRows(progress, driver)));
    // One batch each: the sleep workload's main thread is mostly idle, and 13 s of it is enough to read.
    for (const driver of drivers) rows.push(...(await profileRows(progress, driver, { workload: SLEEP, rounds: 1 })));
    if (profileDir) progress.log(`CPU profiles in ${profileDir}:\n${summarizeProfiles(profileDir)}`);
    return rows;
  },
};
