/** A command line the command cannot take: the message says what is wrong, and the usage follows. */
export class UsageError extends Error {}

/** A well-formed command that the state of the event log refuses; nothing was written. */
export class Refusal extends Error {}
