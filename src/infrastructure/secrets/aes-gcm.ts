import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** AES-256-GCM with a 96-bit random nonce and a 128-bit tag: the one cipher for every secret. */
const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/** Raised when a sealed value cannot be opened: wrong key, wrong binding (AAD), or tampering. */
export class SecretUnreadable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretUnreadable';
  }
}

/**
 * Encrypts `plaintext` under `key`, authenticating `binding` (the additional authenticated
 * data) with it: the result opens only with the same key and the same binding.
 * Layout: nonce ‖ tag ‖ ciphertext.
 */
export function sealBytes(key: Buffer, plaintext: Buffer, binding: string): Buffer {
  if (key.length !== KEY_BYTES) throw new Error(`An AES-256 key has ${KEY_BYTES} bytes, not ${key.length}.`);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(binding, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, cipher.getAuthTag(), ciphertext]);
}

/** Opens what `sealBytes` sealed, or throws SecretUnreadable: GCM never yields unauthenticated bytes. */
export function openBytes(key: Buffer, sealed: Buffer, binding: string): Buffer {
  if (key.length !== KEY_BYTES || sealed.length < NONCE_BYTES + TAG_BYTES) {
    throw new SecretUnreadable('The sealed value is malformed or the key has the wrong size.');
  }
  const decipher = createDecipheriv(ALGORITHM, key, sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(binding, 'utf8'));
  decipher.setAuthTag(sealed.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    throw new SecretUnreadable('The sealed value does not open: another key, another binding, or it was altered.');
  }
}

/** Sealing bytes as they come (a file of any size): `header`, each `update`, then `final`. */
export interface StreamSealing {
  header: Buffer;
  update(chunk: Buffer): Buffer;
  final(): Buffer;
}

/** The streamed layout puts the tag last, where it is known: nonce ‖ ciphertext ‖ tag. */
export function startSealing(key: Buffer, binding: string): StreamSealing {
  if (key.length !== KEY_BYTES) throw new Error(`An AES-256 key has ${KEY_BYTES} bytes, not ${key.length}.`);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(binding, 'utf8'));
  return { header: nonce, update: (chunk) => cipher.update(chunk), final: () => Buffer.concat([cipher.final(), cipher.getAuthTag()]) };
}

/** Opens what `startSealing` sealed, or throws SecretUnreadable. */
export function openStreamed(key: Buffer, sealed: Buffer, binding: string): Buffer {
  if (key.length !== KEY_BYTES || sealed.length < NONCE_BYTES + TAG_BYTES) {
    throw new SecretUnreadable('The sealed value is malformed or the key has the wrong size.');
  }
  const decipher = createDecipheriv(ALGORITHM, key, sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(binding, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new SecretUnreadable('The sealed value does not open: another key, another binding, or it was altered.');
  }
}
