// How numbers, times and outcomes read on every page.

export const percent = (rate) => (rate === null || rate === undefined ? '—' : `${Math.round(rate * 100)}%`);

export function usd(value) {
  if (value === null || value === undefined) return '—';
  if (value === 0) return '$0';
  return value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

/** UTC, to the second: the same on every machine, as the API gives it. */
export const time = (iso) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '—');

export function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60000);
  return `${minutes} min ${Math.round((ms % 60000) / 1000)} s`;
}

export const between = (from, to) => (from && to ? duration(Date.parse(to) - Date.parse(from)) : '—');

export function bytes(n) {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The Wilson score interval at 95%: unlike p ± 1.96·se it stays inside [0, 1] and means
 * something for 0/3 or 3/3, the small samples evaluations have.
 */
export function wilson(passed, scored, z = 1.96) {
  if (!scored) return null;
  const p = passed / scored;
  const z2 = z * z;
  const centre = (p + z2 / (2 * scored)) / (1 + z2 / scored);
  const half = (z * Math.sqrt((p * (1 - p)) / scored + z2 / (4 * scored * scored))) / (1 + z2 / scored);
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

export const interval = (w) => (w ? `${percent(w.low)}–${percent(w.high)}` : '—');

/** A light background from red (0%) to green (100%), dark text on it; grey when nothing was scored. */
export const rateColour = (rate) => (rate === null || rate === undefined ? 'var(--unscored)' : `hsl(${Math.round(rate * 120)} 65% 82%)`);

/** One naming of variants everywhere: the CLI, the report, the analytics and every page (`harness/model (profile)`, `#2` for a repeat). */
export { variantLabel, variantLabels } from '../src/shared/variant-label.ts';

/** Counts of a batch's trials by status. */
export function trialCounts(runs) {
  const counts = { trials: 0, queued: 0, running: 0, passed: 0, failed: 0, void: 0 };
  for (const run of runs) {
    for (const trial of run.trials ?? []) {
      counts.trials += 1;
      counts[trial.status] = (counts[trial.status] ?? 0) + 1;
    }
  }
  return counts;
}

/**
 * What makes two variants the same column: the combination, not the id (a variant's id is the
 * case's own, so the same harness, model, sandbox and profile has one id per case).
 */
export const variantKey = (v) => JSON.stringify([v.harness, v.model, v.sandbox ?? null, v.profile ?? null, v.userModel ?? null]);
