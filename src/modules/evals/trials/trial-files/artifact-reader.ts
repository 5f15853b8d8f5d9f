/** Reads a stored artifact's content (opened from its seal) for an organization; the composition root gives it. */
export interface ArtifactReader {
  read(organization: string, sha256: string): Promise<Buffer>;
}

export const ARTIFACT_READER = Symbol('ArtifactReader');
