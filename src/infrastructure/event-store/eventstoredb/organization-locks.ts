/**
 * One holder at a time per organization within this process: the appends of one organization
 * by one instance take their turn instead of racing each other for the same chain revision.
 * Several organizations are taken in sorted order, so two holders never wait on each other.
 */
export class OrganizationLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async holding<T>(organizations: readonly string[], work: () => Promise<T>): Promise<T> {
    const releases: Array<() => void> = [];
    try {
      for (const organization of [...organizations].sort()) releases.push(await this.take(organization));
      return await work();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  private async take(organization: string): Promise<() => void> {
    const previous = this.tails.get(organization) ?? Promise.resolve();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => held);
    this.tails.set(organization, tail);
    await previous;
    return () => {
      release();
      if (this.tails.get(organization) === tail) this.tails.delete(organization);
    };
  }
}
