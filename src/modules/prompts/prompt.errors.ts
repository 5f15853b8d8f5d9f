import { NotFound } from '#shared/errors';

/** The 404s that writes and reads share, worded alike wherever they arise. */
export function promptNotFound(promptId: string): NotFound {
  return new NotFound(`Prompt "${promptId}" does not exist.`);
}

export function versionNotFound(promptId: string, version: number, highest: number): NotFound {
  return new NotFound(`Version ${version} of "${promptId}" does not exist; its highest version is ${highest}.`);
}
