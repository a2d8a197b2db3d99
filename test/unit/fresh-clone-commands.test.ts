// The project's own commands on a checkout that has never been built (issue 56): `npm run lint` checked the settings
// page from dist/, which a fresh clone lacks, and a build from an empty dist/ left `npx docent` without its run bit.
import { execFile } from 'node:child_process';
import { appendFile, cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = path.resolve(__dirname, '../..');

async function runIn(dir: string, file: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: dir, timeout: 60_000 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** A checkout as `git clone` leaves it, with the installed packages: no dist/. */
async function freshCheckout(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'docent-fresh-'));
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.settings-check.json', 'src', 'infra', 'docs/configuration.md']) {
    await cp(path.join(repo, file), path.join(dir, file), { recursive: true, filter: (source) => source !== path.join(repo, 'src/gen') });
  }
  await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

const scripts = async (): Promise<Record<string, string>> => JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8')).scripts;

describe('on a fresh clone', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await freshCheckout();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('npm run lint checks the settings page without a build: clean passes, a stale page fails and says what to run', async () => {
    expect(await scripts()).toHaveProperty('lint', expect.stringContaining('npm run lint:settings'));
    const clean = await runIn(dir, 'npm', ['run', '--silent', 'lint:settings']);
    expect(clean).toMatchObject({ code: 0 });

    await appendFile(path.join(dir, 'docs/configuration.md'), '| `DOCENT_NOT_A_SETTING` | unset | edited by hand |\n');
    const stale = await runIn(dir, 'npm', ['run', '--silent', 'lint:settings']);
    expect(stale.code).not.toBe(0);
    expect(stale.output).toContain('docs/configuration.md is stale: run `npm run settings:reference`');
    expect(stale.output).not.toMatch(/Cannot find module|at Module\._/);
  });

  it('a build from an empty dist/ leaves the package bin runnable', async () => {
    const { bin } = JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    const cli = bin.docent!;
    // The real build step on a stand-in CLI: the mode comes from the step, not from what the CLI imports.
    await mkdir(path.join(dir, path.dirname(cli).replace(/^dist\//, '')), { recursive: true });
    await writeFile(path.join(dir, cli.replace(/^dist\//, '').replace(/\.js$/, '.ts')), "#!/usr/bin/env node\nconsole.log('usage: docent <command>');\n");
    await writeFile(
      path.join(dir, 'tsconfig.cli-only.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { types: ['node'], noEmit: false }, files: [cli.replace(/^dist\//, '').replace(/\.js$/, '.ts')], include: [] }),
    );
    expect(await runIn(dir, 'bash', ['infra/compile.sh', 'tsconfig.cli-only.json'])).toMatchObject({ code: 0 });
    // Run as `npx docent` runs it: the file itself, through its #! line.
    expect(await runIn(dir, path.join(dir, cli), ['--help'])).toEqual({ code: 0, output: 'usage: docent <command>\n' });
  });

  it('every command that compiles src/ into dist/ builds through the step that sets the bin mode', async () => {
    const commands = [...Object.values(await scripts())];
    for (const file of await readdir(path.join(repo, 'infra'))) if (file.endsWith('.sh') && file !== 'compile.sh') commands.push(await readFile(path.join(repo, 'infra', file), 'utf8'));
    const emitting: string[] = [];
    for (const command of commands) {
      for (const [, config] of command.matchAll(/\btsc -p (\S+)/g)) {
        const options = JSON.parse(await readFile(path.join(repo, config!), 'utf8'));
        const emitsSrc = options.compilerOptions?.noEmit !== true && !options.files && (options.include ?? []).includes('src') && !command.includes(`tsc -p ${config} --noEmit`);
        if (emitsSrc) emitting.push(config!);
      }
    }
    expect(emitting).toEqual([]);
  });
});
