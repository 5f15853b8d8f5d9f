import { Module } from '@nestjs/common';
import { ListVariablesController } from './list-variables/list-variables.controller';
import { ListVariablesHandler } from './list-variables/list-variables.handler';
import { RemoveVariableController } from './remove-variable/remove-variable.controller';
import { RemoveVariableHandler } from './remove-variable/remove-variable.handler';
import { SetVariablesController } from './set-variables/set-variables.controller';
import { SetVariablesHandler } from './set-variables/set-variables.handler';

/** The organization's environment variables: sealed values, previews in the read model. */
@Module({
  controllers: [SetVariablesController, ListVariablesController, RemoveVariableController],
  providers: [SetVariablesHandler, ListVariablesHandler, RemoveVariableHandler],
})
export class EnvironmentModule {}
