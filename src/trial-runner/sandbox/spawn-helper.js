'use strict';
/**
 * The Node spawn helper: a small process that starts trial commands for the server and relays
 * their output over IPC. Forking from here is cheaper than from the server (a smaller process)
 * and happens beside the server's event loop instead of blocking it, which matters when dozens of
 * trials start at once. Where python3 runs, the Python helper (spawn_helper.py) is used
 * instead: it starts commands with vfork, for less than half the CPU; this one is the fallback.
 * Plain JavaScript, so that it runs as it is from the sources (tests) and from dist.
 */
const { spawn } = require('node:child_process');

const children = new Map();

process.on('message', (message) => {
  if (message.op === 'spawn') start(message);
  else if (message.op === 'destroy') destroyPipes(message.id);
  else if (message.op === 'write') children.get(message.id)?.stdin?.write(message.data);
  else if (message.op === 'end') children.get(message.id)?.stdin?.end();
});

// The server went away: nothing may outlive it.
process.on('disconnect', () => {
  for (const child of children.values()) killGroup(child.pid);
  process.exit(0);
});

function start({ id, file, args, cwd, env, stdin, fd3, keepStdinOpen }) {
  const stdio = [stdin === null && keepStdinOpen !== true ? 'ignore' : 'pipe', 'pipe', 'pipe'];
  if (fd3) stdio.push('pipe');
  let child;
  try {
    child = spawn(file, args, { cwd, env, stdio, detached: true });
  } catch (error) {
    send({ id, ev: 'error', code: error.code, message: error.message });
    return;
  }
  children.set(id, child);
  child.on('error', (error) => {
    // After a successful spawn an 'error' only means a signal could not be sent; 'close' follows.
    if (child.pid !== undefined) return;
    children.delete(id);
    send({ id, ev: 'error', code: error.code, message: error.message });
  });
  if (child.pid !== undefined) send({ id, ev: 'spawned', pid: child.pid });
  for (const fd of [1, 2, 3]) {
    const stream = child.stdio[fd];
    if (stream) stream.on('data', (chunk) => send({ id, ev: 'data', fd, chunk }));
  }
  if (child.stdin) {
    child.stdin.on('error', () => undefined);
    if (keepStdinOpen !== true) child.stdin.end(stdin);
    else if (stdin !== null) child.stdin.write(stdin);
  }
  child.on('exit', (code, signal) => send({ id, ev: 'exit', code, signal }));
  child.on('close', () => {
    children.delete(id);
    send({ id, ev: 'close' });
  });
}

function destroyPipes(id) {
  const child = children.get(id);
  if (!child) return;
  for (const stream of child.stdio) if (stream) stream.destroy();
}

function killGroup(pid) {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function send(message) {
  if (process.connected) process.send(message);
}
