/**
 * What a sealed value is bound to: the additional authenticated data of its encryption. A
 * ciphertext copied to another organization, connection, integration or variable does not open,
 * even under the same data key.
 */
export type SecretBinding =
  | { kind: 'connection'; organization: string; connectionId: string; integrationId: string; authMethodId: string }
  | { kind: 'variable'; organization: string; name: string }
  | { kind: 'artifact'; organization: string; sha256: string };

/** A JSON array, so no separator inside an id can make two bindings read alike. */
export function bindingText(binding: SecretBinding): string {
  if (binding.kind === 'connection') {
    return JSON.stringify(['assay-secret/v1', 'connection', binding.organization, binding.connectionId, binding.integrationId, binding.authMethodId]);
  }
  if (binding.kind === 'artifact') return JSON.stringify(['assay-artifact/v1', binding.organization, binding.sha256]);
  return JSON.stringify(['assay-secret/v1', 'variable', binding.organization, binding.name]);
}

/** A data key is bound to its organization and its id under the master key. */
export function dataKeyBindingText(organization: string, keyId: string): string {
  return JSON.stringify(['assay-data-key/v1', organization, keyId]);
}
