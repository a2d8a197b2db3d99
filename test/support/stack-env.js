// Jest setup file: the local stack's credentials, from the same place `npm start` takes them (`infra/stack.sh env`),
// for whatever the test environment does not set itself. Spawned workers and CLIs inherit them with process.env.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const lines = execFileSync('bash', [path.join(__dirname, '../../infra/stack.sh'), 'env'], { encoding: 'utf8', env: process.env });
for (const line of lines.split('\n').filter(Boolean)) {
  const at = line.indexOf('=');
  const name = line.slice(0, at);
  if (!process.env[name]) process.env[name] = line.slice(at + 1);
}
