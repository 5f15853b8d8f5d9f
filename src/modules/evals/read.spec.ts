import 'reflect-metadata';
import type { CatalogueModel } from './models/model-catalogue';
import { findModel, modelsOf } from './models/model-catalogue';
import { listModels } from './models/list-models/model-list';
import { afterCursor, clampLimit, escapeRegex, pageOf, sortOf } from './shared/cursor';
import { trialCosts } from './trials/costs';

const model = (id: string, vendor: string, releasedAt: string): CatalogueModel => ({
  id,
  displayName: id.toUpperCase(),
  vendor,
  summary: `${id} summary`,
  releasedAt,
  prices: { inputPerMillionUsd: 1, outputPerMillionUsd: 2, cacheReadPerMillionUsd: 0.1, cacheWritePerMillionUsd: 0 },
});

describe('evals.models.list', () => {
  const catalogue = [
    ...Array.from({ length: 15 }, (_, index) => model(`zeta-${index}`, 'Zeta', `2025-01-${String(index + 1).padStart(2, '0')}`)),
    ...Array.from({ length: 10 }, (_, index) => model(`alpha-${index}`, 'Alpha', `2024-06-${String(index + 1).padStart(2, '0')}`)),
  ];

  it('answers at most 20 models, by vendor then newest first, while total counts every match', () => {
    const list = listModels(catalogue, 'harness_kind_4', '');
    expect(list.total).toBe(25);
    expect(list.models).toHaveLength(20);
    expect(list.models.slice(0, 3).map((entry) => entry.id)).toEqual(['alpha-9', 'alpha-8', 'alpha-7']);
    expect(list.models[10]).toEqual({ id: 'zeta-14', displayName: 'ZETA-14', vendor: 'Zeta', summary: 'zeta-14 summary' });
    expect(list.models.at(-1)!.id).toBe('zeta-5');
  });

  it('matches q case-insensitively in the id or the display name', () => {
    expect(listModels(catalogue, 'h', 'ZETA-1').total).toBe(6);
    expect(listModels(catalogue, 'h', 'alpha-1').models.map((entry) => entry.id)).toEqual(['alpha-1']);
    expect(listModels(catalogue, 'h', 'nothing')).toEqual({ harness: 'h', models: [], total: 0 });
  });

  it('lists per harness the models whose prices feed the cost estimates; command has none', () => {
    expect(modelsOf('command')).toEqual([]);
    const sonnet = findModel('harness_kind_1', 'claude-sonnet-4-5')!;
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 2_000_000, costUsd: null };
    const costs = trialCosts({ harness: 'harness_kind_1', model: 'claude-sonnet-4-5', sandbox: null, usage: usage, hasSimulatedUser: false });
    expect(costs.estimatedEquivalentUsd).toBe(sonnet.prices.inputPerMillionUsd + sonnet.prices.outputPerMillionUsd);
  });
});

describe('cursor paging helpers', () => {
  it('clamps the limit to 1..100, defaulting to 20', () => {
    expect([undefined, 0, -4, 1, 2.9, 100, 101, 1e9].map((limit) => clampLimit(limit))).toEqual([20, 1, 1, 1, 2, 100, 100, 100]);
  });

  it('builds the keyset filter of the items strictly after a cursor', () => {
    const keys = [
      { field: 'startedAtMillis', direction: -1 as const, value: 5 },
      { field: '_id', direction: -1 as const, value: 'b' },
    ];
    expect(afterCursor(keys)).toEqual({ $or: [{ startedAtMillis: { $lt: 5 } }, { startedAtMillis: 5, _id: { $lt: 'b' } }] });
    expect(sortOf(keys)).toEqual({ startedAtMillis: -1, _id: -1 });
  });

  it('answers a next cursor only when an item beyond the page exists', () => {
    const cursor = (n: number) => ({ id: String(n), startedAtMillis: n, name: '' });
    expect(pageOf([1, 2, 3], 2, cursor, (n) => n * 10)).toEqual({ items: [10, 20], next: cursor(2) });
    expect(pageOf([1, 2], 2, cursor, (n) => n)).toEqual({ items: [1, 2], next: null });
  });

  it('escapes a text so that it matches literally', () => {
    expect(new RegExp(escapeRegex('a.b*(c)')).test('xa.b*(c)y')).toBe(true);
    expect(new RegExp(escapeRegex('a.b')).test('axb')).toBe(false);
  });
});
