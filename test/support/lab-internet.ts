// Where this machine reaches the internet. A lab's resolver may answer every public name with one documentation
// address (203.0.113.80 here) where a relay listens; docent refuses documentation ranges (src/net/addresses.ts), so a
// test that needs the internet lists that relay as an operator would, in DOCENT_SANDBOX_EGRESS_ALLOW's form.
import { lookup } from 'node:dns/promises';
import { nonPublicReason } from '../../src/net/addresses';

/** `address:443` and `address:80` for each non-public answer for a public registry's name; none on a real network. */
export async function labInternetAllow(): Promise<string[]> {
  const answers = await lookup('registry.npmjs.org', { all: true }).catch(() => []);
  return answers.filter((a) => nonPublicReason(a.address) !== undefined).flatMap((a) => [a.family === 6 ? `[${a.address}]` : a.address].flatMap((h) => [`${h}:443`, `${h}:80`]));
}
