import { Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { ApiReferenceController } from './api-reference.controller';
import { serveReferenceAssets } from './reference-page';

/** GET /v1/openapi.json and the reference page at GET /docs. */
@Module({ controllers: [ApiReferenceController] })
export class ApiReferenceModule implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    serveReferenceAssets(this.adapterHost.httpAdapter.getInstance<FastifyInstance>());
  }
}
