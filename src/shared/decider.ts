/**
 * A decider holds a stream's business rules as pure functions: no Nest, database or clock.
 * Time, ids and the actor arrive in the command, so a decision is deterministic.
 */
export interface Decider<Command, State, Event> {
  initialState: State;
  evolve(state: State, event: Event): State;
  /** The events that the command causes; none when the decision is already in the state. */
  decide(command: Command, state: State): Event[];
}

/** Folds a stream's events into the decider's state. */
export function foldEvents<State, Event>(decider: Pick<Decider<unknown, State, Event>, 'initialState' | 'evolve'>, events: Event[]): State {
  return events.reduce((state, event) => decider.evolve(state, event), decider.initialState);
}
