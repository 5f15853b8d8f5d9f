/**
 * Environment variable names an organization, a variant's profile or a harness configuration may
 * not set: they would change how a trial's sandbox is started (the programs found, the libraries
 * loaded by the dynamic linker of bwrap, prlimit and setpriv, which run as root before the trial
 * drops to its own user), or what the service itself gives every trial (its home, its temporary
 * directory, the prompt and connector values under `ASSAY_`).
 */
export const RESERVED_VARIABLE_NAMES: readonly string[] = [
  // What the service sets for every trial, and what finds programs.
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'PWD',
  'OLDPWD',
  'TMPDIR',
  // Read by every shell it starts: code run before the trial's own command, or its parsing.
  'IFS',
  'ENV',
  'BASH_ENV',
  'CDPATH',
  'PS4',
  'SHELLOPTS',
  'BASHOPTS',
  'GLOBIGNORE',
  // Code run by every node program (a harness, an install).
  'NODE_OPTIONS',
  // glibc's unsecure variables: files the C library loads or trusts when a program starts.
  'GCONV_PATH',
  'GETCONF_DIR',
  'GLIBC_TUNABLES',
  'HOSTALIASES',
  'LOCALDOMAIN',
  'LOCPATH',
  'NIS_PATH',
  'NLSPATH',
  'RESOLV_HOST_CONF',
  'RES_OPTIONS',
  'TZDIR',
];

/** Every name under these prefixes is reserved: the service's own, the dynamic linker's, glibc's allocator's, bash's exported functions. */
export const RESERVED_VARIABLE_PREFIXES: readonly string[] = ['ASSAY_', 'LD_', 'MALLOC_', 'BASH_FUNC_'];

export function isReservedVariable(name: string): boolean {
  return RESERVED_VARIABLE_NAMES.includes(name) || RESERVED_VARIABLE_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** Matches only names that are not reserved (for pattern-based validators). */
export const UNRESERVED_VARIABLE_PATTERN = new RegExp(`^(?!(?:${RESERVED_VARIABLE_NAMES.join('|')})$)(?!(?:${RESERVED_VARIABLE_PREFIXES.join('|')}))`);

/** The refusal, naming the variable: the same words wherever a reserved name is refused. */
export function reservedVariableMessage(name: string): string {
  return `"${name}" is a reserved environment variable name: it would change how the trial's sandbox starts or what the service sets (reserved: ${RESERVED_VARIABLE_NAMES.join(', ')} and names starting with ${RESERVED_VARIABLE_PREFIXES.join(', ')})`;
}

/**
 * The reserved names that change how any program starts (the dynamic linker's, glibc's, the
 * shells' start-up files, node's options): never passed to the process that starts a sandbox,
 * whatever let them through, since it and the tools it runs start as root.
 */
export function changesProgramStart(name: string): boolean {
  if (name.startsWith('ASSAY_') || SET_BY_THE_SERVICE.includes(name)) return false;
  return isReservedVariable(name);
}

/** Reserved because the service sets them for every trial (the programs it starts are named by path). */
const SET_BY_THE_SERVICE = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'PWD', 'OLDPWD', 'TMPDIR'];
