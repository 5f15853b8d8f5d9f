import { ConfigError, loadConfig } from './config';

/** MONGODB_URL carries the database password (docker-compose.yml builds it from .env). */
describe('configuration errors and credentials', () => {
  it.each([
    // A "/" in a password that was not percent-encoded makes the URL unparseable.
    ['MONGODB_URL', 'mongodb://assay:s3cret/pass@mongodb:27017/assay?authSource=admin'],
    ['EVENTSTORE_URL', 'esdb://admin:s3cret/pass@eventstore:2113?tls=true'],
  ])('a malformed %s is refused without quoting it', (variable, value) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as ConfigError).message).not.toContain('s3cret');
  });
});
