import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppModule } from './app.module';
import { bootstrapInitialKey } from './bootstrap';
import type { AssayConfig } from './config';
import { sendError } from '#infrastructure/http/all-exceptions.filter';
import { configureFastify } from '#infrastructure/http/fastify-setup';
import { closeQuietConnectionsOnStop } from '#infrastructure/http/quiet-connections';
import { answerClientError } from '#infrastructure/http/protocol-errors';
import { holdAnswersUntilProjected } from '#infrastructure/http/read-your-writes';
import { serveViewer } from '#infrastructure/http/viewer-assets';
import { holdDataDirectory } from '#infrastructure/locks/data-directory-lock';
import { serveMetrics } from '#infrastructure/metrics/metrics-endpoint';
import { ServiceMetrics } from '#infrastructure/metrics/service-metrics';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { KeyRing, openKeyRing } from '#infrastructure/secrets/key-ring';
import { withMasterKey } from '#infrastructure/secrets/master-key';
import { claimTrialsRoot, TrialsRoot } from './trials-root';
import { planTrialExecution, TrialExecutionPlan } from '#modules/evals/orchestration/execution-host';
import { closeRuntime, openRuntime, Runtime, startProjections } from './runtime';

export interface RunningServer {
  app: NestFastifyApplication;
  runtime: Runtime;
  url: string;
  close(): Promise<void>;
}

/** Opens the stores, catches the read models up with the log, then serves the API. */
export async function startServer(config: AssayConfig, logger = new JsonLogger(config.logLevel)): Promise<RunningServer> {
  // Held until the server stops: `assay keys rotate-master` refuses to run beside it.
  const dataDirectory = holdDataDirectory(config.dataDir);
  let trialsRoot: TrialsRoot | null = null;
  try {
    trialsRoot = claimTrials(logger);
    return await serve(config, logger, trialsRoot, () => {
      trialsRoot?.close();
      dataDirectory.release();
    });
  } catch (error) {
    trialsRoot?.close();
    dataDirectory.release();
    throw error;
  }
}

/** This instance's trials directory, after removing what instances killed before left there. */
function claimTrials(logger: JsonLogger): TrialsRoot {
  const { root, removed } = claimTrialsRoot();
  if (removed.length > 0) logger.info('removed the trial directories of stopped server instances', { removed });
  return root;
}

async function serve(config: AssayConfig, logger: JsonLogger, trialsRoot: TrialsRoot, release: () => void): Promise<RunningServer> {
  // ASSAY_MASTER_KEY, else the data directory's key file (generated, mode 0600, on first start).
  const runtime = await openRuntime(withMasterKey(config, logger), logger);
  let app: NestFastifyApplication | null = null;
  try {
    await startProjections(runtime);
    await bootstrapInitialKey(runtime);
    // The process's one key ring: the application's handlers and the trial runner share it.
    const keyRing = openKeyRing(runtime);
    const execution = await planTrialExecution({ dataDir: runtime.config.dataDir, execution: runtime.config.execution, trialsRoot, keyRing, logger });
    app = await createApp(runtime, keyRing, execution);
    // Booting the application starts the trial saga, which recovers before the server listens.
    await app.listen(config.port, config.host);
  } catch (error) {
    // A start refused by its configuration leaves nothing open behind it.
    await app?.close();
    await closeRuntime(runtime);
    throw error;
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host}:${port}`;
  logger.info('Assay is serving', { url, dataDir: config.eventStoreUrl ? undefined : config.dataDir });

  let closing: Promise<void> | null = null;
  const running = app;
  const close = () => {
    closing ??= (async () => {
      // The HTTP server closes, then the saga stops (its shutdown hook), then the stores close.
      await running.close();
      await closeRuntime(runtime);
      release();
    })();
    return closing;
  };
  return { app, runtime, url, close };
}

async function createApp(runtime: Runtime, keyRing: KeyRing, execution: TrialExecutionPlan): Promise<NestFastifyApplication> {
  const { config, logger } = runtime;
  const adapter = new FastifyAdapter({
    bodyLimit: config.maxBodyBytes,
    logger: false,
    skipMiddie: true,
    // Protocol-level refusals answer in the spec's error shape too (see protocol-errors).
    clientErrorHandler: answerClientError,
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => sendError(logger, error, request, reply),
    http: { requireHostHeader: false },
  });
  // Off unless ASSAY_METRICS=1: then nothing is measured and /metrics does not exist.
  const metrics = config.metrics.enabled ? new ServiceMetrics(runtime.eventStore, runtime.projections) : null;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest declares its options as a class but only reads them as a plain object
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRuntime(runtime, keyRing, execution, metrics), adapter, {
    logger,
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  configureFastify(fastify, logger, config.maxBodyBytes);
  closeQuietConnectionsOnStop(fastify);
  if (metrics) serveMetrics(fastify, metrics, config.metrics.allow);
  holdAnswersUntilProjected(fastify, runtime.writes, runtime.projections, config.readYourWritesTimeoutMs, logger);
  await serveViewer(fastify, logger);
  return app;
}

/** Graceful shutdown: stop accepting, finish in-flight requests, close the stores. */
export function closeOnSignals(server: RunningServer, logger: JsonLogger): void {
  const shutdown = (signal: string) => {
    logger.info('shutting down', { signal });
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: error instanceof Error ? error.message : String(error) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
