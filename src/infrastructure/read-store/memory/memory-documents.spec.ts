/**
 * The in-memory read store tests the common filters (equality, number ranges, `$in` of plain
 * values) without mingo. It
 * must answer exactly as mingo (MongoDB's rules) does, for every kind of value a field may hold:
 * a number, a numeric string, an array reaching both sides of a range, null, nothing.
 */
import 'mingo/init/system';
import { Query } from 'mingo';
import type { Document } from '../read-store.port';
import { compileFilter } from './memory-documents';

const DOCUMENTS: Document[] = [
  { _id: 'n5', org: 'acme', n: 5 },
  { _id: 'n10', org: 'acme', n: 10 },
  { _id: 'n20', org: 'acme', n: 20 },
  { _id: 'n-7.5', org: 'globex', n: -7.5 },
  { _id: 'string', org: 'acme', n: '15' },
  { _id: 'array', org: 'acme', n: [5, 25] },
  { _id: 'array-inside', org: ['acme', 'globex'], n: [12] },
  { _id: 'null', org: 'acme', n: null },
  { _id: 'missing', org: 'acme' },
  { _id: 'object', org: 'acme', n: { value: 15 } },
  { _id: 'boolean', org: 'acme', n: true },
];

const FILTERS: Array<Record<string, unknown>> = [
  { org: 'acme' },
  { n: 10 },
  { n: { $gt: 5 } },
  { n: { $gte: 5, $lt: 20 } },
  { n: { $gt: 10, $lte: 20 } },
  { n: { $lte: -7.5 } },
  { org: 'acme', n: { $gte: 0, $lt: 100 } },
  { org: 'globex', n: { $lt: 0 } },
  { n: { $gt: 10, $lt: 6 } },
  { n: { $gte: '10' } },
  { n: { $eq: 10 } },
  { n: { $gt: 5, $in: [10, 20] } },
  { n: true },
  // $in of plain values is tested directly too: a value held, an array holding one, nothing held.
  { n: { $in: [10, 25] } },
  { org: { $in: ['globex'] } },
  { org: 'acme', n: { $in: ['15', 5, true] } },
  { n: { $in: [] } },
  { n: { $in: [12, 99] } },
  // Lists that need mingo: null matches a missing field, an array value matches an equal array.
  { n: { $in: [null, 10] } },
  { n: { $in: [[5, 25]] } },
];

describe('the memory store filter test', () => {
  it.each(FILTERS.map((filter) => [JSON.stringify(filter), filter] as const))('answers %s as mingo does on every kind of value', (_label, filter) => {
    const direct = compileFilter(filter);
    const mingo = new Query(filter);
    const expected = DOCUMENTS.filter((doc) => mingo.test(doc)).map((doc) => doc._id);
    expect(DOCUMENTS.filter(direct).map((doc) => doc._id)).toEqual(expected);
  });
});
