'use strict';
/**
 * The validator's and prepare's process, run by Node inside the trial's sandbox with the
 * workspace as its working directory. It speaks to the server only over stdin and stdout, one
 * JSON object a line (validation/module-protocol.ts describes the messages). It loads the case's
 * transpiled module, calls its exported function with `ctx`, and answers its result.
 *
 * What the module prints (console.log, process.stdout.write) is sent as log messages, never as
 * raw output: the protocol keeps stdout. A module that writes to file descriptor 1 itself breaks
 * the protocol, and the server records it as an error.
 * Plain JavaScript, copied into the trial directory as it is: the sandbox sees nothing of the
 * server's files.
 */
const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');
const { spawnSync } = require('node:child_process');

const writeProtocol = process.stdout.write.bind(process.stdout);
/** Characters of one log message sent to the server (which keeps less): bounds the protocol's lines. */
const LOG_CHARS = 200000;
/** Characters of one workspace file given to a judge. */
const JUDGE_FILE_CHARS = 20000;
const JUDGE_FILES = 20;
const EXEC_BUFFER_BYTES = 16 * 1024 * 1024;

const workspace = process.cwd();
const pending = new Map();
let nextCall = 1;
let finished = false;

function send(message, then) {
  writeProtocol(`${JSON.stringify(message)}\n`, then);
}

/** The last message, then the exit once it is written (an exit before would lose what is still queued). */
function sendLast(message, code) {
  send(message, () => process.exit(code));
}

function bounded(text) {
  if (text.length <= LOG_CHARS) return text;
  const half = LOG_CHARS / 2;
  return `${text.slice(0, half)}\n[… ${text.length - LOG_CHARS} characters cut …]\n${text.slice(text.length - half)}`;
}

function log(level, text) {
  if (!finished) send({ type: 'log', level, text: bounded(text) });
}

process.stdout.write = (chunk, encoding, callback) => {
  log('stdout', typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  if (typeof encoding === 'function') encoding();
  else if (typeof callback === 'function') callback();
  return true;
};
process.stderr.write = (chunk, encoding, callback) => {
  log('stderr', typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  if (typeof encoding === 'function') encoding();
  else if (typeof callback === 'function') callback();
  return true;
};

function fail(error) {
  if (finished) return;
  finished = true;
  const message = error instanceof Error ? error.message : util.inspect(error);
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : message;
  sendLast({ type: 'error', message, stack: bounded(stack) }, 1);
}

function answer(value) {
  if (finished) return;
  try {
    JSON.stringify(value);
  } catch (error) {
    fail(new Error(`returned a value JSON cannot represent: ${error.message}`));
    return;
  }
  finished = true;
  sendLast(value === undefined ? { type: 'result' } : { type: 'result', value }, 0);
}

process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

/** A path of the workspace: relative, never leaving it. */
function inWorkspace(relative) {
  if (typeof relative !== 'string' || relative === '') throw new TypeError('a workspace path must be a non-empty string');
  const resolved = path.resolve(workspace, relative);
  const inside = path.relative(workspace, resolved);
  if (inside === '' || inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) {
    throw new Error(`"${relative}" is not a path inside the workspace`);
  }
  return resolved;
}

let serviceFiles = new Set();

function listFiles() {
  const files = [];
  const walk = (directory, prefix) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        if (relative !== '.git') walk(path.join(directory, entry.name), relative);
      } else if (!serviceFiles.has(relative)) files.push(relative);
    }
  };
  walk(workspace, '');
  return files.sort();
}

function exec(command) {
  if (typeof command !== 'string' || command === '') throw new TypeError('exec takes a shell command as a non-empty string');
  const result = spawnSync('/bin/sh', ['-c', command], { cwd: workspace, encoding: 'utf8', maxBuffer: EXEC_BUFFER_BYTES, stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error && result.error.code !== 'ENOBUFS') throw result.error;
  const exitCode = result.status === null ? 128 + (require('node:os').constants.signals[result.signal] || 0) : result.status;
  return { exitCode, stdout: result.stdout || '', stderr: result.stderr || '' };
}

function workspaceApi(mode) {
  const api = {
    readFile: (relative) => fs.readFileSync(inWorkspace(relative), 'utf8'),
    listFiles,
    exec,
  };
  if (mode === 'prepare') {
    api.writeFile = (relative, content) => {
      if (typeof content !== 'string') throw new TypeError('writeFile takes the content as a string');
      const target = inWorkspace(relative);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, content);
    };
  }
  return Object.freeze(api);
}

function judgeFiles(paths) {
  if (paths === undefined) return [];
  if (!Array.isArray(paths) || paths.some((entry) => typeof entry !== 'string')) throw new TypeError('judge files must be an array of workspace paths');
  if (paths.length > JUDGE_FILES) throw new RangeError(`a judge reads at most ${JUDGE_FILES} files`);
  return paths.map((relative) => {
    let content;
    try {
      content = fs.readFileSync(inWorkspace(relative), 'utf8');
    } catch (error) {
      return { path: relative, content: null, truncated: false, missing: error.code || String(error) };
    }
    const truncated = content.length > JUDGE_FILE_CHARS;
    return { path: relative, content: truncated ? content.slice(0, JUDGE_FILE_CHARS) : content, truncated };
  });
}

function judge(request) {
  if (request === null || typeof request !== 'object')
    return Promise.reject(new TypeError('judge takes an object: { prompt, choices?, threshold?, files?, model? }'));
  let files;
  try {
    files = judgeFiles(request.files);
  } catch (error) {
    return Promise.reject(error);
  }
  const id = nextCall++;
  const { prompt, choices, threshold, model, name } = request;
  send({ type: 'judge', id, request: { prompt, choices, threshold, model, name, files } });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function context(start) {
  const data = start.context;
  const ctx = {
    workspace: workspaceApi(start.mode),
    variables: Object.freeze({ ...data.variables }),
    log: (...values) => log('log', util.format(...values)),
  };
  if (start.mode !== 'prepare') {
    Object.assign(ctx, {
      prompt: data.prompt,
      conversation: data.conversation,
      finalMessage: data.finalMessage,
      trajectory: data.trajectory,
      judge,
    });
  }
  return Object.freeze(ctx);
}

function entryPoint(start) {
  if (start.mode === 'judge') {
    return async (ctx) => {
      const verdict = await ctx.judge(start.judge);
      return { passed: verdict.passed, score: verdict.score, message: verdict.reason };
    };
  }
  const loaded = require(start.file);
  const exported = loaded && Object.prototype.hasOwnProperty.call(loaded, start.name) ? loaded[start.name] : undefined;
  if (typeof exported !== 'function') {
    const names = loaded && typeof loaded === 'object' ? Object.keys(loaded).filter((key) => typeof loaded[key] === 'function') : [];
    throw new Error(`the module exports no function named "${start.name}"${names.length ? ` (it exports ${names.join(', ')})` : ''}`);
  }
  return exported;
}

async function run(start) {
  const ctx = context(start);
  const result = await entryPoint(start)(ctx);
  answer(result);
}

function receive(message) {
  if (message.type === 'start') {
    serviceFiles = new Set(message.serviceFiles);
    run(message).catch(fail);
    return;
  }
  if (message.type === 'answer') {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (typeof message.error === 'string') waiting.reject(new Error(message.error));
    else waiting.resolve(message.result);
  }
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let newline = buffered.indexOf('\n');
  while (newline >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (line.trim() !== '') receive(JSON.parse(line));
    newline = buffered.indexOf('\n');
  }
});
// The server closed the protocol: nothing more will be answered.
process.stdin.on('end', () => fail(new Error('the server closed the protocol')));
