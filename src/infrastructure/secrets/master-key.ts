import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AssayConfig } from '../../config';
import { sha256Hex } from '#shared/hash';
import type { JsonLogger } from '../logging/json-logger';
import { syncDirectorySync } from '../files/sync-directory';
import { KEY_BYTES } from './aes-gcm';

/**
 * The embedded default's master key: `keys/master.key` in the data directory, the directory
 * 0700 and the file 0600, apart from the event log and artifacts that the data directory's
 * other readers (a backup, an operator's tools) may see. ASSAY_MASTER_KEY keeps it out of files.
 */
export const MASTER_KEY_FILE = path.join('keys', 'master.key');
/** Where releases before the keys/ directory wrote it; moved at the next start. */
const LEGACY_MASTER_KEY_FILE = 'master.key';

export function masterKeyPath(dataDir: string): string {
  return path.join(dataDir, MASTER_KEY_FILE);
}

/** Moves a key file (and a pending rotation's `.next`) from where older releases kept it. */
export function adoptLegacyKeyFile(dataDir: string): void {
  const file = masterKeyPath(dataDir);
  for (const suffix of ['', '.next']) {
    const legacy = path.join(dataDir, LEGACY_MASTER_KEY_FILE + suffix);
    if (!fs.existsSync(legacy) || fs.existsSync(file + suffix)) continue;
    ensureKeyDirectory(file);
    fs.renameSync(legacy, file + suffix);
    fs.chmodSync(file + suffix, 0o600);
  }
}

function ensureKeyDirectory(file: string): void {
  fs.mkdirSync(path.dirname(path.dirname(file)), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.chmodSync(path.dirname(file), 0o700);
}

/** A public fingerprint of a master key: events record which key wraps a data key, never the key. */
export function masterKeyId(key: Buffer): string {
  return `mk_${sha256Hex(Buffer.concat([Buffer.from('assay-master-key-id\0'), key])).slice(0, 16)}`;
}

export function generateMasterKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** 32 bytes in canonical base64, as ASSAY_MASTER_KEY takes it. */
export function parseMasterKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, '')) {
    throw new Error(`${source} must hold 32 bytes in base64 (for example: openssl rand -base64 32).`);
  }
  return key;
}

/** The key file just written (by this process or a racing one), which must exist. */
function readWrittenMasterKeyFile(file: string): Buffer {
  const key = readMasterKeyFile(file);
  if (key === null) throw new Error(`master key file ${file} disappeared right after it was written`);
  return key;
}

export function readMasterKeyFile(file: string): Buffer | null {
  if (!fs.existsSync(file)) return null;
  return parseMasterKey(fs.readFileSync(file, 'utf8'), file);
}

/**
 * Creates the file with mode 0600, whole: the key is written and synced under a name of its own,
 * then linked to its name, which refuses (EEXIST) when the file exists. A process starting at the
 * same moment finds no file or the whole key, never a file created and not yet written (which it
 * would refuse as "must hold 32 bytes"), and two processes cannot both write it.
 */
export function writeMasterKeyFile(file: string, key: Buffer): void {
  ensureKeyDirectory(file);
  const staging = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(staging, 'wx', 0o600);
  try {
    fs.writeSync(fd, key.toString('base64') + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(staging, file);
  } finally {
    fs.rmSync(staging, { force: true });
  }
  // The new name itself survives a power loss too.
  syncDirectorySync(path.dirname(file));
}

/**
 * The master key of this process: ASSAY_MASTER_KEY, else the data directory's key file, which
 * is generated (mode 0600) on first start and announced in the log.
 */
export function withMasterKey(config: AssayConfig, logger: JsonLogger): AssayConfig {
  if (config.masterKey) return config;
  adoptLegacyKeyFile(config.dataDir);
  const file = masterKeyPath(config.dataDir);
  let key = readMasterKeyFile(file);
  if (key === null) {
    try {
      writeMasterKeyFile(file, generateMasterKey());
      logger.warn('generated a master key in the data directory: keep it, losing it makes every stored secret unreadable', {
        file,
        masterKeyId: masterKeyId(readWrittenMasterKeyFile(file)),
        hint: 'set ASSAY_MASTER_KEY (32 bytes, base64) to manage the key yourself',
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    key = readWrittenMasterKeyFile(file);
  } else {
    warnIfReadableByOthers(file, logger);
  }
  if (config.eventStoreUrl) {
    logger.warn('ASSAY_MASTER_KEY is not set: instances that share EVENTSTORE_URL must share one master key', { file });
  }
  logger.warn(
    'the master key is read from a file in the data directory; ASSAY_MASTER_KEY is preferred, and under the process sandbox nothing hides the file from trials',
    {
      source: file,
      masterKeyId: masterKeyId(key),
    },
  );
  return { ...config, masterKey: key };
}

function warnIfReadableByOthers(file: string, logger: JsonLogger): void {
  const mode = fs.statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) logger.warn('the master key file is readable by others; run chmod 600 on it', { file, mode: mode.toString(8) });
}

/**
 * The master key the event log's chain key comes from: configured, else the key file, created as
 * the server's first start would create it when a command opens the log before any server did.
 */
export function masterKeyForEventLog(config: Pick<AssayConfig, 'masterKey' | 'dataDir'>): Buffer {
  if (config.masterKey) return config.masterKey;
  adoptLegacyKeyFile(config.dataDir);
  const file = masterKeyPath(config.dataDir);
  if (!fs.existsSync(file)) {
    try {
      writeMasterKeyFile(file, generateMasterKey());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return readWrittenMasterKeyFile(file);
}

/** The master key a process that did not start the server uses: configured, else the key file. */
export function configuredMasterKey(config: Pick<AssayConfig, 'masterKey' | 'dataDir'>): Buffer {
  if (!config.masterKey) adoptLegacyKeyFile(config.dataDir);
  const key = config.masterKey ?? readMasterKeyFile(masterKeyPath(config.dataDir));
  if (!key) throw new Error(`No master key: set ASSAY_MASTER_KEY or start the server once to create ${masterKeyPath(config.dataDir)}.`);
  return key;
}
