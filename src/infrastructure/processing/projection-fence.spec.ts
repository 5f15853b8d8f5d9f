import { ProjectionFence, ProjectionLeaseLost } from './projection-fence';

describe('the projection fence', () => {
  it('holds until its deadline on the monotonic clock, extended by renewals', () => {
    let monotonic = 0;
    const fence = new ProjectionFence(
      () => monotonic,
      () => 1_000_000 + monotonic,
    );
    fence.hold(3, 500);
    monotonic = 400;
    expect(fence.check()).toBe(3);
    expect(fence.remainingMs()).toBe(100);
    fence.extend(900);
    monotonic = 800;
    expect(fence.check()).toBe(3);
    monotonic = 901;
    expect(() => fence.check()).toThrow(ProjectionLeaseLost);
    fence.release();
  });

  it('ends the hold once the wall clock passed its deadline, though the monotonic clock stood still (a suspended machine)', () => {
    let wall = 1_000_000;
    const fence = new ProjectionFence(
      () => 0,
      () => wall,
    );
    const lost: string[] = [];
    fence.onLost((reason) => lost.push(reason));
    fence.hold(1, 500);
    expect(fence.check()).toBe(1);
    // Suspended for ten seconds: CLOCK_MONOTONIC does not advance across a suspend, the wall clock does.
    wall += 10_000;
    expect(() => fence.check()).toThrow(ProjectionLeaseLost);
    expect(lost).toEqual(['the lease was not renewed in time']);
  });
});
