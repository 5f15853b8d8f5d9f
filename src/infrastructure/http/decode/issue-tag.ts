/** The spec's error issue tags: a leaf, so validators and the issue mapping both name them without importing each other. */
export type IssueTag = 'Pointer' | 'Unexpected' | 'Missing' | 'Composite' | 'Refinement' | 'Transformation' | 'Type' | 'Forbidden';
