import * as path from 'node:path';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { ModulesContainer } from '@nestjs/core';
import type { Permission } from '#shared/permissions';
import type { ClassType } from '../decode/validation-metadata-cache';
import { OPERATION_NAME_KEY, PERMISSION_KEY, PUBLIC_KEY } from '../operation.decorator';

/** What a controller method declares: its route, its operation, who may call it and its body's DTO. */
export interface DeclaredOperation {
  method: string;
  path: string;
  name: string | null;
  /** Null: any credential. */
  permission: Permission | null;
  isPublic: boolean;
  body: ClassType | null;
}

/** Every route the application's controllers declare, read from the metadata Nest routes by. */
export function declaredOperations(modules: ModulesContainer): DeclaredOperation[] {
  const declared: DeclaredOperation[] = [];
  for (const module of modules.values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as ClassType | null;
      if (controller) declared.push(...operationsOf(controller));
    }
  }
  return declared;
}

function operationsOf(controller: ClassType): DeclaredOperation[] {
  const prefix = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '/');
  const prototype = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype).flatMap((member) => {
    const handler = prototype[member];
    if (member === 'constructor' || typeof handler !== 'function') return [];
    const routePath = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
    if (routePath === undefined) return [];
    return [
      {
        method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number],
        path: path.posix.join('/', prefix, routePath),
        name: (Reflect.getMetadata(OPERATION_NAME_KEY, handler) as string | undefined) ?? null,
        permission: (Reflect.getMetadata(PERMISSION_KEY, handler) as Permission | null | undefined) ?? null,
        isPublic: Reflect.getMetadata(PUBLIC_KEY, handler) === true,
        body: bodyDto(controller, member),
      },
    ];
  });
}

/** The DTO class of the method's `@Body()` (or, on a GET, `@Query()`) parameter, from its design-time parameter types. */
function bodyDto(controller: ClassType, member: string): ClassType | null {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, member) ?? {}) as Record<string, { index: number }>;
  const inputs = [String(RouteParamtypes.BODY), String(RouteParamtypes.QUERY)];
  const body = Object.entries(args).find(([key]) => inputs.includes(key.split(':')[0]));
  if (!body) return null;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype as object, member) ?? []) as unknown[];
  const dto = types[body[1].index];
  return typeof dto === 'function' && dto !== Object ? (dto as ClassType) : null;
}
