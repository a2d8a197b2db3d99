// How a setting is declared: once, with its variable, type, default and description. The loader, the Config type and
// the settings reference (docs/configuration.md) are all derived from the declarations in src/config/settings.ts.
import type { z } from 'zod';

export interface Setting<S extends z.ZodType = z.ZodType> {
  readonly kind: 'setting';
  /** The environment variable. */
  readonly name: string;
  /** Its type and default; the parsed value is what the declaration tree holds. */
  readonly schema: S;
  /** One sentence for the reference: what it does, in the reader's terms. */
  readonly doc: string;
  /** A credential: never printed, logged or echoed in an error. */
  readonly secret: boolean;
  /** The default as the reference shows it, where the value is computed (a path in the home folder, say). */
  readonly shownDefault?: string;
}

export function setting<S extends z.ZodType>(name: string, schema: S, doc: string, opts: { secret?: boolean; shownDefault?: string } = {}): Setting<S> {
  return { kind: 'setting', name, schema, doc, secret: opts.secret ?? false, ...(opts.shownDefault !== undefined ? { shownDefault: opts.shownDefault } : {}) };
}

/** A group of settings, nested as the values they produce are. */
export interface Declarations {
  readonly [key: string]: Setting | Declarations;
}

/** The parsed values of a declaration tree, in its shape. */
export type Values<T extends Declarations> = { -readonly [K in keyof T]: T[K] extends Setting<infer S> ? z.output<S> : T[K] extends Declarations ? Values<T[K]> : never };

const isSetting = (d: Setting | Declarations): d is Setting => (d as Setting).kind === 'setting';

/** Every setting of a tree, in declaration order, with where its value goes. */
export function listSettings(tree: Declarations, at: string[] = []): Array<{ path: string[]; setting: Setting }> {
  return Object.entries(tree).flatMap(([key, d]) => (isSetting(d) ? [{ path: [...at, key], setting: d }] : listSettings(d, [...at, key])));
}

/** Thrown when a setting is missing or malformed; the message names every bad setting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses every declared setting from the environment (empty counts as unset, as docker compose passes `${X:-}`). */
export function readSettings<T extends Declarations>(tree: T, env: NodeJS.ProcessEnv): Values<T> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const { path, setting: s } of listSettings(tree)) {
    const raw = env[s.name];
    const parsed = s.schema.safeParse(raw === '' ? undefined : raw);
    // Messages come from the schemas and never quote the value, so a secret's text stays out of them.
    if (!parsed.success) problems.push(`${s.name}: ${parsed.error.issues.map((i) => i.message).join(', ')}`);
    else placeAt(out, path, parsed.data);
  }
  if (problems.length) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  return out as Values<T>;
}

function placeAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[path.at(-1)!] = value;
}
