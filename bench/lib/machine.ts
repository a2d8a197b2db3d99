// Facts about the machine and the stack a run measured, printed above its table.
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createEsClient } from '../../src/search/es-client';
import { MongoClient } from 'mongodb';
import type { Config } from '../../src/config';

const root = path.resolve(__dirname, '../../..');

async function packageVersion(name: string): Promise<string> {
  try {
    return (JSON.parse(await readFile(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'n/a';
  }
}

/** The command line of the running `temporal server start-dev`, to tell its persistence mode (SQLite file or memory). */
async function temporalPersistence(): Promise<string> {
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!argv.some((a) => a.endsWith('temporal')) || !argv.includes('start-dev')) continue;
    const i = argv.findIndex((a) => a === '--db-filename' || a === '-f');
    const inline = argv.find((a) => a.startsWith('--db-filename='));
    const file = i >= 0 ? argv[i + 1] : inline?.split('=')[1];
    return file ? `SQLite file (${file})` : 'in-memory SQLite (no --db-filename)';
  }
  return 'unknown (no local start-dev process found)';
}

export async function machineFacts(config: Config): Promise<Record<string, string>> {
  const cpus = os.cpus();
  const facts: Record<string, string> = {
    'date (UTC)': new Date().toISOString(),
    nproc: String(os.availableParallelism()),
    'CPU model': cpus[0]?.model ?? 'unknown',
    'load average (1/5/15 min) at start': os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' / '),
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    Node: process.version,
  };
  const pkgs = ['mongodb', '@temporalio/client', '@temporalio/worker', '@elastic/elasticsearch', '@connectrpc/connect-node', 'ai', '@ai-sdk/openai-compatible', 'typescript'];
  facts.packages = (await Promise.all(pkgs.map(async (p) => `${p} ${await packageVersion(p)}`))).join(', ');
  facts['Temporal dev server persistence'] = await temporalPersistence();

  const mongo = new MongoClient(config.mongo.url, { serverSelectionTimeoutMS: 2000 });
  try {
    const info = (await mongo.db('admin').command({ buildInfo: 1 })) as { version?: string; ferretdbVersion?: string; ferretdb?: { version?: string } };
    // FerretDB built from the module proxy reports its version as "unknown"; infra/stack.sh pins it.
    const server = info.ferretdbVersion
      ? `FerretDB ${info.ferretdbVersion === 'unknown' ? 'v1.24.2 (pinned by infra/stack.sh; the build reports "unknown")' : info.ferretdbVersion}, SQLite backend, MongoDB wire version ${info.version}`
      : `MongoDB ${info.version}`;
    let serverDefault = 'not reported (getDefaultRWConcern unsupported)';
    try {
      const rw = (await mongo.db('admin').command({ getDefaultRWConcern: 1 })) as { defaultWriteConcern?: unknown };
      serverDefault = JSON.stringify(rw.defaultWriteConcern ?? {});
    } catch {
      // FerretDB 1.x does not implement it
    }
    facts['MongoDB server'] = server;
    facts['MongoDB write concern'] =
      `client: ${JSON.stringify(mongo.options.writeConcern ?? {}) === '{}' ? 'driver default (none set: server default, w:1 on a standalone)' : JSON.stringify(mongo.options.writeConcern)}; server default: ${serverDefault}`;
  } catch (err) {
    facts['MongoDB server'] = `unreachable: ${(err as Error).message}`;
  } finally {
    await mongo.close();
  }

  const es = createEsClient(config.elasticsearch);
  try {
    // Not es.info(): the local node built from the integ-test distribution answers GET / with 405.
    const nodes = await es.nodes.info({ metric: ['jvm'] });
    const list = Object.values(nodes.nodes);
    const heaps = list.map((n) => `${((n.jvm?.mem?.heap_max_in_bytes ?? 0) / 2 ** 30).toFixed(2)} GiB`);
    facts.Elasticsearch = `${list[0]?.version ?? '?'}, ${list.length} node(s), JVM heap max ${heaps.join(', ')}`;
  } catch (err) {
    facts.Elasticsearch = `unreachable: ${(err as Error).message}`;
  } finally {
    await es.close();
  }
  return facts;
}
