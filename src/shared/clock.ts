/** Time arrives through a Clock so that deciders and tests stay deterministic. */
export interface Clock {
  now(): Date;
}

export const CLOCK = Symbol('Clock');

export const systemClock: Clock = { now: () => new Date() };
