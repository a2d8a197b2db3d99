import { AppError } from '../../src/errors';
import { checkWithinOperator, operatorCeiling } from '../../src/tenancy/settings-levels';

// The rules of src/tenancy/settings-levels.ts that the e2e test (test/e2e/settings-levels.test.ts) does not reach:
// projects stored before the two levels, and allow-list patterns inside patterns.

const refusal = (run: () => void) => {
  try {
    run();
  } catch (err) {
    return err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
  }
  return undefined;
};

describe('the operator’s values of a project stored before the two levels', () => {
  it('never take an admin’s earlier loosening as the operator’s, and keep the caps the operator set', () => {
    const ceiling = operatorCeiling({ fairnessWeight: 100, sandboxNetwork: true, secretsForAgentCode: true, maxJobCostUsd: 5, sandboxAllowHosts: ['registry.npmjs.org'] });
    expect(ceiling).toEqual({
      fairnessWeight: 1,
      maxTurnTokens: null,
      maxTurnMinutes: null,
      maxJobCostUsd: 5,
      sandboxNetwork: false,
      sandboxAllowHosts: ['registry.npmjs.org'],
      secretsToChecks: false,
      secretsForAgentCode: false,
    });
    expect(operatorCeiling({ fairnessWeight: 0.5 }).fairnessWeight).toBe(0.5);
  });

  it('use what the operator recorded when there is a record', () => {
    expect(operatorCeiling({ fairnessWeight: 0.5, operatorSettings: { fairnessWeight: 4, maxJobCostUsd: null } })).toMatchObject({ fairnessWeight: 4, maxJobCostUsd: null });
  });
});

describe('allowed hosts inside the operator’s', () => {
  const ceiling = operatorCeiling({ operatorSettings: { sandboxAllowHosts: ['*.pypi.org', 'registry.npmjs.org'] } });
  const check = (hosts: string[]) => refusal(() => checkWithinOperator('project', ceiling, { sandboxAllowHosts: hosts }));

  it('a subdomain or a narrower pattern of a pattern is inside it; the bare domain, another host or any host is not', () => {
    expect(check(['files.pypi.org', '*.cdn.pypi.org', '*.pypi.org', 'registry.npmjs.org'])).toBeUndefined();
    expect(check(['pypi.org'])).toMatch(/^permission_denied: allowHosts/);
    expect(check(['*.npmjs.org'])).toMatch(/^permission_denied: allowHosts/);
    expect(check([])).toMatch(/^permission_denied: allowHosts .*registry\.npmjs\.org/);
  });

  it('the operator’s own key is never refused', () => {
    expect(refusal(() => checkWithinOperator('operator', ceiling, { sandboxAllowHosts: [], fairnessWeight: 100, sandboxNetwork: true }))).toBeUndefined();
  });
});
