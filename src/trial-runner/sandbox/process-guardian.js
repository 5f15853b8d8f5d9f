'use strict';
/**
 * The process guardian: started by the server's spawn helper client (process-launcher.ts) in a
 * session of its own, so that a signal to the server's process group does not reach it. The server
 * writes the process group of each command it starts (`+PGID`) and ends (`-PGID`) on the
 * guardian's stdin, one a line. When that pipe closes, the server died, however it died (SIGKILL
 * of its whole process group with its spawn helper, the out-of-memory killer): the guardian kills
 * every group still listed and exits, so no trial outlives its instance.
 *
 * Given a file, it also keeps the list there (`+PGID START` and `-PGID` lines, START being the
 * group leader's start time from /proc, in clock ticks since boot), so that the next instance can
 * kill what is left should the guardian itself have been killed (process-groups.ts reads it).
 * Plain JavaScript, so that it runs as it is from the sources (tests) and from dist.
 */
const fs = require('node:fs');

const recordsFile = process.argv[2] || null;
const groups = new Map();
let records = recordsFile ? fs.openSync(recordsFile, 'a', 0o600) : null;
let linesWritten = 0;
let pending = '';

process.on('SIGHUP', () => undefined);
process.on('SIGINT', () => undefined);
process.stdin.on('data', (chunk) => {
  pending += chunk.toString('latin1');
  const lines = pending.split('\n');
  pending = lines.pop();
  for (const line of lines) take(line);
});
process.stdin.on('end', killAll);
process.stdin.on('error', killAll);

function take(line) {
  const pgid = Number(line.slice(1));
  if (!Number.isInteger(pgid) || pgid <= 1) return;
  if (line[0] === '+') {
    const start = startTime(pgid);
    groups.set(pgid, start);
    record(`+${pgid} ${start}\n`);
  } else if (line[0] === '-' && groups.delete(pgid)) {
    record(`-${pgid}\n`);
  }
}

/** The leader's start time, which tells it from a later process given the same id; 0 if it is gone already. */
function startTime(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] || '0';
  } catch {
    return '0';
  }
}

function record(line) {
  if (records === null) return;
  try {
    if (groups.size === 0) {
      fs.ftruncateSync(records, 0);
      linesWritten = 0;
      return;
    }
    fs.writeSync(records, line);
    linesWritten += 1;
    // The file stays the size of what runs: rewritten whole once it holds mostly ended groups.
    if (linesWritten > 64 + 4 * groups.size) rewrite();
  } catch {
    // A full or vanished disk: the list in memory still protects this instance's life.
  }
}

function rewrite() {
  const text = [...groups].map(([pgid, start]) => `+${pgid} ${start}\n`).join('');
  fs.writeFileSync(`${recordsFile}.new`, text, { mode: 0o600 });
  fs.renameSync(`${recordsFile}.new`, recordsFile);
  fs.closeSync(records);
  records = fs.openSync(recordsFile, 'a', 0o600);
  linesWritten = groups.size;
}

function killAll() {
  for (const pgid of groups.keys()) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  groups.clear();
  record('');
  process.exit(0);
}
