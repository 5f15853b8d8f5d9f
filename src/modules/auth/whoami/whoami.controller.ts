import { Controller } from '@nestjs/common';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';

export interface WhoamiAnswer {
  organization: string;
  kind: Caller['kind'];
  /** The API key id, or null for an OAuth token. */
  keyId: string | null;
  /** The OAuth subject, or null for an API key. */
  subject: string | null;
  name: string;
  permissions: string[];
}

@Controller()
export class WhoamiController {
  /** Which organization and permissions the credential in use carries. */
  @Operation('auth.whoami', null)
  whoami(@CurrentCaller() caller: Caller): WhoamiAnswer {
    return {
      organization: caller.organization,
      kind: caller.kind,
      keyId: caller.kind === 'api_key' ? caller.id : null,
      subject: caller.kind === 'oauth' ? caller.id : null,
      name: caller.name,
      permissions: caller.permissions,
    };
  }
}
