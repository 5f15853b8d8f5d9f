import { derivedEventId, newEventId, newId } from './ids';

describe('ids', () => {
  it('are prefixed, unique and ordered by creation time', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => newId('bat', 1_700_000_000_000 + Math.floor(i / 100)));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^bat_[0-9a-f]{28}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
  });

  it('give new events UUIDs of version 7, unique and in the order they were made', () => {
    const start = 1_700_000_000_000;
    // Up to 300 ids in one millisecond: the counter keeps them in order.
    const ids = Array.from({ length: 6000 }, (_, i) => newEventId(start + Math.floor(i / 300)));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    // The first 48 bits are the milliseconds.
    expect(parseInt(ids[0].replace('-', '').slice(0, 12), 16)).toBe(start);
    expect(parseInt(ids[5999].replace('-', '').slice(0, 12), 16)).toBe(start + 19);
  });

  it('derive the same UUID from the same parts, and another from other parts', () => {
    const id = derivedEventId('stream', 'command', '0');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedEventId('stream', 'command', '0')).toBe(id);
    expect(derivedEventId('stream', 'command', '1')).not.toBe(id);
  });
});
