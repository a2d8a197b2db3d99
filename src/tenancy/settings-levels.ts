// Two levels of project settings (docs/decisions/2026-12-02-project-settings-levels.md): what affects other projects
// or widens what the agent may do is the operator's; a project admin may tighten it, never loosen it past the operator.
import { AppError } from '../errors';
import { hostMatches } from '../sandbox/egress/allow-rules';

/** Who changes a project's settings: an operator key (or the CLI on the database), or the project's own admin key. */
export type SettingsLevel = 'operator' | 'project';

/**
 * The operator's settings as stored in `operatorSettings` (src/tenancy/store.ts), beside the values in force. `null`
 * is "none": no cap; `[]` is any public host.
 */
export interface OperatorSettings {
  fairnessWeight?: number;
  maxTurnTokens?: number | null;
  maxTurnMinutes?: number | null;
  maxJobCostUsd?: number | null;
  sandboxNetwork?: boolean;
  sandboxAllowHosts?: string[];
  secretsToChecks?: boolean;
  secretsForAgentCode?: boolean;
}

export type OperatorSetting = keyof OperatorSettings;

/** The values in force, as a project document holds them (absent: the default). */
export type InForce = Partial<Record<OperatorSetting, unknown>>;

type Value = number | null | boolean | string[];

interface Rule {
  /** The request's name for the setting, as a refusal names it. */
  named: string;
  /** The value in force when the project has none. */
  fallback: Value;
  /** Whether `value` is no wider than `ceiling`. */
  within: (value: Value, ceiling: Value) => boolean;
}

const cap = (named: string): Rule => ({
  named,
  fallback: null,
  within: (v, c) => c === null || (v !== null && (v as number) <= (c as number)),
});
const off = (named: string): Rule => ({ named, fallback: false, within: (v, c) => v === false || c === true });

/** A `*.domain` pattern is inside another when its domain is the other's or one of its subdomains. */
function hostCovered(ceiling: readonly string[], host: string): boolean {
  if (!host.startsWith('*.')) return hostMatches(ceiling, host);
  return ceiling.includes(host) || ceiling.some((c) => c.startsWith('*.') && hostMatches([c], host.slice(2)));
}

const rules: Record<OperatorSetting, Rule> = {
  fairnessWeight: { named: 'fairnessWeight', fallback: 1, within: (v, c) => (v as number) <= (c as number) },
  maxTurnTokens: cap('caps.maxTurnTokens'),
  maxTurnMinutes: cap('caps.maxTurnMinutes'),
  maxJobCostUsd: cap('caps.maxJobCostUsd'),
  sandboxNetwork: off('network'),
  // An empty list is any public host: the widest; a list is narrower when each of its hosts is inside the ceiling's.
  sandboxAllowHosts: {
    named: 'allowHosts',
    fallback: [],
    within: (v, c) => (c as string[]).length === 0 || ((v as string[]).length > 0 && (v as string[]).every((h) => hostCovered(c as string[], h))),
  },
  secretsToChecks: off('secretsToChecks'),
  secretsForAgentCode: off('secretsForAgentCode'),
};

export const operatorSettingNames = Object.keys(rules) as OperatorSetting[];

const shown = (v: Value) => (v === null ? 'no cap' : Array.isArray(v) ? (v.length ? v.join(', ') : 'any public host') : String(v));

const inForce = (p: InForce, k: OperatorSetting): Value => (p[k] === undefined ? rules[k].fallback : (p[k] as Value));

/**
 * The operator's value of each setting. One the operator never set (projects from before the two levels) is the
 * tighter of the default and the value in force, so an admin's earlier loosening is never taken as the operator's.
 */
export function operatorCeiling(p: InForce & { operatorSettings?: OperatorSettings }): Required<OperatorSettings> {
  const out: Record<string, Value> = {};
  for (const k of operatorSettingNames) {
    const recorded = p.operatorSettings?.[k];
    if (recorded !== undefined) out[k] = recorded;
    else {
      const current = inForce(p, k);
      out[k] = rules[k].within(current, rules[k].fallback) ? current : rules[k].fallback;
    }
  }
  return out as Required<OperatorSettings>;
}

/**
 * The one check every door that changes a project's settings goes through (the store's update calls it): a project
 * admin's value wider than the operator's is 403, naming the setting. `wanted` holds the settings the request changes.
 */
export function checkWithinOperator(level: SettingsLevel, ceiling: Required<OperatorSettings>, wanted: Partial<Record<OperatorSetting, Value>>): void {
  if (level === 'operator') return;
  for (const [k, v] of Object.entries(wanted) as Array<[OperatorSetting, Value]>) {
    const rule = rules[k];
    if (!rule.within(v, ceiling[k] as Value)) {
      throw new AppError(
        'permission_denied',
        `${rule.named} is the operator's setting: a project admin key may tighten it, not loosen it past the operator's value (${shown(ceiling[k] as Value)}); ask the operator`,
      );
    }
  }
}
