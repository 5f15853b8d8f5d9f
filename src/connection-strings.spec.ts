import { EventStoreDBClient } from '@eventstore/db-client';
import { MongoClient } from 'mongodb';
import { ConfigError, loadConfig } from './config';

const PASSWORD = 'pa55-w0rd-never-printed';

function refusal(variable: string, value: string): ConfigError {
  try {
    loadConfig({ [variable]: value });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected ${variable}=${value} to be refused`);
}

describe('EVENTSTORE_URL forms', () => {
  const accepted = [
    'esdb://localhost:2113?tls=false',
    'esdb://localhost',
    'esdb://localhost:2113/',
    'esdb+discover://cluster.example.com:2113',
    'esdb://a:2113,b:2113,c:2113',
    'esdb://a:2113,b:2113,c:2113?tls=false&nodePreference=leader',
    'esdb://a,b,c?nodePreference=read_only_replica&keepAliveInterval=-1',
    `esdb://admin:${PASSWORD}@a:2113,b:2113?tls=true&tlsCAFile=${encodeURIComponent(__filename)}`,
    'esdb://localhost:2113?TLS=false&Default-Deadline=5000&connectionName=assay&throwOnAppendFailure=true',
    'esdb://localhost:2113?maxDiscoverAttempts=5&discoveryInterval=100&gossipTimeout=5&keepAliveTimeout=10000',
  ];

  it.each(accepted)('accepts %s, as the client does', (value) => {
    expect(loadConfig({ EVENTSTORE_URL: value }).eventStoreUrl).toBe(value);
    // The client parses at once and connects lazily: a bad string throws here.
    expect(() => EventStoreDBClient.connectionString(value)).not.toThrow();
  });

  it.each([
    ['eventstoredb://localhost:2113', 'esdb://'],
    ['http://localhost:2113', 'esdb://'],
    ['esdb://', 'no host'],
    ['esdb://a:2113,,b:2113', 'name:port'],
    ['esdb://a:21x3', 'port'],
    ['esdb://a:70000', 'port'],
    ['esdb://[::1]:2113', 'IPv6'],
    ['esdb://localhost:2113/assay', 'no path'],
    ['esdb://localhost:2113?tls=maybe', 'tls must be true or false'],
    ['esdb://localhost:2113?tls', 'key=value'],
    ['esdb://localhost:2113?gossipTimeout=soon', 'whole number'],
    ['esdb://localhost:2113?nodePreference=primary', 'nodePreference'],
    ['esdb://localhost:2113?tlsVerifyCert=false', 'tlsCAFile'],
    ['esdb://localhost:2113?userCertFile=a.crt', 'together'],
    ['esdb://localhost:2113?replicaSet=rs0', 'not an option'],
    // The client knows it in this one spelling only, and prints the whole string for any other.
    ['esdb+discover://cluster.example.com:2113?dnsDiscover=true', 'esdb+discover://'],
    ['esdb://localhost:2113?dnsdiscover=true', 'esdb+discover://'],
  ])('refuses %s, saying %s', (value, says) => {
    const error = refusal('EVENTSTORE_URL', value);
    expect(error.variable).toBe('EVENTSTORE_URL');
    expect(error.message).toContain(says);
  });

  it('never repeats a refused value, which may hold a password', () => {
    const error = refusal('EVENTSTORE_URL', `esdb://admin:${PASSWORD}@a:2113,b:x`);
    expect(error.message).not.toContain(PASSWORD);
  });

  it('accepts nothing the client would warn about: its warnings print the whole string, password included', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      for (const value of accepted) EventStoreDBClient.connectionString(value);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});

describe('MONGODB_URL forms', () => {
  const accepted = [
    'mongodb://localhost:27017/assay',
    'mongodb://localhost',
    `mongodb://assay:${PASSWORD}@a:27017,b:27017,c:27017/assay?replicaSet=rs0&authSource=admin`,
    'mongodb://[::1]:27017/assay',
    'mongodb+srv://cluster0.example.net/assay?retryWrites=true&w=majority',
  ];

  it.each(accepted)('accepts %s, as the driver does', (value) => {
    expect(loadConfig({ MONGODB_URL: value }).mongodbUrl).toBe(value);
    // Constructing a client parses the string without connecting (srv is resolved only on connect).
    expect(() => new MongoClient(value)).not.toThrow();
  });

  it.each([
    ['postgres://localhost/assay', 'mongodb://'],
    ['not a url', 'mongodb://'],
    ['mongodb://', 'no host'],
    ['mongodb://a:27017,b:bad', 'port'],
    ['mongodb+srv://a.example.net,b.example.net', 'exactly one host'],
    ['mongodb+srv://a.example.net:27017', 'no port'],
    ['mongodb://localhost/assay.db', 'database name'],
    // The stores write journalled to a majority whatever the URL says; the driver would let this win.
    ['mongodb://localhost/assay?journal=false', 'journal'],
    ['mongodb://localhost/assay?replicaSet=rs0&J=false', 'journal'],
  ])('refuses %s, saying %s', (value, says) => {
    const error = refusal('MONGODB_URL', value);
    expect(error.variable).toBe('MONGODB_URL');
    expect(error.message).toContain(says);
  });
});
