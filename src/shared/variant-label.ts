/**
 * How a variant is named wherever it is shown (the CLI, the report, the analytics, every page of
 * the viewer): `harness/model`, then the profile's name in brackets when it has one. Variants
 * that would read alike are told apart by their place: `#2`, `#3`… after the first.
 */
export interface NamedVariant {
  harness: string;
  model: string;
  profile?: { name?: string | null } | null;
}

export function variantLabel(variant: NamedVariant): string {
  const name = variant.profile?.name?.trim();
  return `${variant.harness}/${variant.model}${name ? ` (${name})` : ''}`;
}

/** The labels of several variants in their order, the repeats numbered (`command/none #2`). */
export function variantLabels(variants: readonly NamedVariant[]): string[] {
  const seen = new Map<string, number>();
  return variants.map((variant) => {
    const label = variantLabel(variant);
    const count = (seen.get(label) ?? 0) + 1;
    seen.set(label, count);
    return count === 1 ? label : `${label} #${count}`;
  });
}
