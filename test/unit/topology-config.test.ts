import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config';
import { temporalConnectionOptions } from '../../src/temporal/connection';

const key = () => randomBytes(32).toString('base64');
const messageOf = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('settings for a production topology', () => {
  it('reads several Elasticsearch nodes and the index replicas', () => {
    const c = loadConfig({ DOCENT_ES_URL: 'http://es1:9200, http://es2:9200,http://es3:9200', DOCENT_ES_REPLICAS: '1' });
    expect(c.elasticsearch).toMatchObject({ nodes: ['http://es1:9200', 'http://es2:9200', 'http://es3:9200'], replicas: 1 });
    expect(messageOf({ DOCENT_ES_URL: 'http://es1:9200,es2' })).toContain('DOCENT_ES_URL');
  });

  it('reads MongoDB read and write concerns', () => {
    expect(loadConfig({ DOCENT_MONGO_READ_CONCERN: 'majority', DOCENT_MONGO_WRITE_CONCERN: 'majority' }).mongo).toMatchObject({ readConcern: 'majority', writeConcern: 'majority' });
    expect(loadConfig({ DOCENT_MONGO_WRITE_CONCERN: '2' }).mongo.writeConcern).toBe(2);
    expect(loadConfig({}).mongo).toMatchObject({ readConcern: undefined, writeConcern: undefined });
    expect(messageOf({ DOCENT_MONGO_READ_CONCERN: 'strong' })).toContain('DOCENT_MONGO_READ_CONCERN');
  });

  it('encrypts with the first payload key and decrypts with all of them', () => {
    const c = loadConfig({ DOCENT_PAYLOAD_KEYS: `new:${key()},old:${key()}` });
    expect(c.temporal.payloadKeys?.encryptWith).toBe('new');
    expect([...c.temporal.payloadKeys!.keys.keys()]).toEqual(['new', 'old']);
  });

  it('refuses a malformed payload key without printing the key', () => {
    const short = randomBytes(16).toString('base64');
    const message = messageOf({ DOCENT_PAYLOAD_KEYS: `k1:${key()},k2:${short}` });
    expect(message).toContain('DOCENT_PAYLOAD_KEYS');
    expect(message).toContain('entry 2');
    expect(message).not.toContain(short);
    expect(messageOf({ DOCENT_PAYLOAD_KEYS: `a:${key()},a:${key()}` })).toContain('appears twice');
  });

  it('needs payload keys for the codec endpoint, and both halves of a client certificate', () => {
    expect(messageOf({ DOCENT_CODEC_TOKEN: 'x'.repeat(32) })).toContain('DOCENT_PAYLOAD_KEYS');
    expect(messageOf({ DOCENT_TEMPORAL_TLS_CERT: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n' })).toContain('DOCENT_TEMPORAL_TLS_KEY');
    expect(messageOf({ DOCENT_TEMPORAL_TLS_CA: '/no/such/ca.pem' })).toContain('DOCENT_TEMPORAL_TLS_CA: cannot read the file /no/such/ca.pem');
  });

  it('connects in clear by default, and over TLS once an API key or a CA is set', () => {
    expect(temporalConnectionOptions(loadConfig({}).temporal)).toEqual({ address: '127.0.0.1:7233' });
    expect(temporalConnectionOptions(loadConfig({ DOCENT_TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', DOCENT_TEMPORAL_API_KEY: 'k' }).temporal)).toEqual({
      address: 'ns.acct.tmprl.cloud:7233',
      tls: {},
      apiKey: 'k',
    });
    const pem = '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n';
    expect(temporalConnectionOptions(loadConfig({ DOCENT_TEMPORAL_TLS_CA: pem }).temporal).tls).toEqual({ serverRootCACertificate: Buffer.from(pem) });
    expect(temporalConnectionOptions(loadConfig({ DOCENT_TEMPORAL_API_KEY: 'k', DOCENT_TEMPORAL_TLS: 'off' }).temporal)).toEqual({ address: '127.0.0.1:7233', apiKey: 'k' });
  });
});
