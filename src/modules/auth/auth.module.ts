import { Module } from '@nestjs/common';
import { CreateKeyController } from './api-keys/create-key/create-key.controller';
import { CreateApiKeyHandler } from './api-keys/create-key/create-key.handler';
import { ListKeysController } from './api-keys/list-keys/list-keys.controller';
import { ListApiKeysHandler } from './api-keys/list-keys/list-keys.handler';
import { RevokeKeyController } from './api-keys/revoke-key/revoke-key.controller';
import { RevokeApiKeyHandler } from './api-keys/revoke-key/revoke-key.handler';
import { WhoamiController } from './whoami/whoami.controller';

@Module({
  controllers: [WhoamiController, CreateKeyController, ListKeysController, RevokeKeyController],
  providers: [CreateApiKeyHandler, RevokeApiKeyHandler, ListApiKeysHandler],
})
export class AuthModule {}
