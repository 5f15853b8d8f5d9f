import * as fs from 'node:fs';

/** The file in an instance's trials directory where its process guardian lists the running groups. */
export const PROCESS_GROUPS_FILE = 'process-groups';

/**
 * Kills the process groups a dead instance's guardian listed (process-guardian.js) and that are
 * still there: what its trials left running when the instance and its guardian were both killed.
 * A group id can be given to a new process once the group is gone, so a group is killed only when
 * it is provably the listed one: its leader is alive with the start time recorded, or its leader
 * is gone and members remain (no new process can take the id of a group that still has members).
 * Answers the groups killed.
 */
export function killRecordedGroups(file: string): number[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'latin1');
  } catch {
    return [];
  }
  const listed = new Map<number, string>();
  for (const line of text.split('\n')) {
    const fields = line.slice(1).split(' ');
    const pgid = Number(fields[0]);
    if (!Number.isInteger(pgid) || pgid <= 1) continue;
    if (line.startsWith('+')) listed.set(pgid, fields.length > 1 ? fields[1] : '0');
    else if (line.startsWith('-')) listed.delete(pgid);
  }
  if (listed.size === 0) return [];
  const running = processTable();
  const killed: number[] = [];
  for (const [pgid, start] of listed) {
    const leader = running.get(pgid);
    const ours = leader ? leader.start === start && leader.pgid === pgid : [...running.values()].some((entry) => entry.pgid === pgid);
    if (!ours) continue;
    try {
      process.kill(-pgid, 'SIGKILL');
      killed.push(pgid);
    } catch {
      // Gone meanwhile.
    }
  }
  return killed;
}

/** Every process's group and start time, by pid, from /proc. */
function processTable(): Map<number, { pgid: number; start: string }> {
  const table = new Map<number, { pgid: number; start: string }>();
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return table;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      // After the command's closing parenthesis: state, ppid, pgrp, … starttime (the 20th).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(name), { pgid: Number(fields[2]), start: fields[19] ?? '0' });
    } catch {
      // Exited meanwhile.
    }
  }
  return table;
}
