import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { freePort, ROOT, startInProcess } from '../support/servers';

const run = promisify(execFile);

/**
 * Docker cannot run here, so the deployment files are checked as data: what `docker compose`
 * would do with them must keep the databases private, the credentials out of the repository
 * and the service unprivileged and probed. The probe scripts themselves run against a server.
 */
interface Service {
  image?: string;
  user?: string;
  restart?: string;
  ports?: string[];
  networks?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const servicesOf = (file: string): Record<string, Service> => (parse(read(file)) as { services: Record<string, Service> }).services;
const compose = servicesOf('docker-compose.yml');
const contract = servicesOf('docker-compose.contract.yml');
const DATABASES = ['eventstore', 'mongodb'];
/** A service of a compose file, if that file defines it: not every file defines every database. */
const serviceNamed = (services: Record<string, Service>, name: string): Service | undefined => services[name];

/** `[HOST:]HOST_PORT:CONTAINER_PORT`: the host address a published port binds, 0.0.0.0 when none. */
function hostAddress(port: string): string {
  const parts = port.split(':');
  return parts.length === 3 ? parts[0] : '0.0.0.0';
}

/** Only a whole `${NAME}` or `${NAME:?message}` reference: no literal and no fallback value. */
const FROM_ENV_FILE = /^\$\{[A-Z0-9_]+(:\?[^}]*)?\}$/;

/** The final stage's HEALTHCHECK command of the Dockerfile, as its exec-form array. */
function dockerfileHealthcheck(dockerfile: string): string[] {
  const joined = dockerfile.replace(/\\\n\s*/g, ' ');
  const line = joined.split('\n').find((text) => text.startsWith('HEALTHCHECK'));
  const command = line ? /CMD (\[.*\])\s*$/.exec(line) : null;
  if (!command) throw new Error('The Dockerfile has no exec-form HEALTHCHECK.');
  return ['CMD', ...(JSON.parse(command[1]) as string[])];
}

describe('docker-compose.yml and the Dockerfile', () => {
  it('gives every service a healthcheck and a restart policy', () => {
    for (const [name, service] of Object.entries(compose)) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- parsed YAML: a healthcheck may come without a test
      expect([name, service.healthcheck?.test?.length ?? 0]).not.toEqual([name, 0]);
      expect([name, service.restart]).toEqual([name, 'unless-stopped']);
    }
  });

  it('starts the service only once both databases are healthy', () => {
    expect(compose.assay.depends_on).toEqual({ eventstore: { condition: 'service_healthy' }, mongodb: { condition: 'service_healthy' } });
  });

  it('publishes no database port beyond 127.0.0.1, in either compose file', () => {
    for (const services of [compose, contract]) {
      for (const name of DATABASES) {
        for (const port of serviceNamed(services, name)?.ports ?? []) expect([name, hostAddress(port)]).toEqual([name, '127.0.0.1']);
      }
    }
    expect(DATABASES.map((name) => compose[name].ports ?? [])).toEqual([[], []]);
  });

  it('keeps the databases on an internal network that only the service joins', () => {
    const networks = (parse(read('docker-compose.yml')) as { networks: Record<string, { internal?: boolean }> }).networks;
    expect(networks.stores.internal).toBe(true);
    for (const name of DATABASES) expect(compose[name].networks).toEqual(['stores']);
    expect(compose.assay.networks).toContain('stores');
  });

  it('takes every credential from the .env file, never a literal', () => {
    const mongo = compose.mongodb.environment!;
    expect(mongo.MONGO_INITDB_ROOT_USERNAME).toMatch(FROM_ENV_FILE);
    expect(mongo.MONGO_INITDB_ROOT_PASSWORD).toMatch(FROM_ENV_FILE);
    expect(compose.assay.environment!.ASSAY_MASTER_KEY).toMatch(FROM_ENV_FILE);
    const mongoUrl = new URL(compose.assay.environment!.MONGODB_URL.replace(/\$\{[^}]*\}/g, (ref) => `X${ref.length}`));
    expect(mongoUrl.searchParams.get('authSource')).toBe('admin');
    const [user, password] = /^mongodb:\/\/(\$\{[^}]*\}|[^:@]*):(\$\{[^}]*\}|[^@]*)@/.exec(compose.assay.environment!.MONGODB_URL)!.slice(1);
    expect([user, password]).toEqual([expect.stringMatching(FROM_ENV_FILE), expect.stringMatching(FROM_ENV_FILE)]);
    for (const service of Object.values(compose)) {
      for (const [variable, value] of Object.entries(service.environment ?? {})) {
        if (/PASSWORD|SECRET|TOKEN|_KEY$/.test(variable))
          expect([variable, value]).toEqual([variable, expect.stringMatching(/^\$\{[A-Z0-9_]+(:-|:\?[^}]*)?\}$/)]);
      }
    }
  });

  it('commits .env.example with every variable compose reads, empty secrets, and ignores .env', () => {
    const example = read('.env.example');
    const referenced = new Set([...read('docker-compose.yml').matchAll(/\$\{([A-Z0-9_]+)/g)].map((match) => match[1]));
    for (const variable of referenced) expect([variable, example]).toEqual([variable, expect.stringMatching(new RegExp(`^${variable}=`, 'm'))]);
    for (const secret of ['MONGO_ROOT_PASSWORD', 'ASSAY_MASTER_KEY', 'ASSAY_INIT_API_KEY']) expect(example).toMatch(new RegExp(`^${secret}=$`, 'm'));
    expect(read('.gitignore').split('\n')).toContain('.env');
    expect(read('.dockerignore').split('\n')).toContain('.env');
  });

  it('runs the service as the unprivileged node user, owner of the data directory', () => {
    expect(compose.assay.user).toBe('node');
    const dockerfile = read('Dockerfile');
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(finalStage).toMatch(/chown node:node \/var\/lib\/assay/);
    const users = [...finalStage.matchAll(/^USER (\S+)/gm)].map((match) => match[1]);
    expect(users).toEqual(['node']);
    expect(finalStage.indexOf('USER node')).toBeLessThan(finalStage.indexOf('CMD ["node", "dist/cli.js", "serve"]'));
  });

  describe('the service probes, run against a server', () => {
    const probes: Array<[string, string[]]> = [
      ['docker-compose.yml', compose.assay.healthcheck!.test],
      ['the Dockerfile', dockerfileHealthcheck(read('Dockerfile'))],
    ];

    it.each(probes)('%s: its healthcheck passes while the server lives and fails once it is gone', async (_file, test) => {
      expect(test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
      const probe = (port: string) =>
        run(process.execPath, ['-e', test[3]], { env: { PATH: process.env.PATH ?? '', PORT: port } }).then(
          () => 0,
          (error: unknown) => (error as { code: number }).code,
        );
      const server = await startInProcess();
      try {
        expect(await probe(new URL(server.url).port)).toBe(0);
      } finally {
        await server.close();
        fs.rmSync(server.dataDir, { recursive: true, force: true });
      }
      expect(await probe(String(await freePort()))).toBe(1);
    });
  });
});
