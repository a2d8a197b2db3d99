// The one error the sandbox throws on its own account, with the fix an operator most likely needs.

/** bwrap could not start a sandbox at all (missing, not permitted, or a bind source it cannot reach). */
export class SandboxUnavailable extends Error {
  override name = 'SandboxUnavailable';
}

const INSTALL = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or pass bwrapPath';
const USERNS =
  'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0; ' +
  'on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap); ' +
  'in Docker, a seccomp profile that allows unshare/clone of user namespaces (and no AppArmor profile that denies mount), ' +
  'since the default profile blocks them';
const SETPRIV = 'install util-linux (it provides setpriv and prlimit), or leave runAs unset when not running as root';
const SOCAT = "install socat (Debian/Ubuntu: apt-get install socat): it relays the sandbox's loopback proxy port to the egress proxy";
const REACH =
  'every parent directory of workspace, home and readOnlyPaths must be searchable (mode o+x, e.g. 0711) by the uid bwrap runs as, ' + 'and workspace/home must be owned by or writable for it';

/** The likely fix for what bwrap (or spawning it) reported. */
export function fixFor(detail: string): string {
  if (/Can't find source path|Can't mount|Can't open|Can't create file/i.test(detail)) return REACH;
  if (/spawn setpriv ENOENT/.test(detail)) return SETPRIV;
  if (/^socat: not found/.test(detail)) return SOCAT;
  if (/ENOENT|No such file or directory|not found/i.test(detail)) return INSTALL;
  if (/namespace|uid map|Operation not permitted|clone|unshare/i.test(detail)) return USERNS;
  return `${INSTALL}; ${USERNS}; ${REACH}`;
}

export function unavailable(what: string, detail: string): SandboxUnavailable {
  const said = detail.trim() || '(no output)';
  return new SandboxUnavailable(`sandbox unavailable: ${what}: ${said}. Likely fix: ${fixFor(said)}.`);
}
