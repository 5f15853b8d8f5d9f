/** The judges' configuration (providers, judge model, prices) as EvalsModule provides it. */
export const JUDGE_SETTINGS = Symbol('JudgeSettings');
