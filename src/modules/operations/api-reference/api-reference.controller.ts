import { Controller, Res } from '@nestjs/common';
import { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { declaredOperations } from '#infrastructure/http/openapi/nest-operations';
import { buildOpenApiDocument } from '#infrastructure/http/openapi/openapi-document';
import type { JsonSchema } from '#infrastructure/http/openapi/request-schemas';
import { PublicGet } from '#infrastructure/http/operation.decorator';
import { servedRoutes } from '#infrastructure/http/served-routes';
import { SHARED_SHAPES } from './responses/shared-shapes';
import { OPERATION_ANSWERS } from './operation-answers';
import { REFERENCE_PAGE } from './reference-page';
import { serviceVersion } from './service-version';

/**
 * The API document and the reference page rendered from it. Both are public: the document
 * describes the API, which is no secret, and holds nothing of any organization.
 */
@Controller()
export class ApiReferenceController {
  private document: JsonSchema | null = null;

  constructor(
    private readonly modules: ModulesContainer,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** Built on first request, once every route is registered; the routes never change after. */
  @PublicGet('/v1/openapi.json')
  openapi(): JsonSchema {
    this.document ??= buildOpenApiDocument({
      version: serviceVersion(),
      served: servedRoutes(this.adapterHost.httpAdapter.getInstance<FastifyInstance>()),
      declared: declaredOperations(this.modules),
      answers: OPERATION_ANSWERS,
      shapes: SHARED_SHAPES,
    });
    return this.document;
  }

  @PublicGet('/docs')
  page(@Res() reply: FastifyReply): void {
    void reply.header('content-type', 'text/html; charset=utf-8').send(REFERENCE_PAGE);
  }
}
