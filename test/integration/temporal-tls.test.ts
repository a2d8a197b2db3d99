import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runWorkerSelfCheck } from '../../src/cli/self-check';
import type { Config } from '../../src/config';
import { testConfig } from '../support/config';
import { startWorker } from '../support/docs';
import { startGateway } from '../support/gateway';
import { makeTestPki, startTlsFrontend, type TestPki, type TlsFrontend } from '../support/tls-frontend';

// The Temporal dev server has no TLS options, so a TLS frontend made for the test (mTLS, or TLS with an API key check)
// stands in front of it, as Temporal Cloud or an ingress would; the gateway's and the worker's connections are real.

const plainTemporal = testConfig().temporal.address;
let dir: string;
let pki: TestPki;
let mtls: TlsFrontend;
let apiKeyed: TlsFrontend;
const apiKey = 'temporal-cloud-api-key-for-tests-0123';

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'docent-tls-'));
  pki = await makeTestPki(dir);
  mtls = await startTlsFrontend({ pki, upstream: plainTemporal, requireClientCert: true });
  apiKeyed = await startTlsFrontend({ pki, upstream: plainTemporal, requireClientCert: false, apiKey });
});
afterAll(async () => {
  await Promise.all([mtls?.close(), apiKeyed?.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** A worker and the gateway on `settings`; the worker answers the CLI's self-check workflow through the same frontend. */
async function gatewayAndWorker(settings: Record<string, string>): Promise<{ config: Config; ready: unknown; check: Awaited<ReturnType<typeof runWorkerSelfCheck>> }> {
  const gw = await startGateway(settings);
  try {
    const worker = await startWorker(gw.deps.config);
    try {
      const ready = await (await fetch(`${gw.url}/readyz`)).json();
      return { config: gw.deps.config, ready, check: await runWorkerSelfCheck(gw.deps.config) };
    } finally {
      await worker.stop();
    }
  } finally {
    await gw.stop();
  }
}

describe('Temporal over TLS', () => {
  it('gateway, worker and CLI connect with mTLS (client certificate, private CA, server name override)', async () => {
    const { config, ready, check } = await gatewayAndWorker({
      DOCENT_TEMPORAL_ADDRESS: mtls.address,
      DOCENT_TEMPORAL_TLS_CA: pki.ca,
      DOCENT_TEMPORAL_TLS_CERT: pki.clientCert,
      DOCENT_TEMPORAL_TLS_KEY: pki.clientKey,
      DOCENT_TEMPORAL_TLS_SERVER_NAME: pki.serverName,
    });
    expect(config.temporal.tls?.clientCertPair).toBeDefined();
    expect(ready).toMatchObject({ dependencies: { temporal: { ok: true } } });
    expect(check).toMatchObject({ mongodb: { ok: true }, elasticsearch: { ok: true } });
  });

  it('is refused without a client certificate, and when the server is not signed by the configured CA', async () => {
    const noClientCert = testConfig({ DOCENT_TEMPORAL_ADDRESS: mtls.address, DOCENT_TEMPORAL_TLS_CA: pki.ca, DOCENT_TEMPORAL_TLS_SERVER_NAME: pki.serverName });
    const callsBefore = mtls.authorizations.length;
    const failuresBefore = mtls.handshakeFailures.length;
    await expect(runWorkerSelfCheck(noClientCert, 3_000)).rejects.toThrow(/Failed to connect before the deadline/);
    // Refused in the handshake, by the frontend, for the missing certificate.
    expect(mtls.handshakeFailures.slice(failuresBefore)).toContain('ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE');
    const failuresAfterFirst = mtls.handshakeFailures.length;
    const otherPki = await makeTestPki(await mkdtemp(path.join(dir, 'other-')));
    const untrusted = testConfig({
      DOCENT_TEMPORAL_ADDRESS: mtls.address,
      DOCENT_TEMPORAL_TLS_CA: otherPki.ca,
      DOCENT_TEMPORAL_TLS_CERT: pki.clientCert,
      DOCENT_TEMPORAL_TLS_KEY: pki.clientKey,
      DOCENT_TEMPORAL_TLS_SERVER_NAME: pki.serverName,
    });
    await expect(runWorkerSelfCheck(untrusted, 3_000)).rejects.toThrow(/Failed to connect before the deadline/);
    // The client hung up in the handshake, on seeing a certificate its CA did not sign; no call got through either time.
    expect(mtls.handshakeFailures.slice(failuresAfterFirst)).toContain('ECONNRESET');
    expect(mtls.authorizations.length).toBe(callsBefore);
  });

  it('connects with an API key over TLS, as to Temporal Cloud, and a wrong key is refused', async () => {
    const settings = { DOCENT_TEMPORAL_ADDRESS: apiKeyed.address, DOCENT_TEMPORAL_TLS_CA: pki.ca, DOCENT_TEMPORAL_TLS_SERVER_NAME: pki.serverName };
    const { ready, check } = await gatewayAndWorker({ ...settings, DOCENT_TEMPORAL_API_KEY: apiKey });
    expect(ready).toMatchObject({ dependencies: { temporal: { ok: true } } });
    expect(check.mongodb.ok).toBe(true);
    expect(apiKeyed.authorizations.length).toBeGreaterThan(0);
    expect(new Set(apiKeyed.authorizations)).toEqual(new Set([`Bearer ${apiKey}`]));
    await expect(runWorkerSelfCheck(testConfig({ ...settings, DOCENT_TEMPORAL_API_KEY: 'not-the-key' }), 3_000)).rejects.toThrow(/Failed to connect/);
    // Refused by the key check: the TLS handshake went through and the frontend saw the wrong key.
    expect(apiKeyed.authorizations).toContain('Bearer not-the-key');
  });
});
