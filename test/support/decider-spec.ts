import { Decider, foldEvents } from '#shared/decider';

/** given([events]).when(command).then([events]) or .thenThrows(ErrorClass): a decider spec. */
export function given<Command, State, Event>(decider: Decider<Command, State, Event>, events: Event[]) {
  return {
    when(command: Command) {
      const decide = () => decider.decide(command, foldEvents(decider, events));
      return {
        then(expected: Event[]) {
          expect(decide()).toEqual(expected);
        },
        thenThrows(errorClass: new (...args: never[]) => Error, message?: string | RegExp) {
          expect(decide).toThrow(errorClass);
          if (message) expect(decide).toThrow(message);
        },
      };
    },
  };
}
